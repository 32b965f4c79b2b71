/* Unit tests for lib/ray/gcs.c's decoders: health status, node counts and node lookup, on replies
 * shaped like Ray 2.60's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "gcs.h"
#include "protobuf.h"

static void test_health_statuses(void **state)
{
    struct errbuf err;
    (void)state;
    assert_int_equal(gcs_decode_health((const uint8_t *)"\x08\x01", 2, &err), 0);
    assert_int_equal(gcs_decode_health((const uint8_t *)"\x08\x02", 2, &err), -1);
    assert_non_null(strstr(err.msg, "NOT_SERVING"));
    assert_int_equal(gcs_decode_health((const uint8_t *)"", 0, &err), -1);
    assert_non_null(strstr(err.msg, "UNKNOWN"));
    assert_int_equal(gcs_decode_health((const uint8_t *)"\x08", 1, &err), -1);
    assert_non_null(strstr(err.msg, "malformed"));
}

/* Every node's node_manager_address: nodes are found by node_name (field 12), never by address,
 * so one address for all (hosts behind one NAT) must not confuse the lookup. */
#define SHARED_ADDRESS "192.168.7.7"

/* Builds a GcsNodeInfo: id, address, name, state (omitted when ALIVE, as proto3 does), head flag. */
static size_t node(uint8_t *out, size_t cap, uint8_t id_byte, size_t id_len, const char *name, int dead, int head)
{
    uint8_t id[32];
    struct pb_writer w;
    memset(id, id_byte, sizeof(id));
    pb_writer_init(&w, out, cap);
    pb_put_bytes(&w, 1, id, id_len);
    pb_put_bytes(&w, 2, SHARED_ADDRESS, strlen(SHARED_ADDRESS));
    pb_put_bytes(&w, 12, name, strlen(name));
    if (dead)
        pb_put_varint(&w, 7, 1);
    if (head)
        pb_put_varint(&w, 25, 1);
    pb_put_varint(&w, 23, 1763800000000ULL); /* start_time_ms: an unrelated field is skipped */
    return w.len;
}

static size_t node_list(uint8_t *out, size_t cap)
{
    uint8_t n[128];
    struct pb_writer w;
    pb_writer_init(&w, out, cap);
    pb_put_bytes(&w, 2, n, node(n, sizeof(n), 0xaa, 28, "10.0.0.1", 0, 1));
    pb_put_bytes(&w, 2, n, node(n, sizeof(n), 0xbb, 28, "10.0.0.2", 0, 0));
    pb_put_bytes(&w, 2, n, node(n, sizeof(n), 0xcc, 28, "10.0.0.3", 1, 0));
    pb_put_bytes(&w, 2, n, node(n, sizeof(n), 0xdd, 27, "10.0.0.4", 0, 0));
    pb_put_bytes(&w, 2, n, node(n, sizeof(n), 0xee, 28, "vm-head", 0, 0));
    return w.len;
}

/* A node with its state_snapshot { state }: DRAINING (3) or ACTIVE (2). */
static size_t snapshot_node(uint8_t *out, size_t cap, uint8_t id_byte, int snapshot, int dead, int head)
{
    uint8_t snap[8];
    struct pb_writer w, sw;
    size_t len = node(out, cap, id_byte, 28, "10.0.0.9", dead, head);
    pb_writer_init(&sw, snap, sizeof(snap));
    pb_put_varint(&sw, 1, (uint64_t)snapshot);
    pb_writer_init(&w, out + len, cap - len);
    pb_put_bytes(&w, 28, sw.buf, sw.len);
    return len + w.len;
}

/* ALIVE nodes counted, the head apart, DEAD ones not; of the ALIVE workers, those whose raylet
 * reports DRAINING (a DRAINING head or DEAD node is not a worker still draining). */
static void test_node_counts(void **state)
{
    uint8_t buf[1024], n[128];
    struct gcs_node_counts counts;
    struct errbuf err;
    struct pb_writer w;
    size_t len = node_list(buf, sizeof(buf));
    (void)state;
    assert_int_equal(gcs_decode_node_counts(buf, len, &counts, &err), 0);
    assert_int_equal(counts.alive, 4);
    assert_int_equal(counts.alive_workers, 3);
    assert_int_equal(counts.draining_workers, 0);
    pb_writer_init(&w, buf + len, sizeof(buf) - len);
    pb_put_bytes(&w, 2, n, snapshot_node(n, sizeof(n), 0x11, 3, 0, 0)); /* draining */
    pb_put_bytes(&w, 2, n, snapshot_node(n, sizeof(n), 0x12, 2, 0, 0)); /* active */
    pb_put_bytes(&w, 2, n, snapshot_node(n, sizeof(n), 0x13, 3, 0, 1)); /* the head, draining */
    pb_put_bytes(&w, 2, n, snapshot_node(n, sizeof(n), 0x14, 3, 1, 0)); /* gone */
    assert_int_equal(gcs_decode_node_counts(buf, len + w.len, &counts, &err), 0);
    assert_int_equal(counts.alive, 7);
    assert_int_equal(counts.alive_workers, 5);
    assert_int_equal(counts.draining_workers, 1);
}

/* The node is found by its exact name (an IP or a host name); a DEAD one is not (the GCS
 * answered: not found, not an error); a wrong-length id is an error (DrainNode must never be sent
 * one). The reply holds other nodes too, as from a GCS that ignores the selector: only the name
 * decides, never the node_manager_address. */
static void test_find_node(void **state)
{
    uint8_t buf[1024], id[GCS_NODE_ID_BYTES], want[GCS_NODE_ID_BYTES];
    struct errbuf err;
    bool found = false;
    size_t len = node_list(buf, sizeof(buf));
    (void)state;
    memset(want, 0xbb, sizeof(want));
    assert_int_equal(gcs_decode_find_node(buf, len, "10.0.0.2", id, &found, &err), 0);
    assert_true(found);
    assert_memory_equal(id, want, sizeof(want));
    assert_int_equal(gcs_decode_find_node(buf, len, "10.0.0.3", id, &found, &err), 0);
    assert_false(found);
    found = true;
    assert_int_equal(gcs_decode_find_node(buf, len, "10.0.0.", id, &found, &err), 0);
    assert_false(found);
    assert_int_equal(gcs_decode_find_node(buf, len, "10.0.0.4", id, &found, &err), -1);
    assert_non_null(strstr(err.msg, "27-byte id"));
    memset(want, 0xee, sizeof(want));
    assert_int_equal(gcs_decode_find_node(buf, len, "vm-head", id, &found, &err), 0);
    assert_true(found);
    assert_memory_equal(id, want, sizeof(want));
    found = true;
    assert_int_equal(gcs_decode_find_node(buf, len, SHARED_ADDRESS, id, &found, &err), 0);
    assert_false(found);
}

/* A DEAD node at the address: how it left, the entry that ended last winning (an address a
 * re-created pod used again has one entry per node). */
static size_t dead_node(uint8_t *out, size_t cap, const char *name, uint64_t end_ms, int reason)
{
    uint8_t death[8];
    struct pb_writer w, dw;
    pb_writer_init(&dw, death, sizeof(death));
    pb_put_varint(&dw, 1, (uint64_t)reason);
    pb_writer_init(&w, out, cap);
    pb_put_bytes(&w, 2, SHARED_ADDRESS, strlen(SHARED_ADDRESS));
    pb_put_bytes(&w, 12, name, strlen(name));
    pb_put_varint(&w, 7, 1);
    pb_put_varint(&w, 24, end_ms);
    pb_put_bytes(&w, 29, dw.buf, dw.len);
    return w.len;
}

static void test_departure(void **state)
{
    uint8_t buf[1024], n[128];
    struct pb_writer w;
    struct errbuf err;
    enum gcs_departure how = GCS_DEPARTURE_UNKNOWN;
    uint64_t ended = 0;
    (void)state;
    pb_writer_init(&w, buf, sizeof(buf));
    pb_put_bytes(&w, 2, n, dead_node(n, sizeof(n), "10.0.0.7", 2000, 2));
    pb_put_bytes(&w, 2, n, dead_node(n, sizeof(n), "10.0.0.7", 3000, 3));
    pb_put_bytes(&w, 2, n, dead_node(n, sizeof(n), "10.0.0.7", 1000, 1));
    pb_put_bytes(&w, 2, n, node(n, sizeof(n), 0xaa, 28, "10.0.0.8", 0, 0));
    assert_int_equal(gcs_decode_departure(buf, w.len, "10.0.0.7", &how, &ended, &err), 0);
    assert_int_equal(how, GCS_DEPARTURE_DRAIN_PREEMPTED);
    assert_int_equal(ended, 3000); /* the last to end, and when (rayboot's drained Ray: init/rayrestart.c) */
    assert_string_equal(gcs_departure_name(how), "AUTOSCALER_DRAIN_PREEMPTED");
    /* An ALIVE node is no departure. */
    assert_int_equal(gcs_decode_departure(buf, w.len, "10.0.0.8", &how, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "no DEAD node named 10.0.0.8"));
    /* Selected by name, never by address. */
    assert_int_equal(gcs_decode_departure(buf, w.len, SHARED_ADDRESS, &how, NULL, &err), -1);
    assert_int_equal(gcs_decode_departure(buf, w.len - 2, "10.0.0.7", &how, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "malformed"));
    /* A reason this build does not know reads as UNSPECIFIED. */
    pb_writer_init(&w, buf, sizeof(buf));
    pb_put_bytes(&w, 2, n, dead_node(n, sizeof(n), "10.0.0.7", 1, 99));
    assert_int_equal(gcs_decode_departure(buf, w.len, "10.0.0.7", &how, NULL, &err), 0);
    assert_string_equal(gcs_departure_name(how), "UNSPECIFIED");
}

/* A truncated list is malformed, not a shorter list. */
static void test_truncated_list(void **state)
{
    uint8_t buf[1024];
    struct gcs_node_counts counts;
    struct errbuf err;
    size_t len = node_list(buf, sizeof(buf));
    (void)state;
    assert_int_equal(gcs_decode_node_counts(buf, len - 3, &counts, &err), -1);
    assert_non_null(strstr(err.msg, "malformed"));
}

/* The Ray version picks the GetAllNodeInfoRequest form (gcs.h); a version that does not parse
 * gets the newest. */
static void test_nodes_form_for_version(void **state)
{
    (void)state;
    assert_int_equal(gcs_nodes_form_for("2.60.0"), GCS_NODES_SELECTORS);
    assert_int_equal(gcs_nodes_form_for("2.49.0"), GCS_NODES_SELECTORS);
    assert_int_equal(gcs_nodes_form_for("3.0.0.dev0"), GCS_NODES_SELECTORS);
    assert_int_equal(gcs_nodes_form_for("2.48.0"), GCS_NODES_FILTERS);
    assert_int_equal(gcs_nodes_form_for("2.36.1"), GCS_NODES_FILTERS);
    assert_int_equal(gcs_nodes_form_for("2.35.0"), GCS_NODES_UNFILTERED);
    assert_int_equal(gcs_nodes_form_for("2.9.3"), GCS_NODES_UNFILTERED);
    assert_int_equal(gcs_nodes_form_for("nightly"), GCS_NODES_SELECTORS);
    assert_int_equal(gcs_nodes_form_for(""), GCS_NODES_SELECTORS);
}

/* Each form's bytes, as Ray's own descriptors encode them (2.60 and 2.40's gcs_service.proto):
 * 2.49+ node_selectors{node_name=2}=2, state_filter=3; 2.36-2.48 filters{state=2, node_name=3}=4
 * (never field 3, which was limit there); before: nothing. */
static void test_nodes_request_forms(void **state)
{
    uint8_t buf[64];
    static const uint8_t selectors[] = {0x12, 0x04, 0x12, 0x02, 'w', '1', 0x18, 0x00};
    static const uint8_t selectors_dead_all[] = {0x18, 0x01};
    static const uint8_t filters[] = {0x22, 0x06, 0x10, 0x00, 0x1a, 0x02, 'w', '1'};
    static const uint8_t filters_dead_all[] = {0x22, 0x02, 0x10, 0x01};
    (void)state;
    assert_int_equal(gcs_encode_nodes_request(GCS_NODES_SELECTORS, "w1", 0, buf, sizeof(buf)), sizeof(selectors));
    assert_memory_equal(buf, selectors, sizeof(selectors));
    assert_int_equal(gcs_encode_nodes_request(GCS_NODES_SELECTORS, NULL, 1, buf, sizeof(buf)),
                     sizeof(selectors_dead_all));
    assert_memory_equal(buf, selectors_dead_all, sizeof(selectors_dead_all));
    assert_int_equal(gcs_encode_nodes_request(GCS_NODES_FILTERS, "w1", 0, buf, sizeof(buf)), sizeof(filters));
    assert_memory_equal(buf, filters, sizeof(filters));
    assert_int_equal(gcs_encode_nodes_request(GCS_NODES_FILTERS, NULL, 1, buf, sizeof(buf)), sizeof(filters_dead_all));
    assert_memory_equal(buf, filters_dead_all, sizeof(filters_dead_all));
    assert_int_equal(gcs_encode_nodes_request(GCS_NODES_UNFILTERED, "w1", 0, buf, sizeof(buf)), 0);
    assert_int_equal(gcs_encode_nodes_request(GCS_NODES_SELECTORS, "w1", 0, buf, 4), 0); /* does not fit */
}

/* CheckAliveReply { status = 1; ray_version = 2; raylet_alive = 3 }. */
static void test_ray_version(void **state)
{
    char version[GCS_RAY_VERSION_MAX_BYTES];
    struct errbuf err;
    static const uint8_t reply[] = {0x0a, 0x00, 0x12, 0x06, '2', '.', '6', '0', '.', '0', 0x18, 0x01};
    static const uint8_t no_version[] = {0x0a, 0x00};
    static const uint8_t unprintable[] = {0x12, 0x02, '2', '\n'};
    (void)state;
    assert_int_equal(gcs_decode_ray_version(reply, sizeof(reply), version, &err), 0);
    assert_string_equal(version, "2.60.0");
    assert_int_equal(gcs_decode_ray_version(no_version, sizeof(no_version), version, &err), -1);
    assert_non_null(strstr(err.msg, "without a ray_version"));
    assert_int_equal(gcs_decode_ray_version(unprintable, sizeof(unprintable), version, &err), -1);
    assert_int_equal(gcs_decode_ray_version(reply, sizeof(reply) - 3, version, &err), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_health_statuses),
        cmocka_unit_test(test_node_counts),
        cmocka_unit_test(test_find_node),
        cmocka_unit_test(test_departure),
        cmocka_unit_test(test_nodes_form_for_version),
        cmocka_unit_test(test_nodes_request_forms),
        cmocka_unit_test(test_ray_version),
        cmocka_unit_test(test_truncated_list),
    };
    return cmocka_run_group_tests_name("gcs", tests, NULL, NULL);
}
