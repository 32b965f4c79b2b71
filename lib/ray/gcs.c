/* Ray GCS RPCs over lib/net/grpc.c. Field numbers (Ray 2.60, ray.rpc):
 *   grpc.health.v1.HealthCheckResponse { ServingStatus status = 1; }  SERVING = 1
 *   GetAllNodeInfoReply { GcsStatus status = 1; repeated GcsNodeInfo node_info_list = 2; }
 *   GetAllNodeInfoRequest { NodeSelector node_selectors = 2; optional GcsNodeState state_filter = 3; }
 *                 (older forms: gcs.h, enum gcs_nodes_form)
 *   CheckAliveRequest { repeated node_ids = 1; }  CheckAliveReply { GcsStatus status = 1;
 *                 string ray_version = 2; }
 *   GetAllNodeInfoRequest.NodeSelector { oneof node_selector { bytes node_id = 1;
 *                 string node_name = 2; string node_ip_address = 3; bool is_head_node = 4; } }
 *   GcsNodeInfo { bytes node_id = 1; string node_manager_address = 2; GcsNodeState state = 7;
 *                 string node_name = 12; uint64 end_time_ms = 24; bool is_head_node = 25;
 *                 NodeSnapshot state_snapshot = 28; NodeDeathInfo death_info = 29; }
 *                 ALIVE = 0 (so an absent state means ALIVE)
 *   NodeSnapshot { State state = 1; }  DRAINING = 3 (the raylet's own report, once a drain is accepted)
 *   autoscaler.DrainNodeRequest { bytes node_id = 1; DrainNodeReason reason = 2;
 *                 string reason_message = 3; int64 deadline_timestamp_ms = 4; }  PREEMPTION = 2
 *   autoscaler.DrainNodeReply { bool is_accepted = 1; string rejection_reason_message = 2; }
 *   GetClusterIdReply { GcsStatus status = 1; bytes cluster_id = 2; }
 *   InternalKVGetRequest { bytes key = 1; bytes namespace = 2; }  Reply { GcsStatus status = 1;
 *                 bytes value = 2; }   InternalKVPutRequest { key = 1; value = 2; bool overwrite = 3;
 *                 bytes namespace = 4; }   GcsStatus { int32 code = 1; string message = 2; }
 * Choosing when to call them is the caller's job. */
#include "gcs.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "dnsname.h"
#include "dotversion.h"
#include "grpc_frame.h"
#include "protobuf.h"

#define HEALTH_SERVING 1
#define NODE_STATE_ALIVE 0
#define NODE_STATE_DEAD 1
#define SNAPSHOT_DRAINING 3

/* Per call. In a cluster the GCS answers in well under a millisecond; a connect that takes
 * longer than this is a dropped SYN, and a fresh attempt beats the kernel's 1 s retransmit. */
#define GCS_CONNECT_TIMEOUT_MS 500
#define GCS_CALL_TIMEOUT_MS 2000
/* The node list can be large and the GCS busy while a thousand workers register. */
#define GCS_LIST_TIMEOUT_MS 10000
#define GCS_SMALL_REPLY_MAX_BYTES 4096

int gcs_decode_health(const uint8_t *msg, size_t len, struct errbuf *err)
{
    struct pb_reader r;
    struct pb_field f;
    uint64_t status = 0; /* UNKNOWN when absent */
    int rc;
    pb_reader_init(&r, msg, len);
    while ((rc = pb_next(&r, &f)) == PB_FIELD) {
        if (f.number == 1 && f.wire == PB_VARINT)
            status = f.varint;
    }
    if (rc < 0)
        return errbuf_set(err, "malformed HealthCheckResponse");
    if (status != HEALTH_SERVING)
        return errbuf_set(err, "health status %s",
                          status == 2   ? "NOT_SERVING"
                          : status == 0 ? "UNKNOWN"
                                        : "unexpected");
    return 0;
}

/* NodeSnapshot.state == DRAINING. A malformed snapshot is not draining (the node is still counted). */
static bool snapshot_draining(const uint8_t *msg, size_t len)
{
    struct pb_reader r;
    struct pb_field f;
    bool draining = false;
    pb_reader_init(&r, msg, len);
    while (pb_next(&r, &f) == PB_FIELD) {
        if (f.number == 1 && f.wire == PB_VARINT)
            draining = f.varint == SNAPSHOT_DRAINING;
    }
    return draining;
}

static int decode_node(const uint8_t *msg, size_t len, bool *alive, bool *head, bool *draining)
{
    struct pb_reader r;
    struct pb_field f;
    int rc;
    *alive = true;
    *head = false;
    *draining = false;
    pb_reader_init(&r, msg, len);
    while ((rc = pb_next(&r, &f)) == PB_FIELD) {
        if (f.number == 7 && f.wire == PB_VARINT)
            *alive = f.varint == NODE_STATE_ALIVE;
        else if (f.number == 25 && f.wire == PB_VARINT)
            *head = f.varint != 0;
        else if (f.number == 28 && f.wire == PB_BYTES)
            *draining = snapshot_draining(f.data, f.len);
    }
    return rc;
}

int gcs_decode_node_counts(const uint8_t *msg, size_t len, struct gcs_node_counts *out, struct errbuf *err)
{
    struct pb_reader r;
    struct pb_field f;
    int rc;
    out->alive = 0;
    out->alive_workers = 0;
    out->draining_workers = 0;
    pb_reader_init(&r, msg, len);
    while ((rc = pb_next(&r, &f)) == PB_FIELD) {
        bool alive, head, draining;
        if (f.number != 2 || f.wire != PB_BYTES)
            continue;
        if (decode_node(f.data, f.len, &alive, &head, &draining) < 0)
            return errbuf_set(err, "malformed GcsNodeInfo in GetAllNodeInfoReply");
        out->alive += alive;
        out->alive_workers += alive && !head;
        out->draining_workers += alive && !head && draining;
    }
    if (rc < 0)
        return errbuf_set(err, "malformed GetAllNodeInfoReply");
    return 0;
}

int gcs_health_check(struct grpc_client *c, const char *ip, int port, struct errbuf *err)
{
    static const struct grpc_call_limits limits = {GCS_CONNECT_TIMEOUT_MS, GCS_CALL_TIMEOUT_MS,
                                                   GCS_SMALL_REPLY_MAX_BYTES};
    struct grpc_reply reply;
    int rc = grpc_call(c, ip, port, "/grpc.health.v1.Health/Check", NULL, 0, &limits, &reply, err);
    if (rc == 0)
        rc = gcs_decode_health(reply.msg, reply.msg_len, err);
    grpc_reply_free(&reply);
    return rc;
}

enum gcs_nodes_form gcs_nodes_form_for(const char *ray_version)
{
    /* A version that cannot be read is taken for a new one (wait.c says so in the log). */
    if (dotversion_at_least(ray_version, 2, 49) != 0)
        return GCS_NODES_SELECTORS;
    return dotversion_at_least(ray_version, 2, 36) == 1 ? GCS_NODES_FILTERS : GCS_NODES_UNFILTERED;
}

size_t gcs_encode_nodes_request(enum gcs_nodes_form form, const char *node_name, int state, uint8_t *buf, size_t cap)
{
    uint8_t inner[16 + DNS_NAME_MAX_BYTES];
    struct pb_writer w, iw;
    pb_writer_init(&w, buf, cap);
    pb_writer_init(&iw, inner, sizeof(inner));
    if (form == GCS_NODES_SELECTORS) {
        if (node_name) { /* node_selectors { node_name } */
            pb_put_bytes(&iw, 2, node_name, strlen(node_name));
            pb_put_bytes(&w, 2, iw.buf, iw.len);
        }
        /* state_filter, sent explicitly: the field has presence, and ALIVE is 0. */
        pb_put_varint(&w, 3, (uint64_t)state);
    } else if (form == GCS_NODES_FILTERS) {
        /* filters { state, node_name }; state has presence there too. */
        pb_put_varint(&iw, 2, (uint64_t)state);
        if (node_name)
            pb_put_bytes(&iw, 3, node_name, strlen(node_name));
        pb_put_bytes(&w, 4, iw.buf, iw.len);
    }
    return (w.overflow || iw.overflow) ? 0 : w.len; /* the unfiltered form writes nothing: 0 */
}

/* GetAllNodeInfo for nodes in one state, only those named node_name when it is not NULL (the
 * reply is then one node, not the whole cluster: the sidecar asks every few seconds from every
 * pod), in the form this GCS's Ray understands. The caller decodes reply->msg, checking every
 * node's state and name again, and frees reply. */
static int get_nodes(struct grpc_client *c, const char *ip, int port, enum gcs_nodes_form form, const char *node_name,
                     int state, struct grpc_reply *reply, struct errbuf *err)
{
    static const struct grpc_call_limits limits = {GCS_CONNECT_TIMEOUT_MS, GCS_LIST_TIMEOUT_MS,
                                                   GCS_NODE_LIST_MAX_BYTES};
    uint8_t req[32 + DNS_NAME_MAX_BYTES];
    size_t len = gcs_encode_nodes_request(form, node_name, state, req, sizeof(req));
    memset(reply, 0, sizeof(*reply)); /* the caller frees it whatever happens */
    if (len == 0 && form != GCS_NODES_UNFILTERED)
        return errbuf_set(err, "GetAllNodeInfo: node name too long");
    return grpc_call(c, ip, port, "/ray.rpc.NodeInfoGcsService/GetAllNodeInfo", req, len, &limits, reply, err);
}

int gcs_count_nodes(struct grpc_client *c, const char *ip, int port, enum gcs_nodes_form form,
                    struct gcs_node_counts *out, struct errbuf *err)
{
    struct grpc_reply reply;
    int rc = get_nodes(c, ip, port, form, NULL, NODE_STATE_ALIVE, &reply, err);
    if (rc == 0)
        rc = gcs_decode_node_counts(reply.msg, reply.msg_len, out, err);
    grpc_reply_free(&reply);
    return rc;
}

/* Whether a GcsNodeInfo field is node_name and says name: checked even though the request
 * selected by name, since a GCS that ignores the selector answers with every node. */
static bool names(const struct pb_field *nf, const char *name, size_t name_len)
{
    return nf->number == 12 && nf->wire == PB_BYTES && nf->len == name_len && memcmp(nf->data, name, name_len) == 0;
}

int gcs_decode_find_node(const uint8_t *msg, size_t len, const char *node_name, uint8_t id[GCS_NODE_ID_BYTES],
                         bool *found, struct errbuf *err)
{
    struct pb_reader r, nr;
    struct pb_field f, nf;
    size_t name_len = strlen(node_name);
    int rc;
    *found = false;
    pb_reader_init(&r, msg, len);
    while ((rc = pb_next(&r, &f)) == PB_FIELD) {
        const uint8_t *node_id = NULL;
        size_t node_id_len = 0;
        bool alive = true, match = false;
        int nrc;
        if (f.number != 2 || f.wire != PB_BYTES)
            continue;
        pb_reader_init(&nr, f.data, f.len);
        while ((nrc = pb_next(&nr, &nf)) == PB_FIELD) {
            if (nf.number == 1 && nf.wire == PB_BYTES) {
                node_id = nf.data;
                node_id_len = nf.len;
            } else if (names(&nf, node_name, name_len)) {
                match = true;
            } else if (nf.number == 7 && nf.wire == PB_VARINT) {
                alive = nf.varint == NODE_STATE_ALIVE;
            }
        }
        if (nrc < 0)
            return errbuf_set(err, "malformed GcsNodeInfo in GetAllNodeInfoReply");
        if (match && alive) {
            if (node_id_len != GCS_NODE_ID_BYTES)
                return errbuf_set(err, "node %s has a %zu-byte id (expected %d)", node_name, node_id_len,
                                  GCS_NODE_ID_BYTES);
            memcpy(id, node_id, GCS_NODE_ID_BYTES);
            *found = true;
            return 0;
        }
    }
    if (rc < 0)
        return errbuf_set(err, "malformed GetAllNodeInfoReply");
    return 0;
}

int gcs_find_node(struct grpc_client *c, const char *ip, int port, enum gcs_nodes_form form, const char *node_name,
                  uint8_t id[GCS_NODE_ID_BYTES], bool *found, struct errbuf *err)
{
    struct grpc_reply reply;
    int rc = get_nodes(c, ip, port, form, node_name, NODE_STATE_ALIVE, &reply, err);
    *found = false;
    if (rc == 0)
        rc = gcs_decode_find_node(reply.msg, reply.msg_len, node_name, id, found, err);
    grpc_reply_free(&reply);
    return rc;
}

const char *gcs_departure_name(enum gcs_departure d)
{
    switch (d) {
    case GCS_DEPARTURE_EXPECTED:
        return "EXPECTED_TERMINATION";
    case GCS_DEPARTURE_UNEXPECTED:
        return "UNEXPECTED_TERMINATION";
    case GCS_DEPARTURE_DRAIN_PREEMPTED:
        return "AUTOSCALER_DRAIN_PREEMPTED";
    case GCS_DEPARTURE_DRAIN_IDLE:
        return "AUTOSCALER_DRAIN_IDLE";
    case GCS_DEPARTURE_UNKNOWN:
        break;
    }
    return "UNSPECIFIED";
}

/* NodeDeathInfo { reason = 1 }; an unknown value reads as UNSPECIFIED. */
static enum gcs_departure decode_death_info(const uint8_t *msg, size_t len)
{
    struct pb_reader r;
    struct pb_field f;
    enum gcs_departure how = GCS_DEPARTURE_UNKNOWN;
    pb_reader_init(&r, msg, len);
    while (pb_next(&r, &f) == PB_FIELD)
        if (f.number == 1 && f.wire == PB_VARINT)
            how = f.varint <= GCS_DEPARTURE_DRAIN_IDLE ? (enum gcs_departure)f.varint : GCS_DEPARTURE_UNKNOWN;
    return how;
}

int gcs_decode_departure(const uint8_t *msg, size_t len, const char *node_name, enum gcs_departure *how,
                         uint64_t *ended_ms, struct errbuf *err)
{
    struct pb_reader r, nr;
    struct pb_field f, nf;
    size_t name_len = strlen(node_name);
    uint64_t latest_end = 0;
    bool found = false;
    int rc;
    pb_reader_init(&r, msg, len);
    while ((rc = pb_next(&r, &f)) == PB_FIELD) {
        bool dead = false, match = false;
        uint64_t end = 0;
        enum gcs_departure node_how = GCS_DEPARTURE_UNKNOWN;
        int nrc;
        if (f.number != 2 || f.wire != PB_BYTES)
            continue;
        pb_reader_init(&nr, f.data, f.len);
        while ((nrc = pb_next(&nr, &nf)) == PB_FIELD) {
            if (names(&nf, node_name, name_len))
                match = true;
            else if (nf.number == 7 && nf.wire == PB_VARINT)
                dead = nf.varint == NODE_STATE_DEAD;
            else if (nf.number == 24 && nf.wire == PB_VARINT) /* end_time_ms */
                end = nf.varint;
            else if (nf.number == 29 && nf.wire == PB_BYTES) /* death_info */
                node_how = decode_death_info(nf.data, nf.len);
        }
        if (nrc < 0)
            return errbuf_set(err, "malformed GcsNodeInfo in GetAllNodeInfoReply");
        /* A re-used name has one DEAD entry per node that had it: the last one to end counts. */
        if (match && dead && (!found || end >= latest_end)) {
            found = true;
            latest_end = end;
            *how = node_how;
            if (ended_ms)
                *ended_ms = end;
        }
    }
    if (rc < 0)
        return errbuf_set(err, "malformed GetAllNodeInfoReply");
    return found ? 0 : errbuf_set(err, "no DEAD node named %s in the GCS", node_name);
}

int gcs_node_departure(struct grpc_client *c, const char *ip, int port, enum gcs_nodes_form form, const char *node_name,
                       enum gcs_departure *how, uint64_t *ended_ms, struct errbuf *err)
{
    struct grpc_reply reply;
    int rc = get_nodes(c, ip, port, form, node_name, NODE_STATE_DEAD, &reply, err);
    if (rc == 0)
        rc = gcs_decode_departure(reply.msg, reply.msg_len, node_name, how, ended_ms, err);
    grpc_reply_free(&reply);
    return rc;
}

/* Calls a small RPC; on success the reply's message is decoded by the caller. */
static int small_call(struct grpc_client *c, const char *ip, int port, const char *path, const struct pb_writer *w,
                      struct grpc_reply *reply, struct errbuf *err)
{
    static const struct grpc_call_limits limits = {GCS_CONNECT_TIMEOUT_MS, GCS_CALL_TIMEOUT_MS,
                                                   GCS_SMALL_REPLY_MAX_BYTES};
    memset(reply, 0, sizeof(*reply)); /* the caller frees it whatever happens */
    if (w->overflow)
        return errbuf_set(err, "request too large");
    return grpc_call(c, ip, port, path, w->buf, w->len, &limits, reply, err);
}

/* GcsStatus.code of a reply's field 1 (0 when absent, i.e. OK). */
static int status_code(const uint8_t *msg, size_t len, int64_t *code)
{
    struct pb_reader r, sr;
    struct pb_field f, sf;
    int rc;
    *code = 0;
    pb_reader_init(&r, msg, len);
    while ((rc = pb_next(&r, &f)) == PB_FIELD) {
        if (f.number != 1 || f.wire != PB_BYTES)
            continue;
        pb_reader_init(&sr, f.data, f.len);
        while ((rc = pb_next(&sr, &sf)) == PB_FIELD) {
            if (sf.number == 1 && sf.wire == PB_VARINT)
                *code = (int64_t)sf.varint;
        }
        if (rc < 0)
            return -1;
    }
    return rc;
}

int gcs_decode_drain(const uint8_t *msg, size_t len, struct errbuf *err)
{
    struct pb_reader r;
    struct pb_field f;
    bool accepted = false;
    int rc;
    pb_reader_init(&r, msg, len);
    while ((rc = pb_next(&r, &f)) == PB_FIELD) {
        if (f.number == 1 && f.wire == PB_VARINT)
            accepted = f.varint != 0;
    }
    if (rc < 0)
        return errbuf_set(err, "malformed DrainNodeReply");
    if (!accepted)
        return errbuf_set(err, "the GCS rejected the drain");
    return 0;
}

int gcs_drain_node(struct grpc_client *c, const char *ip, int port, const uint8_t id[GCS_NODE_ID_BYTES],
                   const char *reason_message, int64_t deadline_unix_ms, struct errbuf *err)
{
    uint8_t req[1024];
    struct pb_writer w;
    struct grpc_reply reply;
    int rc;

    pb_writer_init(&w, req, sizeof(req));
    pb_put_bytes(&w, 1, id, GCS_NODE_ID_BYTES);
    pb_put_varint(&w, 2, 2 /* PREEMPTION */);
    pb_put_bytes(&w, 3, reason_message, strlen(reason_message));
    pb_put_varint(&w, 4, (uint64_t)deadline_unix_ms);
    rc = small_call(c, ip, port, "/ray.rpc.autoscaler.AutoscalerStateService/DrainNode", &w, &reply, err);
    if (rc == 0)
        rc = gcs_decode_drain(reply.msg, reply.msg_len, err);
    grpc_reply_free(&reply);
    return rc;
}

int gcs_decode_cluster_id(const uint8_t *msg, size_t len, uint8_t id[GCS_CLUSTER_ID_MAX_BYTES], size_t *id_len,
                          struct errbuf *err)
{
    struct pb_reader r;
    struct pb_field f;
    int rc;
    *id_len = 0;
    pb_reader_init(&r, msg, len);
    while ((rc = pb_next(&r, &f)) == PB_FIELD) {
        if (f.number == 2 && f.wire == PB_BYTES && f.len <= GCS_CLUSTER_ID_MAX_BYTES) {
            memcpy(id, f.data, f.len);
            *id_len = f.len;
        }
    }
    if (rc < 0 || *id_len == 0)
        return errbuf_set(err, "GetClusterIdReply without a cluster id");
    return 0;
}

int gcs_cluster_id(struct grpc_client *c, const char *ip, int port, uint8_t *id, size_t *len, struct errbuf *err)
{
    struct pb_writer w;
    struct grpc_reply reply;
    int rc;
    pb_writer_init(&w, NULL, 0);
    *len = 0;
    rc = small_call(c, ip, port, "/ray.rpc.NodeInfoGcsService/GetClusterId", &w, &reply, err);
    if (rc == 0)
        rc = gcs_decode_cluster_id(reply.msg, reply.msg_len, id, len, err);
    grpc_reply_free(&reply);
    return rc;
}

int gcs_decode_kv_put(const uint8_t *msg, size_t len, struct errbuf *err)
{
    int64_t code = 0;
    if (status_code(msg, len, &code) < 0 || code != 0)
        return errbuf_set(err, "InternalKVPut failed (status %lld)", (long long)code);
    return 0;
}

int gcs_kv_put(struct grpc_client *c, const char *ip, int port, const char *key, const char *value, struct errbuf *err)
{
    uint8_t req[1024];
    struct pb_writer w;
    struct grpc_reply reply;
    int rc;
    pb_writer_init(&w, req, sizeof(req));
    pb_put_bytes(&w, 1, key, strlen(key));
    pb_put_bytes(&w, 2, value, strlen(value));
    pb_put_varint(&w, 3, 1);
    pb_put_bytes(&w, 4, GCS_KV_NAMESPACE, strlen(GCS_KV_NAMESPACE));
    rc = small_call(c, ip, port, "/ray.rpc.InternalKVGcsService/InternalKVPut", &w, &reply, err);
    if (rc == 0)
        rc = gcs_decode_kv_put(reply.msg, reply.msg_len, err);
    grpc_reply_free(&reply);
    return rc;
}

int gcs_decode_kv_get(const uint8_t *msg, size_t len, char *value, size_t cap, bool *found, struct errbuf *err)
{
    struct pb_reader r;
    struct pb_field f;
    int rc;
    *found = false;
    pb_reader_init(&r, msg, len);
    while ((rc = pb_next(&r, &f)) == PB_FIELD) {
        if (f.number == 2 && f.wire == PB_BYTES && cap > 0) {
            size_t n = f.len < cap - 1 ? f.len : cap - 1;
            memcpy(value, f.data, n);
            value[n] = '\0';
            *found = true;
        }
    }
    return rc < 0 ? errbuf_set(err, "malformed InternalKVGetReply") : 0;
}

int gcs_kv_get(struct grpc_client *c, const char *ip, int port, const char *key, char *value, size_t cap, bool *found,
               struct errbuf *err)
{
    uint8_t req[512];
    struct pb_writer w;
    struct grpc_reply reply;
    int rc;
    pb_writer_init(&w, req, sizeof(req));
    pb_put_bytes(&w, 1, key, strlen(key));
    pb_put_bytes(&w, 2, GCS_KV_NAMESPACE, strlen(GCS_KV_NAMESPACE));
    *found = false;
    rc = small_call(c, ip, port, "/ray.rpc.InternalKVGcsService/InternalKVGet", &w, &reply, err);
    if (rc == 0)
        rc = gcs_decode_kv_get(reply.msg, reply.msg_len, value, cap, found, err);
    grpc_reply_free(&reply);
    return rc;
}

int gcs_decode_ray_version(const uint8_t *msg, size_t len, char version[GCS_RAY_VERSION_MAX_BYTES], struct errbuf *err)
{
    struct pb_reader r;
    struct pb_field f;
    int rc;
    version[0] = '\0';
    pb_reader_init(&r, msg, len);
    while ((rc = pb_next(&r, &f)) == PB_FIELD) {
        if (f.number != 2 || f.wire != PB_BYTES)
            continue;
        if (f.len == 0 || f.len >= GCS_RAY_VERSION_MAX_BYTES)
            return errbuf_set(err, "CheckAliveReply: a ray_version of %zu bytes", f.len);
        for (size_t i = 0; i < f.len; i++) /* it is logged: printable ASCII only */
            if (f.data[i] < 0x21 || f.data[i] > 0x7e)
                return errbuf_set(err, "CheckAliveReply: ray_version is not printable");
        memcpy(version, f.data, f.len);
        version[f.len] = '\0';
    }
    if (rc < 0)
        return errbuf_set(err, "malformed CheckAliveReply");
    return version[0] ? 0 : errbuf_set(err, "CheckAliveReply without a ray_version");
}

int gcs_ray_version(struct grpc_client *c, const char *ip, int port, char version[GCS_RAY_VERSION_MAX_BYTES],
                    struct errbuf *err)
{
    struct pb_writer w;
    struct grpc_reply reply;
    int rc;
    pb_writer_init(&w, NULL, 0);
    version[0] = '\0';
    rc = small_call(c, ip, port, "/ray.rpc.NodeInfoGcsService/CheckAlive", &w, &reply, err);
    if (rc == 0)
        rc = gcs_decode_ray_version(reply.msg, reply.msg_len, version, err);
    grpc_reply_free(&reply);
    return rc;
}
