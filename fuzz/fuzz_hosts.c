/* libFuzzer target: lib/net/hosts.c on a kubelet-style /etc/hosts. Input: the pod's hostname on the
 * first line, the file after it. The FQDN found must be the hostname's (hostname + "." ...), fit
 * DNS_NAME_MAX_BYTES and hold no blank; the address must fit its buffer. */
#include <ctype.h>
#include <string.h>

#include "fuzz.h"
#include "hosts.h"

/* As plan.c sizes it: an address field that does not fit is not taken. */
#define FUZZ_ADDR_BYTES 64

static int has_blank(const char *s)
{
    for (; *s; s++) {
        if (isspace((unsigned char)*s) || *s == '#')
            return 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_strndup(data, size), *parts[2];
    char fqdn[DNS_NAME_MAX_BYTES + 1], addr[FUZZ_ADDR_BYTES];
    const char *hostname, *file;
    size_t n = fuzz_split(text, '\n', parts, 2);

    hostname = parts[0];
    file = n > 1 ? parts[1] : "";
    if (hosts_find_fqdn(file, hostname, fqdn) == 0) {
        size_t host_len = strlen(hostname), len = strnlen(fqdn, sizeof(fqdn));
        if (len == sizeof(fqdn) || len <= host_len || strncmp(fqdn, hostname, host_len) != 0 || fqdn[host_len] != '.' ||
            has_blank(fqdn))
            __builtin_trap();
    }
    if (hosts_lookup_addr(file, hostname, addr, sizeof(addr)) == 0) {
        if (!fuzz_terminated(addr, sizeof(addr)) || addr[0] == '\0' || has_blank(addr))
            __builtin_trap();
    }
    free(text);
    return 0;
}
