/* What a pod knows about itself before any decision: its hostname, the FQDN and address the
 * kubelet wrote for it in /etc/hosts, its namespace, cluster domain and IP (the downward API's
 * variables first). Deciding the role and the head is the planner's. */
#ifndef RAYBOOT_PODVIEW_H
#define RAYBOOT_PODVIEW_H

#include <stddef.h>

#include "address.h"
#include "dnsname.h"
#include "errbuf.h"
#include "resolvconf.h"

struct pod_view {
    const char *root; /* RAYBOOT_ROOT, or NULL */
    char hostname[DNS_NAME_MAX_BYTES + 1];
    char fqdn[DNS_NAME_MAX_BYTES + 1]; /* from /etc/hosts; empty when there is none */
    char ip[ADDRESS_HOST_MAX_BYTES];   /* the address on that line; empty when there is none or it is loopback */
};

/* HOSTNAME (else fallback: gethostname()'s) and its /etc/hosts line under root. -1 with a message
 * (a bad HOSTNAME, an unreadable /etc/hosts). */
int podview_read(struct pod_view *pod, const char *root, const char *const *envp, const char *fallback,
                 struct errbuf *err);

/* Each of these writes "" when nothing says, and -1 with a message naming the variable or file
 * that holds a bad value. */
int podview_namespace(const struct pod_view *pod, const char *const *envp, const struct resolvconf *rc,
                      char out[DNS_LABEL_MAX_BYTES + 1], struct errbuf *err);
int podview_cluster_domain(const struct pod_view *pod, const char *const *envp, const struct resolvconf *rc,
                           char out[DNS_NAME_MAX_BYTES + 1], struct errbuf *err);
int podview_pod_ip(const struct pod_view *pod, const char *const *envp, char out[ADDRESS_HOST_MAX_BYTES],
                   struct errbuf *err);

/* RAYBOOT_POD_NAME (the downward API's metadata.name), else the hostname. */
int podview_pod_name(const struct pod_view *pod, const char *const *envp, char out[DNS_NAME_MAX_BYTES + 1],
                     struct errbuf *err);

/* This pod's Ray node name: the pod IP when known, else the pod name, else the hostname. rayboot
 * starts Ray with it and both rayboot and the sidecar find the node by it. "" only when there is
 * no hostname either. */
#define PODVIEW_NODE_NAME_MAX_BYTES (DNS_NAME_MAX_BYTES + 1)
int podview_node_name(const struct pod_view *pod, const char *const *envp, char out[PODVIEW_NODE_NAME_MAX_BYTES],
                      struct errbuf *err);

#endif
