/* Lookups in a kubelet-written /etc/hosts: the pod's own FQDN and address (for podview.c), and any
 * name's address (for dns.c, which looks here first, as a pod's resolver does). Asking the
 * nameservers is c-ares' job (lib/net/dns.c). */
#include "hosts.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "lines.h"

/* Copies the next whitespace-separated field of [*p, end) into a bounded view. */
static bool next_field(const char **p, const char *end, const char **field, size_t *len)
{
    while (*p < end && isspace((unsigned char)**p))
        (*p)++;
    if (*p >= end || **p == '#')
        return false;
    *field = *p;
    while (*p < end && !isspace((unsigned char)**p) && **p != '#')
        (*p)++;
    *len = (size_t)(*p - *field);
    return true;
}

static bool line_find_fqdn(const char *line, const char *end, const char *hostname, size_t host_len,
                           char fqdn[DNS_NAME_MAX_BYTES + 1])
{
    const char *p = line, *field;
    size_t len;
    bool names_host = false;
    const char *best = NULL;
    size_t best_len = 0;

    if (!next_field(&p, end, &field, &len)) /* the address */
        return false;
    while (next_field(&p, end, &field, &len)) {
        if (len == host_len && memcmp(field, hostname, len) == 0)
            names_host = true;
        else if (len > host_len + 1 && len <= DNS_NAME_MAX_BYTES && !best && memcmp(field, hostname, host_len) == 0 &&
                 field[host_len] == '.') {
            best = field;
            best_len = len;
        }
    }
    if (!best || !names_host)
        return false;
    memcpy(fqdn, best, best_len);
    fqdn[best_len] = '\0';
    if (best_len > 0 && fqdn[best_len - 1] == '.')
        fqdn[best_len - 1] = '\0';
    return true;
}

int hosts_find_fqdn(const char *text, const char *hostname, char fqdn[DNS_NAME_MAX_BYTES + 1])
{
    size_t host_len = strlen(hostname);
    const char *cursor = text, *line, *end;
    if (host_len == 0)
        return -1;
    while (lines_next(&cursor, &line, &end)) {
        if (line_find_fqdn(line, end, hostname, host_len, fqdn))
            return 0;
    }
    return -1;
}

/* 127.0.0.0/8, ::1, and 127/8 mapped into IPv6: an address that only ever reaches this host. */
static bool loopback(const char *addr, size_t len)
{
    char text[INET6_ADDRSTRLEN];
    struct in_addr v4;
    struct in6_addr v6;
    if (len >= sizeof(text))
        return false;
    memcpy(text, addr, len);
    text[len] = '\0';
    if (inet_pton(AF_INET, text, &v4) == 1)
        return (ntohl(v4.s_addr) >> 24) == 127;
    if (inet_pton(AF_INET6, text, &v6) != 1)
        return false;
    return IN6_IS_ADDR_LOOPBACK(&v6) || (IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127);
}

static bool line_lookup_addr(const char *line, const char *end, const char *name, size_t name_len, bool skip_loopback,
                             char *addr, size_t addr_cap)
{
    const char *p = line, *first, *field;
    size_t first_len, len;
    if (!next_field(&p, end, &first, &first_len))
        return false;
    if (skip_loopback && loopback(first, first_len))
        return false;
    while (next_field(&p, end, &field, &len)) {
        if (len > 0 && field[len - 1] == '.')
            len--;
        if (len == name_len && strncasecmp(field, name, len) == 0 && first_len < addr_cap) {
            memcpy(addr, first, first_len);
            addr[first_len] = '\0';
            return true;
        }
    }
    return false;
}

static int lookup_addr(const char *text, const char *name, bool skip_loopback, char *addr, size_t addr_cap)
{
    size_t name_len = strlen(name);
    const char *cursor = text, *line, *end;
    if (name_len > 0 && name[name_len - 1] == '.')
        name_len--;
    if (name_len == 0)
        return -1;
    while (lines_next(&cursor, &line, &end)) {
        if (line_lookup_addr(line, end, name, name_len, skip_loopback, addr, addr_cap))
            return 0;
    }
    return -1;
}

int hosts_lookup_addr(const char *text, const char *name, char *addr, size_t addr_cap)
{
    return lookup_addr(text, name, false, addr, addr_cap);
}

int hosts_lookup_own_addr(const char *text, const char *name, char *addr, size_t addr_cap)
{
    return lookup_addr(text, name, true, addr, addr_cap);
}
