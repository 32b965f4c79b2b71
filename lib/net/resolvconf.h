/* /etc/resolv.conf as the kubelet writes it: search path, nameservers, ndots. */
#ifndef RAYBOOT_RESOLVCONF_H
#define RAYBOOT_RESOLVCONF_H

#include <stddef.h>

#include "dnsname.h"

/* A pod's resolv.conf is a few hundred bytes; 64 KiB is far past anything real. */
#define RESOLVCONF_FILE_MAX_BYTES (64 * 1024)
/* The kubelet caps the search path at 32 domains (Kubernetes 1.28+); nameservers at 3. */
#define RESOLVCONF_SEARCH_MAX 32
#define RESOLVCONF_NAMESERVERS_MAX 3
/* An IPv6 literal with a zone: INET6_ADDRSTRLEN plus "%ifname". */
#define RESOLVCONF_ADDR_MAX_BYTES 64

struct resolvconf {
    char search[RESOLVCONF_SEARCH_MAX][DNS_NAME_MAX_BYTES + 1];
    size_t nsearch;
    char nameservers[RESOLVCONF_NAMESERVERS_MAX][RESOLVCONF_ADDR_MAX_BYTES];
    size_t nnameservers;
    int ndots; /* 1 when not given, as in glibc and musl */
};

/* Never fails: lines it does not understand are skipped, as resolvers do. */
void resolvconf_parse(const char *text, struct resolvconf *out);

/* The cluster domain, from the search entry "svc.<domain>" (the kubelet writes NS.svc.<domain>,
 * svc.<domain>, <domain>). Returns NULL when the search path has none. */
const char *resolvconf_cluster_domain(const struct resolvconf *rc);

#endif
