/* Reading this pod's own Pod from the Kubernetes API server, over HTTPS with the service-account
 * token and CA, in a child process so that the event loop never blocks on it: whether the pod is
 * going (sidecar/guard.c drains only then) and why (the drain's reason). */
#ifndef RAYBOOT_SIDECAR_KUBEAPI_H
#define RAYBOOT_SIDECAR_KUBEAPI_H

#include <stdbool.h>
#include <sys/types.h>

#include "errbuf.h"

/* The read must not hold the drain up for long: the node is drained with "reason unknown" after
 * this, and the parent kills a child that overruns it. */
#define KUBEAPI_TIMEOUT_MS 2500

/* What the read showed. */
enum kubeapi_verdict {
    KUBEAPI_UNREAD,  /* no Pod read: no answer, an HTTP error, not a Pod; line says why */
    KUBEAPI_DENIED,  /* the API server refused the token or the read (401, 403): no API access */
    KUBEAPI_GOING,   /* the Pod is being deleted, or the kubelet is ending it (podreason_going) */
    KUBEAPI_STAYING, /* the Pod was read: neither */
};

struct kubeapi_fetch {
    pid_t pid;
    enum kubeapi_verdict verdict; /* once read */
    int fd;                       /* readable when the child wrote its line or exited; -1 when idle */
    long deadline_ms;             /* monotonic: kill the child past this */
    size_t len;
    char line[512]; /* the child's answer: the reason, or "reason unknown (...)" (its verdict taken off) */
};

struct kubeapi_target {
    const char *root; /* RAYBOOT_ROOT, or NULL */
    const char *host; /* KUBERNETES_SERVICE_HOST */
    const char *port; /* KUBERNETES_SERVICE_PORT, or NULL for 443 */
    const char *namespace_;
    const char *pod_name;
};

/* Whether the sidecar has API access at all: KUBERNETES_SERVICE_HOST (and the port) usable, this
 * pod's name and namespace, a token mounted that can be sent. -1 with what is missing or wrong
 * otherwise. Whether the API server takes the token is seen by a read. */
int kubeapi_access(const struct kubeapi_target *t, struct errbuf *err);

/* Starts the read. -1 with a message when it cannot even start (no token mounted, no API server
 * in the environment): the caller goes on with "reason unknown". */
int kubeapi_reason_start(struct kubeapi_fetch *f, const struct kubeapi_target *t, long now_ms, struct errbuf *err);

/* Call when f->fd is readable (or at f->deadline_ms). True once the answer is in f->verdict and
 * f->line (the child has been reaped); false while more is coming. */
bool kubeapi_reason_read(struct kubeapi_fetch *f, long now_ms);

/* Kills and reaps a running child. */
void kubeapi_reason_cancel(struct kubeapi_fetch *f);

#endif
