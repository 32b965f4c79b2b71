/* Resolving the head's name the way a pod would (its /etc/hosts, then its nameservers; its search
 * path for a single-label name), one bounded attempt at a time; retrying is the caller's policy. */
#ifndef RAYBOOT_DNS_H
#define RAYBOOT_DNS_H

#include <stddef.h>

#include "dnsname.h"
#include "errbuf.h"

#define DNS_ADDR_MAX_BYTES 46 /* INET6_ADDRSTRLEN */

struct dns_resolver {
    void *channel;                          /* ares_channel */
    char *hosts_text;                       /* /etc/hosts as read at init, or NULL */
    char no_dns[256];                       /* why DNS cannot be asked (no usable resolv.conf), or "" */
    char (*search)[DNS_NAME_MAX_BYTES + 1]; /* resolv.conf's search path, for single-label names */
    size_t nsearch;
};

/* Reads /etc/resolv.conf and /etc/hosts under root and sets up c-ares. Everything that opens a
 * file happens here, so the confined prober needs no open(2) afterwards. A missing or empty
 * resolv.conf is not an error here (a head only talks to 127.0.0.1): queries then fail with
 * the reason. */
int dns_resolver_init(struct dns_resolver *r, const char *root, struct errbuf *err);
void dns_resolver_free(struct dns_resolver *r);

/* One attempt: a numeric address is returned as it is; else /etc/hosts; else one query for the
 * absolute name (A, then AAAA when the name has no A record), taking no longer than budget_ms
 * when that is > 0 (deadline.h). "Not yet" answers (NXDOMAIN, SERVFAIL, timeout, refused) are
 * -1 with a short reason; so are real errors. */
int dns_resolve(struct dns_resolver *r, const char *name, long budget_ms, char addr[DNS_ADDR_MAX_BYTES],
                struct errbuf *err);

#endif
