/* rayboot-sidecar's state, shared by its event loop, its HTTP endpoints and its metrics. One
 * process, one thread: everything here is touched from the loop only. */
#ifndef RAYBOOT_SIDECAR_H
#define RAYBOOT_SIDECAR_H

#include <stdbool.h>

#include "dns.h"
#include "drain.h"
#include "errbuf.h"
#include "kubeapi.h"
#include "plan.h"
#include "prober.h"
#include "settings.h"

/* The port the endpoints listen on unless RAYBOOT_SIDECAR_PORT says otherwise: next to Ray's
 * ports, clashing with none of Ray's defaults. */
#define SIDECAR_DEFAULT_PORT 8077
/* How often readiness is looked at. A look is one DNS query and one small RPC (GetAllNodeInfo
 * filtered to this pod's address), so thousands of sidecars cost the GCS little. */
#define SIDECAR_READY_INTERVAL_MS 2000

struct http_server;

enum sidecar_prober_use { USE_NONE, USE_RESOLVE, USE_READY, USE_DRAIN };

struct sidecar {
    const char *const *envp;
    const char *root; /* RAYBOOT_ROOT, or NULL */
    struct plan plan;
    struct settings settings;
    int port;
    int sigfd;
    int epfd;
    struct http_server *http;

    struct prober prober;
    enum sidecar_prober_use in_flight;
    long prober_deadline_ms;
    char gcs_addr[DNS_ADDR_MAX_BYTES]; /* the head's address, "" until resolved */
    long resolved_ms;

    bool ready;
    char ready_reason[ERRBUF_MAX_BYTES];
    long next_ready_ms;
    bool ready_checked; /* at least one look done */

    /* The drain: wanted (by /drain or SIGTERM), then the reason is read, then struct drain runs. */
    bool drain_wanted;
    long drain_wanted_ms;
    long drain_budget_ms;
    char drain_trigger[16]; /* "preStop" or "SIGTERM" */
    bool reason_pending;
    struct kubeapi_fetch api;
    char disruption[512]; /* why the pod ends, from the API server or "reason unknown" */
    struct drain drain;
    bool drain_accepted;
    char node_id[2 * 28 + 1];
    bool drain_reported;

    /* SIGTERM: drain, wait for Ray's processes, leave. */
    bool terminating;
    long exit_at_ms;

    /* Metrics. */
    unsigned long drains_started;
    unsigned long drains_left, drains_deadline, drains_failed;
    long last_drain_ms;
    unsigned long http_requests;
};

/* loop.c */
int sidecar_loop(struct sidecar *s);
/* Asks for a drain to finish within budget_ms (the first caller's budget wins); idempotent. */
void sidecar_want_drain(struct sidecar *s, const char *trigger, long budget_ms);
bool sidecar_drain_done(const struct sidecar *s);

/* endpoints.c: the answer for one request. *suspend is set when it must wait for the drain. */
struct http_answer {
    int status;
    const char *content_type;
    char body[2048];
};
void endpoints_answer(struct sidecar *s, const char *method, const char *path, const char *deadline_arg,
                      struct http_answer *a, bool *suspend);

/* metrics.c */
void metrics_render(const struct sidecar *s, char *out, size_t cap);

/* raypids.c: Ray processes this container can see (only with shareProcessNamespace). */
int raypids_count(void);

#endif
