/* libFuzzer target: lib/ray/gcs.c's decoders on any bytes a GCS (or something posing as one) could
 * answer: HealthCheckResponse, GetAllNodeInfoReply (counted, searched for a node by name, and for
 * how a DEAD one left),
 * GetClusterIdReply, CheckAliveReply and the InternalKV replies. Counts stay consistent (workers <= alive), ids
 * have their advertised size, values stay NUL-terminated within their buffer. */
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "gcs.h"

/* As the prober's reply sizes its value (struct prober_reply.value). */
#define FUZZ_VALUE_BYTES 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gcs_node_counts counts;
    struct errbuf err;
    uint8_t node_id[GCS_NODE_ID_BYTES], cluster_id[GCS_CLUSTER_ID_MAX_BYTES];
    char value[FUZZ_VALUE_BYTES];
    size_t cluster_id_len = 0;
    bool found;
    int rc;

    (void)gcs_decode_health(data, size, &err);
    if (gcs_decode_node_counts(data, size, &counts, &err) == 0 &&
        (counts.alive < 0 || counts.alive_workers < 0 || counts.alive_workers > counts.alive ||
         counts.draining_workers < 0 || counts.draining_workers > counts.alive_workers || (size_t)counts.alive > size))
        __builtin_trap();
    (void)gcs_decode_find_node(data, size, "10.0.0.1", node_id, &found, &err);
    (void)gcs_decode_find_node(data, size, "", node_id, &found, &err);
    (void)gcs_decode_find_node(data, size, "vm-head", node_id, &found, &err);
    {
        enum gcs_departure how = GCS_DEPARTURE_UNKNOWN;
        if (gcs_decode_departure(data, size, "10.0.0.1", &how, NULL, &err) == 0 &&
            (how < GCS_DEPARTURE_UNKNOWN || how > GCS_DEPARTURE_DRAIN_IDLE))
            __builtin_trap();
    }
    if (gcs_decode_cluster_id(data, size, cluster_id, &cluster_id_len, &err) == 0 &&
        (cluster_id_len == 0 || cluster_id_len > GCS_CLUSTER_ID_MAX_BYTES))
        __builtin_trap();
    rc = gcs_decode_kv_get(data, size, value, sizeof(value), &found, &err);
    if (rc < -1 || rc > 0 || (rc == 0 && found && !fuzz_terminated(value, sizeof(value))))
        __builtin_trap();
    (void)gcs_decode_kv_put(data, size, &err);
    {
        char version[GCS_RAY_VERSION_MAX_BYTES];
        if (gcs_decode_ray_version(data, size, version, &err) == 0 &&
            (!fuzz_terminated(version, sizeof(version)) || !version[0]))
            __builtin_trap();
    }
    if (!fuzz_terminated(err.msg, sizeof(err.msg)))
        __builtin_trap();
    return 0;
}
