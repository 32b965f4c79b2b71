/* mbedTLS's entropy source: getrandom(2). deps/build.sh builds mbedTLS with
 * MBEDTLS_ENTROPY_HARDWARE_ALT and without its platform source, which on any libc but glibc (musl
 * here) reads /dev/urandom with fopen for every TLS connection, and adds this file to
 * libmbedcrypto.a. The sidecar's API reader (sidecar/kubeapi.c) is confined before it connects and
 * may open no file then. getrandom's blocking mode waits only until the kernel's pool was first
 * seeded, long before any pod runs. An mbedTLS built without that setting would read /dev/urandom
 * again and fail every handshake under the filter: tests/contract/test_sidecar.py's TLS reads
 * would say so. */
#include <errno.h>
#include <stddef.h>
#include <sys/random.h>

#include <mbedtls/entropy.h>

/* mbedTLS 3 declares it in a private header (library/entropy_poll.h), not in its installed ones. */
int mbedtls_hardware_poll(void *data, unsigned char *output, size_t len, size_t *olen);

int mbedtls_hardware_poll(void *data, unsigned char *output, size_t len, size_t *olen)
{
    size_t got = 0;
    (void)data;
    while (got < len) {
        ssize_t n = getrandom(output + got, len - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    *olen = got;
    return got == len ? 0 : MBEDTLS_ERR_ENTROPY_SOURCE_FAILED;
}
