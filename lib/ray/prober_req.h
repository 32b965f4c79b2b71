/* What rayboot and the sidecar ask the prober (lib/ray/prober.c) and what it answers: one fixed-size
 * request and reply each way over its socket, a builder per request, and the reply's status.
 * Pure data, so the drain's step machine can use it without the prober process. */
#ifndef RAYBOOT_PROBER_REQ_H
#define RAYBOOT_PROBER_REQ_H

#include "dns.h"
#include "dnsname.h"
#include "errbuf.h"
#include "gcs.h"

/* One request's limit, whoever sends it: the prober's own timeouts are all shorter, so a prober
 * that has not answered by then is stuck (prober_ask kills it; the sidecar replaces it). */
#define PROBER_TIMEOUT_MS 15000

enum prober_op {
    PROBE_RESOLVE = 1, /* name -> addr */
    PROBE_TCP,         /* can addr:port be connected to? */
    PROBE_HEALTH,      /* grpc.health.v1.Health/Check on addr:port */
    PROBE_COUNT_NODES, /* ALIVE nodes in the GCS at addr:port */
    PROBE_DRAIN,       /* DrainNode for the ALIVE node named `name` (GcsNodeInfo.node_name), reason `text` */
    PROBE_FIND_NODE,   /* is there an ALIVE node named `name`? */
    PROBE_CLUSTER_ID,  /* the cluster id, hex, into value */
    PROBE_KV_GET,      /* rayboot's KV key `name` into value */
    PROBE_KV_PUT,      /* rayboot's KV key `name` = `text` */
    PROBE_DEPARTURE,   /* how the node named `name` left: its NodeDeathInfo reason */
    PROBE_RAY_VERSION, /* the GCS's Ray version into value; the prober then asks for nodes in the
                        * form that version understands (gcs.h, enum gcs_nodes_form) */
    /* Issue 20: the prober waits for the head itself (lib/ray/gcswait.c) and answers only with news. */
    PROBE_WAIT_GCS = 64, /* name's GCS at port SERVING, within budget_ms; answers are wait news */
    PROBE_CANCEL,        /* ends the PROBE_WAIT_GCS under way (its last news: GCSWAIT_CANCELLED) */
};

/* How a request ended. */
enum prober_status {
    PROBER_OK = 0,       /* yes / done: the reply's fields hold the answer */
    PROBER_ABSENT = -1,  /* the GCS answered: no ALIVE node of that name (FIND_NODE, DRAIN), no such key
                          * (KV_GET); reason says so */
    PROBER_FAILED = -2,  /* not (yet): refused, timed out, not SERVING, malformed...; reason says what */
    PROBER_DIED = -3,    /* the prober itself failed: it died or hung and was killed (the errbuf says how) */
    PROBER_PENDING = -4, /* prober_receive only: no reply yet */
    /* The GCS refused the token, or its absence (Ray's token mode): a configuration error that
     * waiting does not mend; reason names the variables. */
    PROBER_UNAUTHENTICATED = -5,
};

/* PROBE_WAIT_GCS: what the wait needs beyond name, port and budget_ms. */
struct prober_wait_request {
    unsigned id;             /* echoed in its news, so that a cancelled wait's late news are told apart */
    int rendezvous_port;     /* the head rayboot's rendezvous (init/rendezvous.h); 0: none */
    unsigned long long seed; /* the backoff's jitter (the confined prober cannot call getpid) */
    int poll_min_ms;         /* the GCS poll's interval without a rendezvous; 0: 30-50 ms */
    int poll_max_ms;
    int confirm; /* 1: the head's message is confirmed by a Health/Check before SERVING is told (gcswait.h) */
    /* Fresh from getrandom for each wait (the confined prober has none): with Ray's token, each
     * connection to the rendezvous says it, its last 8 bytes XORed with the connection's count. */
    unsigned char nonce[16];
};

/* One piece of a wait's news (enum gcswait_event, lib/ray/gcswait.h); addr and reason hold its
 * address and text. */
struct prober_wait_news {
    int event; /* 0: not a wait's news */
    unsigned id;
};

struct prober_request {
    int op;
    int port;
    char name[DNS_NAME_MAX_BYTES + 2]; /* PROBE_RESOLVE */
    char addr[DNS_ADDR_MAX_BYTES];     /* the others */
    long long deadline_unix_ms;        /* PROBE_DRAIN */
    long budget_ms;                    /* > 0: no lookup, connect or call runs longer (deadline.h) */
    char text[256];                    /* PROBE_DRAIN reason, PROBE_KV_PUT value, PROBE_WAIT_GCS cluster name */
    struct prober_wait_request wait;   /* PROBE_WAIT_GCS */
};

struct prober_reply {
    enum prober_status status;     /* OK, ABSENT or FAILED */
    char addr[DNS_ADDR_MAX_BYTES]; /* PROBE_RESOLVE */
    long alive;                    /* PROBE_COUNT_NODES */
    long alive_workers;
    long draining_workers;
    char value[256];              /* PROBE_CLUSTER_ID, PROBE_KV_GET, PROBE_RAY_VERSION; PROBE_DRAIN: the node id, hex */
    enum gcs_departure departure; /* PROBE_DEPARTURE */
    uint64_t departed_ms;         /* PROBE_DEPARTURE: its end_time_ms, by the GCS's clock (0: not said) */
    char reason[ERRBUF_MAX_BYTES]; /* why not, when status is not OK */
    struct prober_wait_news wait;  /* PROBE_WAIT_GCS's answers; event 0 in every other reply */
};

/* The requests, one builder each. addr:port is the GCS (a numeric address); budget_ms as in
 * deadline.h (0: none). */
struct prober_request prober_req_resolve(const char *name, long budget_ms);
struct prober_request prober_req_tcp(const char *addr, int port, long budget_ms);
struct prober_request prober_req_health(const char *addr, int port, long budget_ms);
struct prober_request prober_req_nodes(const char *addr, int port, long budget_ms);
struct prober_request prober_req_find_node(const char *addr, int port, const char *node_name, long budget_ms);
struct prober_request prober_req_drain(const char *addr, int port, const char *node_name, const char *reason,
                                       long long deadline_unix_ms, long budget_ms);
struct prober_request prober_req_departure(const char *addr, int port, const char *node_name, long budget_ms);
struct prober_request prober_req_cluster_id(const char *addr, int port, long budget_ms);
struct prober_request prober_req_ray_version(const char *addr, int port, long budget_ms);
struct prober_request prober_req_kv_get(const char *addr, int port, const char *key, long budget_ms);
struct prober_request prober_req_wait_gcs(const char *name, int port, int rendezvous_port, long timeout_ms, unsigned id,
                                          unsigned long long seed);
struct prober_request prober_req_cancel(void);
struct prober_request prober_req_kv_put(const char *addr, int port, const char *key, const char *value, long budget_ms);

#endif
