/* Address and port syntax; it never resolves anything. */
#include "address.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>

#include "dnsname.h"
#include "number.h"

int port_parse(const char *text, int *port, struct errbuf *err)
{
    long value;
    size_t len = strlen(text);
    if (len == 0)
        return errbuf_set(err, "port is empty (expected a number 1..65535)");
    if (strspn(text, "0123456789") != len)
        return errbuf_set(err, "port is not a number (expected 1..65535)");
    /* Five digits at most, leading zeros included: "000080" is not how a port is written. */
    if (len > 5 || number_parse(text, len, 1, 65535, &value) < 0)
        return errbuf_set(err, "port out of range (expected 1..65535)");
    *port = (int)value;
    return 0;
}

int address_parse(const char *text, char host[ADDRESS_HOST_MAX_BYTES], int *port, struct errbuf *err)
{
    const char *colon;
    size_t host_len;
    const char *host_start = text;

    if (text[0] == '[') {
        const char *close = strchr(text, ']');
        if (!close || close[1] != ':')
            return errbuf_set(err, "bracketed IPv6 host must be followed by :port (expected [addr]:port)");
        host_start = text + 1;
        host_len = (size_t)(close - host_start);
        colon = close + 1;
    } else {
        colon = strrchr(text, ':');
        if (!colon)
            return errbuf_set(err, "missing :port (expected host:port)");
        if (memchr(text, ':', (size_t)(colon - text)))
            return errbuf_set(err, "an IPv6 host needs brackets (expected [addr]:port)");
        host_len = (size_t)(colon - text);
    }
    if (host_len > 0 && host_start[host_len - 1] == '.' && text[0] != '[')
        host_len--;
    if (host_len == 0)
        return errbuf_set(err, "host is empty (expected host:port)");
    if (host_len >= ADDRESS_HOST_MAX_BYTES)
        return errbuf_set(err, "host is longer than %d bytes", DNS_NAME_MAX_BYTES);
    memcpy(host, host_start, host_len);
    host[host_len] = '\0';
    if (text[0] == '[') {
        unsigned char addr[16];
        if (inet_pton(AF_INET6, host, addr) != 1)
            return errbuf_set(err, "'%s' is not an IPv6 address", host);
    } else if (!dnsname_valid(host, host_len)) {
        return errbuf_set(err, "'%s' is not a valid host name", host);
    }
    return port_parse(colon + 1, port, err);
}

int address_sockaddr(const char *addr, int port, struct sockaddr_storage *ss, socklen_t *len, struct errbuf *err)
{
    struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
    memset(ss, 0, sizeof(*ss));
    if (inet_pton(AF_INET, addr, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        *len = sizeof(*v4);
        return 0;
    }
    if (inet_pton(AF_INET6, addr, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        *len = sizeof(*v6);
        return 0;
    }
    return errbuf_set(err, "bad address %s", addr);
}
