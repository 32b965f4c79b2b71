/* The few GCS RPCs rayboot needs, encoded and decoded by hand (field numbers read from the
 * pinned Ray's generated descriptors; see gcs.c). */
#ifndef RAYBOOT_GCS_H
#define RAYBOOT_GCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"
#include "grpc.h"

/* Ray node ids are 28 bytes. One of another length is never sent: it does not "drain nothing",
 * the GCS's id parsing checks the length and aborts on it (issue 22). A reply's id of another
 * length is an error. */
#define GCS_NODE_ID_BYTES 28
/* A node list for 10,000 nodes is a few MB; this bounds a hostile or broken reply. */
#define GCS_NODE_LIST_MAX_BYTES (64u * 1024 * 1024)

struct gcs_node_counts {
    long alive;         /* every ALIVE node, head included */
    long alive_workers; /* ALIVE nodes that are not the head */
    /* ... of which their raylet reports DRAINING (a drain accepted, the node not gone yet; Ray 2.x
     * with NodeSnapshot: older ones report none) */
    long draining_workers;
};

/* How GetAllNodeInfoRequest asks for one node in one state; it changed twice in Ray:
 *   2.49 and later: node_selectors = 2 { node_name = 2 }, state_filter = 3 (the pinned 2.60);
 *   2.36 to 2.48:   limit = 3, filters = 4 { state = 2, node_name = 3 } (field 3 meant limit:
 *                   2.49's state_filter = ALIVE (0) read there is a limit of 0 nodes);
 *   before 2.36:    no fields: every request pulls the whole node table.
 * The decoders check every node's state and name whatever the form. */
enum gcs_nodes_form {
    GCS_NODES_SELECTORS = 0,
    GCS_NODES_FILTERS,
    GCS_NODES_UNFILTERED,
};
/* The form for a Ray version string ("2.40.0"); one that does not parse gets the newest. */
enum gcs_nodes_form gcs_nodes_form_for(const char *ray_version);

/* NodeInfoGcsService/CheckAlive, asking about no node: the GCS's ray_version (CheckAliveReply
 * field 2, there since 2.9). 0 with the version, -1 when the GCS did not say. */
#define GCS_RAY_VERSION_MAX_BYTES 64
int gcs_ray_version(struct grpc_client *c, const char *ip, int port, char version[GCS_RAY_VERSION_MAX_BYTES],
                    struct errbuf *err);
int gcs_decode_ray_version(const uint8_t *msg, size_t len, char version[GCS_RAY_VERSION_MAX_BYTES], struct errbuf *err);
/* The request get_nodes sends, into buf (for tests): node_name may be NULL. Its length: 0 for
 * the unfiltered form's empty request, and when it does not fit. */
size_t gcs_encode_nodes_request(enum gcs_nodes_form form, const char *node_name, int state, uint8_t *buf, size_t cap);

/* grpc.health.v1.Health/Check: 0 when SERVING, -1 with the reason otherwise. */
int gcs_health_check(struct grpc_client *c, const char *ip, int port, struct errbuf *err);

/* NodeInfoGcsService/GetAllNodeInfo, counted. */
int gcs_count_nodes(struct grpc_client *c, const char *ip, int port, enum gcs_nodes_form form,
                    struct gcs_node_counts *out, struct errbuf *err);

/* The binary id of the ALIVE node named node_name (GcsNodeInfo.node_name, what `ray start
 * --node-name` set, else the node's IP): 0 with *found (false: the GCS lists no such node), -1
 * when the GCS did not answer or the reply was malformed. */
int gcs_find_node(struct grpc_client *c, const char *ip, int port, enum gcs_nodes_form form, const char *node_name,
                  uint8_t id[GCS_NODE_ID_BYTES], bool *found, struct errbuf *err);

/* How a node left the cluster: NodeDeathInfo.Reason, as the GCS records it. */
enum gcs_departure {
    GCS_DEPARTURE_UNKNOWN = 0,         /* UNSPECIFIED */
    GCS_DEPARTURE_EXPECTED = 1,        /* EXPECTED_TERMINATION: `ray stop`, a clean exit */
    GCS_DEPARTURE_UNEXPECTED = 2,      /* UNEXPECTED_TERMINATION: it died */
    GCS_DEPARTURE_DRAIN_PREEMPTED = 3, /* AUTOSCALER_DRAIN_PREEMPTED: drained (our DrainNode) */
    GCS_DEPARTURE_DRAIN_IDLE = 4,      /* AUTOSCALER_DRAIN_IDLE */
};
const char *gcs_departure_name(enum gcs_departure d);

/* How the most recent DEAD node named node_name left (the one that ended last). 0 with *how (and,
 * if ended_ms is not NULL, its end_time_ms by the GCS's clock, 0 when not said), -1 when the GCS
 * records no DEAD node of that name (or did not answer). Asks for DEAD nodes of that name only: the
 * reply is that name's history, not the cluster. */
int gcs_node_departure(struct grpc_client *c, const char *ip, int port, enum gcs_nodes_form form, const char *node_name,
                       enum gcs_departure *how, uint64_t *ended_ms, struct errbuf *err);

/* AutoscalerStateService/DrainNode with reason PREEMPTION (never rejected by the GCS). */
int gcs_drain_node(struct grpc_client *c, const char *ip, int port, const uint8_t id[GCS_NODE_ID_BYTES],
                   const char *reason_message, int64_t deadline_unix_ms, struct errbuf *err);

/* NodeInfoGcsService/GetClusterId: a new cluster id means a new head (a re-created pod). */
#define GCS_CLUSTER_ID_MAX_BYTES 64
int gcs_cluster_id(struct grpc_client *c, const char *ip, int port, uint8_t *id, size_t *len, struct errbuf *err);

/* InternalKV in rayboot's own namespace. get: 0 with *found (the value copied, cut to cap). */
#define GCS_KV_NAMESPACE "rayboot"
int gcs_kv_put(struct grpc_client *c, const char *ip, int port, const char *key, const char *value, struct errbuf *err);
int gcs_kv_get(struct grpc_client *c, const char *ip, int port, const char *key, char *value, size_t cap, bool *found,
               struct errbuf *err);

/* Pure decoders, separate so they can be unit-tested and fuzzed. */
int gcs_decode_health(const uint8_t *msg, size_t len, struct errbuf *err);
int gcs_decode_node_counts(const uint8_t *msg, size_t len, struct gcs_node_counts *out, struct errbuf *err);

/* GetAllNodeInfoReply: the first ALIVE node whose node_name is node_name (every other node is
 * skipped, in case the GCS ignored the selector). */
int gcs_decode_find_node(const uint8_t *msg, size_t len, const char *node_name, uint8_t id[GCS_NODE_ID_BYTES],
                         bool *found, struct errbuf *err);
/* GetAllNodeInfoReply: how the DEAD node named node_name that ended last left. */
int gcs_decode_departure(const uint8_t *msg, size_t len, const char *node_name, enum gcs_departure *how,
                         uint64_t *ended_ms, struct errbuf *err);
/* DrainNodeReply: 0 when is_accepted. */
int gcs_decode_drain(const uint8_t *msg, size_t len, struct errbuf *err);
/* GetClusterIdReply: 0 with the id (at most GCS_CLUSTER_ID_MAX_BYTES; a longer one is skipped). */
int gcs_decode_cluster_id(const uint8_t *msg, size_t len, uint8_t id[GCS_CLUSTER_ID_MAX_BYTES], size_t *id_len,
                          struct errbuf *err);
/* InternalKVGetReply: 0 with *found and the value (NUL-terminated, cut to cap), -1 malformed. */
int gcs_decode_kv_get(const uint8_t *msg, size_t len, char *value, size_t cap, bool *found, struct errbuf *err);
/* InternalKVPutReply: 0 when its GcsStatus is OK. */
int gcs_decode_kv_put(const uint8_t *msg, size_t len, struct errbuf *err);

#endif
