/* What rayboot and the sidecar ask the prober (lib/prober.c) and what it answers: one fixed-size
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
};

/* How a request ended. */
enum prober_status {
    PROBER_OK = 0,       /* yes / done: the reply's fields hold the answer */
    PROBER_ABSENT = -1,  /* the GCS answered: no ALIVE node of that name (FIND_NODE, DRAIN), no such key
                          * (KV_GET); reason says so */
    PROBER_FAILED = -2,  /* not (yet): refused, timed out, not SERVING, malformed...; reason says what */
    PROBER_DIED = -3,    /* the prober itself failed: it died or hung and was killed (the errbuf says how) */
    PROBER_PENDING = -4, /* prober_receive only: no reply yet */
};

struct prober_request {
    int op;
    int port;
    char name[DNS_NAME_MAX_BYTES + 2]; /* PROBE_RESOLVE */
    char addr[DNS_ADDR_MAX_BYTES];     /* the others */
    long long deadline_unix_ms;        /* PROBE_DRAIN */
    long budget_ms;                    /* > 0: no lookup, connect or call runs longer (deadline.h) */
    char text[256];                    /* PROBE_DRAIN reason, PROBE_KV_PUT value */
};

struct prober_reply {
    enum prober_status status;     /* OK, ABSENT or FAILED */
    char addr[DNS_ADDR_MAX_BYTES]; /* PROBE_RESOLVE */
    long alive;                    /* PROBE_COUNT_NODES */
    long alive_workers;
    char value[256];              /* PROBE_CLUSTER_ID, PROBE_KV_GET, PROBE_RAY_VERSION; PROBE_DRAIN: the node id, hex */
    enum gcs_departure departure; /* PROBE_DEPARTURE */
    char reason[ERRBUF_MAX_BYTES]; /* why not, when status is not OK */
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
struct prober_request prober_req_kv_put(const char *addr, int port, const char *key, const char *value, long budget_ms);

#endif
