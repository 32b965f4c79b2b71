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
};

/* grpc.health.v1.Health/Check: 0 when SERVING, -1 with the reason otherwise. */
int gcs_health_check(struct grpc_client *c, const char *ip, int port, struct errbuf *err);

/* NodeInfoGcsService/GetAllNodeInfo, counted. */
int gcs_count_nodes(struct grpc_client *c, const char *ip, int port, struct gcs_node_counts *out, struct errbuf *err);

/* The binary id of the ALIVE node named node_name (GcsNodeInfo.node_name, what `ray start
 * --node-name` set, else the node's IP): 0 with *found (false: the GCS lists no such node), -1
 * when the GCS did not answer or the reply was malformed. */
int gcs_find_node(struct grpc_client *c, const char *ip, int port, const char *node_name, uint8_t id[GCS_NODE_ID_BYTES],
                  bool *found, struct errbuf *err);

/* How a node left the cluster: NodeDeathInfo.Reason, as the GCS records it. */
enum gcs_departure {
    GCS_DEPARTURE_UNKNOWN = 0,         /* UNSPECIFIED */
    GCS_DEPARTURE_EXPECTED = 1,        /* EXPECTED_TERMINATION: `ray stop`, a clean exit */
    GCS_DEPARTURE_UNEXPECTED = 2,      /* UNEXPECTED_TERMINATION: it died */
    GCS_DEPARTURE_DRAIN_PREEMPTED = 3, /* AUTOSCALER_DRAIN_PREEMPTED: drained (our DrainNode) */
    GCS_DEPARTURE_DRAIN_IDLE = 4,      /* AUTOSCALER_DRAIN_IDLE */
};
const char *gcs_departure_name(enum gcs_departure d);

/* How the most recent DEAD node named node_name left (the one that ended last). 0 with *how, -1
 * when the GCS records no DEAD node of that name (or did not answer). Asks for DEAD nodes of that
 * name only: the reply is that name's history, not the cluster. */
int gcs_node_departure(struct grpc_client *c, const char *ip, int port, const char *node_name, enum gcs_departure *how,
                       struct errbuf *err);

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
                         struct errbuf *err);
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
