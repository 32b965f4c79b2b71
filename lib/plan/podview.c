/* The pod's identity from what the kubelet and the downward API give it. Nothing here decides a
 * role or touches the network. */
#include "podview.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "fsroot.h"
#include "hosts.h"
#include "text.h"

#define SA_NAMESPACE_FILE "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
#define SA_NAMESPACE_MAX_BYTES 256
#define DEFAULT_CLUSTER_DOMAIN "cluster.local"

static int copy_str(char *dst, size_t cap, const char *src)
{
    int n = snprintf(dst, cap, "%s", src);
    return (n < 0 || (size_t)n >= cap) ? -1 : 0;
}

int podview_read(struct pod_view *pod, const char *root, const char *const *envp, const char *fallback,
                 struct errbuf *err)
{
    const char *hostname = env_lookup_nonempty(envp, "HOSTNAME");
    char *text;
    memset(pod, 0, sizeof(*pod));
    pod->root = root;
    if (!hostname)
        hostname = fallback ? fallback : "";
    if (copy_str(pod->hostname, sizeof(pod->hostname), hostname) < 0 ||
        (hostname[0] && !dnsname_valid(hostname, strlen(hostname))))
        return errbuf_set(err, "HOSTNAME=%.80s: not a valid host name", hostname);
    pod->fqdn[0] = '\0';
    if (pod->hostname[0] && fsroot_read(pod->root, "/etc/hosts", HOSTS_FILE_MAX_BYTES, &text, NULL, err) == 0) {
        if (hosts_find_fqdn(text, pod->hostname, pod->fqdn) < 0)
            pod->fqdn[0] = '\0';
        if (hosts_lookup_own_addr(text, pod->hostname, pod->ip, sizeof(pod->ip)) < 0)
            pod->ip[0] = '\0';
        free(text);
    } else if (pod->hostname[0] && errno != ENOENT) {
        return -1;
    }
    return 0;
}

/* Namespace: the downward API's RAYBOOT_POD_NAMESPACE, else the service-account file, else the
 * pod's FQDN (host.sub.NS.svc...), else the first search domain (NS.svc.<domain>). */
int podview_namespace(const struct pod_view *pod, const char *const *envp, const struct resolvconf *rc,
                      char out[DNS_LABEL_MAX_BYTES + 1], struct errbuf *err)
{
    const char *given = env_lookup_nonempty(envp, "RAYBOOT_POD_NAMESPACE");
    char *text = NULL;
    char label[DNS_LABEL_MAX_BYTES + 1];

    if (given) {
        if (!dnsname_label_valid(given, strlen(given)))
            return errbuf_set(err, "RAYBOOT_POD_NAMESPACE=%.80s: not a valid namespace name", given);
        return copy_str(out, DNS_LABEL_MAX_BYTES + 1, given);
    }
    if (fsroot_read(pod->root, SA_NAMESPACE_FILE, SA_NAMESPACE_MAX_BYTES, &text, NULL, err) == 0) {
        size_t len = strlen(text);
        while (len > 0 && isspace((unsigned char)text[len - 1]))
            text[--len] = '\0';
        if (!dnsname_label_valid(text, len)) {
            free(text);
            return errbuf_set(err, "%s: not a valid namespace name", SA_NAMESPACE_FILE);
        }
        copy_str(out, DNS_LABEL_MAX_BYTES + 1, text);
        free(text);
        return 0;
    }
    if (pod->fqdn[0] && strstr(pod->fqdn, ".svc.") && dnsname_label_at(pod->fqdn, 2, label, sizeof(label)) == 0 &&
        dnsname_label_valid(label, strlen(label)))
        return copy_str(out, DNS_LABEL_MAX_BYTES + 1, label);
    if (rc->nsearch > 0 && dnsname_label_at(rc->search[0], 1, label, sizeof(label)) == 0 && strcmp(label, "svc") == 0 &&
        dnsname_label_at(rc->search[0], 0, label, sizeof(label)) == 0)
        return copy_str(out, DNS_LABEL_MAX_BYTES + 1, label);
    out[0] = '\0';
    return 0;
}

/* Cluster domain: RAYBOOT_CLUSTER_DOMAIN, else what follows ".NS.svc." in the pod's FQDN, else
 * the resolv.conf search path, else cluster.local. */
int podview_cluster_domain(const struct pod_view *pod, const char *const *envp, const struct resolvconf *rc,
                           char out[DNS_NAME_MAX_BYTES + 1], struct errbuf *err)
{
    const char *given = env_lookup_nonempty(envp, "RAYBOOT_CLUSTER_DOMAIN");
    const char *svc = pod->fqdn[0] ? strstr(pod->fqdn, ".svc.") : NULL;
    const char *domain = DEFAULT_CLUSTER_DOMAIN;
    if (given) {
        size_t len = strlen(given);
        if (len > 0 && given[len - 1] == '.')
            len--;
        if (!dnsname_valid(given, len))
            return errbuf_set(err, "RAYBOOT_CLUSTER_DOMAIN=%.80s: not a valid domain", given);
        text_copy(out, DNS_NAME_MAX_BYTES + 1, given, len);
        return 0;
    }
    if (svc && svc[5])
        domain = svc + 5;
    else if (resolvconf_cluster_domain(rc))
        domain = resolvconf_cluster_domain(rc);
    return copy_str(out, DNS_NAME_MAX_BYTES + 1, domain);
}

/* This pod's IP: the downward API's RAYBOOT_POD_IP, else the kubelet's /etc/hosts line. Ray is
 * given it, because Ray's own guess falls back to 127.0.0.1 when DNS is slow at start-up, and a
 * node the GCS cannot reach is soon declared dead. */
int podview_pod_ip(const struct pod_view *pod, const char *const *envp, char out[ADDRESS_HOST_MAX_BYTES],
                   struct errbuf *err)
{
    const char *given = env_lookup_nonempty(envp, "RAYBOOT_POD_IP");
    unsigned char buf[16];
    if (!given) {
        copy_str(out, ADDRESS_HOST_MAX_BYTES, pod->ip);
        return 0;
    }
    if (inet_pton(AF_INET, given, buf) != 1 && inet_pton(AF_INET6, given, buf) != 1)
        return errbuf_set(err, "RAYBOOT_POD_IP=%.60s: not an IP address", given);
    return copy_str(out, ADDRESS_HOST_MAX_BYTES, given);
}

/* The name this pod's Ray node registers under (ray start --node-name) and is found by in the GCS
 * (drain, readiness). The pod IP when one is known, because Ray names a node by its IP when
 * nobody names it: the sidecar beside a Ray that something else started then still finds it.
 * Else the pod name (RAYBOOT_POD_NAME) or the hostname: outside Kubernetes (a VM, docker run, a
 * hostNetwork pod) nothing says the address Ray will pick, but the name is ours to give. */
int podview_node_name(const struct pod_view *pod, const char *const *envp, char out[PODVIEW_NODE_NAME_MAX_BYTES],
                      struct errbuf *err)
{
    char ip[ADDRESS_HOST_MAX_BYTES] = "";
    if (podview_pod_ip(pod, envp, ip, err) < 0)
        return -1;
    if (ip[0])
        return copy_str(out, PODVIEW_NODE_NAME_MAX_BYTES, ip);
    return podview_pod_name(pod, envp, out, err);
}

/* A pod name is an RFC 1123 name; the sidecar puts it in an API URL path, Ray in an id. */
int podview_pod_name(const struct pod_view *pod, const char *const *envp, char out[DNS_NAME_MAX_BYTES + 1],
                     struct errbuf *err)
{
    const char *given = env_lookup_nonempty(envp, "RAYBOOT_POD_NAME");
    if (given && !dnsname_valid(given, strlen(given)))
        return errbuf_set(err, "RAYBOOT_POD_NAME=%.80s: not a valid pod name (the downward API's metadata.name)",
                          given);
    return copy_str(out, DNS_NAME_MAX_BYTES + 1, given ? given : pod->hostname);
}
