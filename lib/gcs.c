/* Ray GCS RPCs over lib/grpc.c. Field numbers (Ray 2.60, ray.rpc):
 *   grpc.health.v1.HealthCheckResponse { ServingStatus status = 1; }  SERVING = 1
 *   GetAllNodeInfoReply { GcsStatus status = 1; repeated GcsNodeInfo node_info_list = 2; }
 *   GcsNodeInfo { bytes node_id = 1; string node_manager_address = 2; GcsNodeState state = 7;
 *                 bool is_head_node = 25; }  ALIVE = 0 (so an absent state means ALIVE)
 * Choosing when to call them is the caller's job. */
#include "gcs.h"

#include <string.h>

#include "grpc_frame.h"
#include "protobuf.h"

#define HEALTH_SERVING 1
#define NODE_STATE_ALIVE 0

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
    while ((rc = pb_next(&r, &f)) == 1) {
        if (f.number == 1 && f.wire == PB_VARINT)
            status = f.varint;
    }
    if (rc < 0)
        return errbuf_set(err, "malformed HealthCheckResponse");
    if (status != HEALTH_SERVING)
        return errbuf_set(err, "health status %s", status == 2 ? "NOT_SERVING" : status == 0 ? "UNKNOWN" : "unexpected");
    return 0;
}

static int decode_node(const uint8_t *msg, size_t len, bool *alive, bool *head)
{
    struct pb_reader r;
    struct pb_field f;
    int rc;
    *alive = true;
    *head = false;
    pb_reader_init(&r, msg, len);
    while ((rc = pb_next(&r, &f)) == 1) {
        if (f.number == 7 && f.wire == PB_VARINT)
            *alive = f.varint == NODE_STATE_ALIVE;
        else if (f.number == 25 && f.wire == PB_VARINT)
            *head = f.varint != 0;
    }
    return rc;
}

int gcs_decode_node_counts(const uint8_t *msg, size_t len, struct gcs_node_counts *out,
                           struct errbuf *err)
{
    struct pb_reader r;
    struct pb_field f;
    int rc;
    out->alive = 0;
    out->alive_workers = 0;
    pb_reader_init(&r, msg, len);
    while ((rc = pb_next(&r, &f)) == 1) {
        bool alive, head;
        if (f.number != 2 || f.wire != PB_BYTES)
            continue;
        if (decode_node(f.data, f.len, &alive, &head) < 0)
            return errbuf_set(err, "malformed GcsNodeInfo in GetAllNodeInfoReply");
        out->alive += alive;
        out->alive_workers += alive && !head;
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

int gcs_count_nodes(struct grpc_client *c, const char *ip, int port, struct gcs_node_counts *out,
                    struct errbuf *err)
{
    static const struct grpc_call_limits limits = {GCS_CONNECT_TIMEOUT_MS, GCS_LIST_TIMEOUT_MS,
                                                   GCS_NODE_LIST_MAX_BYTES};
    uint8_t req[16];
    struct pb_writer w;
    struct grpc_reply reply;
    int rc;

    /* state_filter = ALIVE, sent explicitly: the field has presence, and ALIVE is 0. */
    pb_writer_init(&w, req, sizeof(req));
    pb_put_varint(&w, 3, NODE_STATE_ALIVE);
    rc = grpc_call(c, ip, port, "/ray.rpc.NodeInfoGcsService/GetAllNodeInfo", req, w.len, &limits, &reply, err);
    if (rc == 0)
        rc = gcs_decode_node_counts(reply.msg, reply.msg_len, out, err);
    grpc_reply_free(&reply);
    return rc;
}
