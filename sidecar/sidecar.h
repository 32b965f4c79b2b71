/* rayboot-sidecar's state, shared by its event loop (loop.c), its drain (draining.c), its readiness
 * (readiness.c), its endpoints (endpoints.c) and its metrics (metrics.c); main.c sets it up. A
 * header of data only: each module declares its own functions in its own header. One process, one
 * thread: everything here is touched from the loop. */
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
#include "sha256.h"

/* The probes' port unless RAYBOOT_SIDECAR_PORT says otherwise: next to Ray's ports, clashing with
 * none of Ray's defaults. Every address: the kubelet's probes come from the node. */
#define SIDECAR_DEFAULT_PORT 8077
/* The drain's port unless RAYBOOT_SIDECAR_DRAIN_PORT says otherwise, on 127.0.0.1 only: the pod's
 * own containers reach it (`rayboot-sidecar drain`, the preStop hook), nothing outside the pod. */
#define SIDECAR_DEFAULT_DRAIN_PORT 8078
#define SIDECAR_DRAIN_ADDRESS "127.0.0.1"
/* How often readiness is looked at. A look is one DNS query and one small RPC (GetAllNodeInfo
 * filtered to this pod's address), so thousands of sidecars cost the GCS little. */
#define SIDECAR_READY_INTERVAL_MS 2000

struct http_server;

enum sidecar_prober_use { USE_NONE, USE_RESOLVE, USE_READY, USE_DRAIN, USE_VERSION };

/* What the head's /readyz means (RAYBOOT_SIDECAR_READINESS, readiness.c); a worker's is its node
 * ALIVE whatever this says. */
enum sidecar_readiness {
    READINESS_NODE,                 /* "node": the GCS SERVING */
    READINESS_CLUSTER,              /* "cluster": every node of the cluster ALIVE */
    READINESS_CLUSTER_LEADER_READY, /* "cluster-leader-ready": as "cluster", but the GCS SERVING
                                     * until the first worker joins (LWS startupPolicy LeaderReady) */
};

/* What the read of this Pod under way (kubeapi.c) is for (guard.c). */
enum sidecar_api_use {
    API_NONE,
    API_STARTUP,  /* at start: can this Pod be read? (said in the log) */
    API_DELETION, /* for a /drain: is the pod going? */
    API_REASON,   /* for a drain that runs anyway (SIGTERM, or no guard): why the pod ends */
};

struct sidecar {
    const char *const *envp;
    const char *root; /* RAYBOOT_ROOT, or NULL */
    struct plan plan;
    struct settings settings;
    int port;       /* RAYBOOT_SIDECAR_PORT: probes and metrics */
    int drain_port; /* RAYBOOT_SIDECAR_DRAIN_PORT: the drain, on 127.0.0.1 */
    int sigfd;
    int epfd;
    struct http_server *http;         /* the probes port */
    struct http_server *http_drain;   /* the drain port; NULL while another process holds it */
    struct hmac_sha256_key proof_key; /* from Ray's token: the drain port's answers are proven (drainproof.h) */
    bool proof_keyed;
    long drain_port_retry_ms; /* when to try to listen on it again */

    struct prober prober;
    enum sidecar_prober_use in_flight;
    long prober_deadline_ms;
    char gcs_addr[DNS_ADDR_MAX_BYTES]; /* the head's address, "" until resolved */
    long resolved_ms;
    /* The GCS address whose Ray version the prober knows (PROBE_RAY_VERSION), "" when none:
     * asked again for a new address, or for a new prober (which starts from the newest request
     * form). A failed ask (the GCS not up yet, or not saying) is made again at version_retry_ms;
     * its warning is logged once. */
    char version_addr[DNS_ADDR_MAX_BYTES];
    long version_retry_ms;
    bool version_warned;

    enum sidecar_readiness readiness;
    bool worker_seen; /* a worker's node has been ALIVE in this GCS (READINESS_CLUSTER_LEADER_READY) */
    bool ready;
    char ready_reason[ERRBUF_MAX_BYTES];
    long next_ready_ms;
    bool ready_checked; /* at least one look done */
    bool token_refused; /* the last look was refused for Ray's token (logged once per refusal run) */
    /* A worker's node joining while this sidecar watches: the last look that found no such ALIVE
     * node, then the first that found it ALIVE (0: none). draining.c holds a drain back while
     * Ray's own start-up may not have seen the node yet. */
    long node_absent_ms;
    long node_alive_ms;
    /* A /drain said this pod's `ray start` acts on SIGTERM whatever the drain does (rayboot's, or
     * Ray's own past its wait for its node: drainclient.h): nothing to hold for. */
    bool ray_start_stops_on_sigterm;

    /* The drain's guard (guard.c): a /drain drains only a pod that is going, read from the API. */
    bool guarded;                   /* the Pod can be read: a /drain needs it to be going */
    enum sidecar_api_use api_use;   /* what the read in s->api is for; API_NONE: none runs */
    bool api_watched;               /* its pipe is in the loop's epoll */
    bool ask_pending;               /* /drain asked since the last read for asks began */
    long ask_ms;                    /* the first of those asks */
    long read_ask_ms;               /* the first ask the read under way answers */
    long next_read_ms;              /* asks are read at most this often */
    char refusal[ERRBUF_MAX_BYTES]; /* why the last asks were refused, "" when they were not */
    unsigned long asks_refused;

    /* A drain: wanted (by /drain or SIGTERM), then the reason is read, then struct drain runs,
     * then it is reported. One that failed may be asked for again. */
    bool drain_wanted; /* from the ask until the report */
    long drain_wanted_ms;
    long drain_budget_ms;
    char drain_trigger[16]; /* "preStop" or "SIGTERM" */
    bool drain_held;        /* held for a node that has just joined (said once) */
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
    unsigned long drains_gcs_lost;  /* accepted, then the GCS went away (its head deleted too) */
    unsigned long drains_forgotten; /* accepted, then no deletion followed (draining.c) */
    long last_drain_ms;
    unsigned long http_requests;
    unsigned long drain_refused; /* /drain asked of the probes port */
};

#endif
