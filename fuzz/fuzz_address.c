/* libFuzzer target: lib/net/address.c and lib/net/dnsname.c on any RAYBOOT_HEAD_ADDRESS, port or name.
 * What parses must be what the caller relies on: a host that is a valid DNS name or an IPv6
 * literal, a port in 1..65535; a valid label is a valid name. */
#include <arpa/inet.h>
#include <string.h>

#include "address.h"
#include "dnsname.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_strndup(data, size);
    char host[ADDRESS_HOST_MAX_BYTES];
    unsigned char in6[16];
    struct errbuf err;
    size_t len = strlen(text);
    int port = 0;

    if (address_parse(text, host, &port, &err) == 0) {
        size_t host_len = strnlen(host, sizeof(host));
        if (host_len == sizeof(host) || host_len == 0 || port < 1 || port > 65535)
            __builtin_trap();
        if (text[0] == '[' ? inet_pton(AF_INET6, host, in6) != 1 : !dnsname_valid(host, host_len))
            __builtin_trap();
    } else if (!fuzz_terminated(err.msg, sizeof(err.msg))) {
        __builtin_trap();
    }
    port = 0;
    if (port_parse(text, &port, &err) == 0 && (port < 1 || port > 65535 || len > 5))
        __builtin_trap();
    if (dnsname_label_valid(text, len) && (!dnsname_valid(text, len) || len > DNS_LABEL_MAX_BYTES))
        __builtin_trap();
    if (dnsname_valid(text, len) && (len > DNS_NAME_MAX_BYTES || text[0] == '.' || text[len - 1] == '.'))
        __builtin_trap();
    free(text);
    return 0;
}
