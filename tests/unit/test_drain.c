/* Unit tests for lib/ray/drain.c: the order of requests, what counts as "left", and the deadline. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "drain.h"

static struct prober_reply answer(enum prober_status status, const char *value, const char *reason)
{
    struct prober_reply r;
    memset(&r, 0, sizeof(r));
    r.status = status;
    snprintf(r.value, sizeof(r.value), "%s", value);
    snprintf(r.reason, sizeof(r.reason), "%s", reason);
    return r;
}

/* The answer to PROBE_DEPARTURE. */
static struct prober_reply departed(enum gcs_departure how)
{
    struct prober_reply r = answer(PROBER_OK, "", "");
    r.departure = how;
    return r;
}

static void test_drain_then_watch_until_gone(void **state)
{
    struct drain d;
    struct prober_request req;
    struct prober_reply r;
    long wake;
    (void)state;
    drain_begin(&d, "10.0.0.1", 6379, "10.0.0.7", "evicted", 10000, 1000);
    assert_int_equal(drain_step(&d, 1000, &req, &wake), DRAIN_NEXT_ASK);
    assert_int_equal(req.op, PROBE_DRAIN);
    assert_string_equal(req.addr, "10.0.0.1");
    assert_int_equal(req.port, 6379);
    assert_string_equal(req.name, "10.0.0.7");
    assert_string_equal(req.text, "evicted");
    assert_true(req.deadline_unix_ms > 0);
    assert_int_equal(req.budget_ms, 10000); /* no RPC outlives the drain's deadline */
    r = answer(PROBER_OK, "abcd", "");
    drain_reply(&d, 1010, &r);
    /* Nothing until the first look is due. */
    assert_int_equal(drain_step(&d, 1100, &req, &wake), DRAIN_NEXT_SLEEP);
    assert_int_equal(wake, 1010 + DRAIN_POLL_MS);
    assert_int_equal(drain_step(&d, wake, &req, &wake), DRAIN_NEXT_ASK);
    assert_int_equal(req.op, PROBE_FIND_NODE);
    assert_int_equal(req.budget_ms, 11000 - wake);
    /* Still there: keep looking. A GCS that did not answer proves nothing either. */
    r = answer(PROBER_OK, "", "");
    drain_reply(&d, 1300, &r);
    assert_int_equal(d.state, DRAIN_WATCHING);
    r = answer(PROBER_FAILED, "", "timeout");
    drain_reply(&d, 1600, &r);
    assert_int_equal(d.state, DRAIN_WATCHING);
    /* The status says "gone", never the reason's text. */
    r = answer(PROBER_FAILED, "", "no ALIVE node named 10.0.0.7 in the GCS");
    drain_reply(&d, 1650, &r);
    assert_int_equal(d.state, DRAIN_WATCHING);
    r = answer(PROBER_OK, "", ""); /* an answer: the failures in a row start over */
    drain_reply(&d, 1680, &r);
    drain_reply(&d, 1700, NULL);
    assert_int_equal(d.state, DRAIN_WATCHING);
    r = answer(PROBER_ABSENT, "", "no ALIVE node named 10.0.0.7 in the GCS");
    drain_reply(&d, 2000, &r);
    assert_int_equal(d.state, DRAIN_DONE);
    assert_int_equal(d.outcome, DRAIN_LEFT);
    assert_int_equal(drain_elapsed_ms(&d, 99999), 1000);
    assert_int_equal(drain_step(&d, 2100, &req, &wake), DRAIN_NEXT_DONE);
}

/* Accepted, then the GCS stops answering (the head's pod deleted with this one): after
 * DRAIN_GCS_LOST_LOOKS silent looks in a row the drain ends, saying so, instead of looking until
 * its deadline (half the grace period) at a GCS that is gone. */
static void test_gcs_lost_after_acceptance(void **state)
{
    struct drain d;
    struct prober_request req;
    struct prober_reply r = answer(PROBER_OK, "abcd", "");
    long wake, now = 1000;
    int looks = 0;
    enum drain_next step;
    (void)state;
    drain_begin(&d, "10.0.0.1", 6379, "10.0.0.7", "x", 20000, now);
    assert_int_equal(drain_step(&d, now, &req, &wake), DRAIN_NEXT_ASK);
    drain_reply(&d, now, &r);
    r = answer(PROBER_FAILED, "", "connect to 10.0.0.1:6379: Connection refused");
    while ((step = drain_step(&d, now, &req, &wake)) != DRAIN_NEXT_DONE) {
        if (step == DRAIN_NEXT_SLEEP) {
            now = wake;
            continue;
        }
        assert_int_equal(req.op, PROBE_FIND_NODE);
        looks++;
        drain_reply(&d, now, &r);
    }
    assert_int_equal(d.outcome, DRAIN_GCS_LOST);
    assert_int_equal(looks, DRAIN_GCS_LOST_LOOKS);
    assert_string_equal(d.detail, "connect to 10.0.0.1:6379: Connection refused");
    assert_true(now - 1000 <= DRAIN_GCS_LOST_LOOKS * DRAIN_POLL_MS);
    assert_string_equal(drain_outcome_name(d.outcome), "gcs-lost");
}

static void test_refused_drain_fails(void **state)
{
    struct drain d;
    struct prober_request req;
    struct prober_reply r = answer(PROBER_FAILED, "", "no ALIVE node named 10.0.0.7 in the GCS");
    long wake;
    (void)state;
    drain_begin(&d, "10.0.0.1", 6379, "10.0.0.7", "x", 10000, 0);
    assert_int_equal(drain_step(&d, 0, &req, &wake), DRAIN_NEXT_ASK);
    drain_reply(&d, 5, &r);
    assert_int_equal(d.state, DRAIN_DONE);
    assert_int_equal(d.outcome, DRAIN_FAILED);
    assert_string_equal(d.detail, "no ALIVE node named 10.0.0.7 in the GCS");
}

static void test_deadline(void **state)
{
    struct drain d;
    struct prober_request req;
    struct prober_reply r = answer(PROBER_OK, "", "");
    long wake, now = 0;
    (void)state;
    drain_begin(&d, "10.0.0.1", 6379, "10.0.0.7", "x", 1000, 0);
    assert_int_equal(drain_step(&d, now, &req, &wake), DRAIN_NEXT_ASK);
    drain_reply(&d, now, &r);
    while (drain_step(&d, now, &req, &wake) != DRAIN_NEXT_DONE) {
        now = wake;
        if (req.op == PROBE_FIND_NODE)
            drain_reply(&d, now, &r); /* always still there */
        memset(&req, 0, sizeof(req));
    }
    assert_int_equal(d.outcome, DRAIN_DEADLINE);
    assert_true(d.finished_ms >= 1000 && d.finished_ms < 1000 + DRAIN_POLL_MS);
    /* The wake-up never overshoots the deadline. */
    assert_true(now <= 1000);
}

/* Begins a drain whose DrainNode finds no ALIVE node, and answers its question with R. */
static void drain_gone_node(struct drain *d, const struct prober_reply *how)
{
    struct prober_request req;
    struct prober_reply r = answer(PROBER_ABSENT, "", "no ALIVE node named 10.0.0.7 in the GCS");
    long wake;
    drain_begin(d, "10.0.0.1", 6379, "10.0.0.7", "evicted", 10000, 1000);
    assert_int_equal(drain_step(d, 1000, &req, &wake), DRAIN_NEXT_ASK);
    drain_reply(d, 1010, &r);
    assert_int_equal(d->state, DRAIN_ASKING);
    assert_true(drain_in_progress(d));
    assert_int_equal(drain_step(d, 1010, &req, &wake), DRAIN_NEXT_ASK);
    assert_int_equal(req.op, PROBE_DEPARTURE);
    assert_string_equal(req.name, "10.0.0.7");
    drain_reply(d, 1020, how);
    assert_false(drain_in_progress(d));
}

/* No ALIVE node to drain: the drain asks how it left. A drain before this one (the sidecar's, in
 * preStop) is a drained node; a death is not, and says so; no answer leaves the first one. */
static void test_node_drained_before(void **state)
{
    struct drain d;
    struct prober_reply r = departed(GCS_DEPARTURE_DRAIN_PREEMPTED);
    (void)state;
    drain_gone_node(&d, &r);
    assert_int_equal(d.outcome, DRAIN_LEFT);
    assert_true(d.earlier);
    assert_int_equal(d.departure, GCS_DEPARTURE_DRAIN_PREEMPTED);
    assert_non_null(strstr(d.detail, "drained already"));

    r = departed(GCS_DEPARTURE_UNEXPECTED);
    drain_gone_node(&d, &r);
    assert_int_equal(d.outcome, DRAIN_FAILED);
    assert_non_null(strstr(d.detail, "not drained (UNEXPECTED_TERMINATION)"));

    r = answer(PROBER_FAILED, "", "no DEAD node named 10.0.0.7 in the GCS");
    drain_gone_node(&d, &r);
    assert_int_equal(d.outcome, DRAIN_FAILED);
    assert_non_null(strstr(d.detail, "no ALIVE node"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_drain_then_watch_until_gone),
        cmocka_unit_test(test_node_drained_before),
        cmocka_unit_test(test_gcs_lost_after_acceptance),
        cmocka_unit_test(test_refused_drain_fails),
        cmocka_unit_test(test_deadline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
