/* Unit tests for init/rayrestart.c: how often a worker starts a dying Ray again, and when it stops
 * waiting for a GCS it cannot reach. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "rayrestart.h"

/* A Ray that dies soon after each start is started again after 1, 2 and 4 s, then no more. */
static void test_three_starts_then_none(void **state)
{
    struct rayrestart r;
    long now = 1000;
    (void)state;
    rayrestart_init(&r);
    assert_int_equal(rayrestart_next_ms(&r, now, now + 5000), 1000);
    now += 6000;
    assert_int_equal(rayrestart_next_ms(&r, now, now + 5000), 2000);
    now += 7000;
    assert_int_equal(rayrestart_next_ms(&r, now, now + 5000), 4000);
    now += 9000;
    assert_int_equal(rayrestart_next_ms(&r, now, now + 5000), -1);
    assert_int_equal(rayrestart_next_ms(&r, now, now + 5000), -1);
}

/* A Ray that ran RAYRESTART_STABLE_MS was healthy: its death starts the count and the delays over,
 * even after the budget was spent; one a millisecond short of it does not. */
static void test_a_stable_run_starts_over(void **state)
{
    struct rayrestart r;
    (void)state;
    rayrestart_init(&r);
    for (int i = 0; i < RAYRESTART_MAX; i++)
        assert_true(rayrestart_next_ms(&r, 0, 10) > 0);
    assert_int_equal(rayrestart_next_ms(&r, 100, 100 + RAYRESTART_STABLE_MS - 1), -1);
    assert_int_equal(rayrestart_next_ms(&r, 100, 100 + RAYRESTART_STABLE_MS), RAYRESTART_FIRST_DELAY_MS);
    assert_int_equal(rayrestart_next_ms(&r, 0, 10), 2 * RAYRESTART_FIRST_DELAY_MS);
}

/* Expired once the timeout has passed since the head was lost, never while it answers (0). */
static void test_reconnect_expiry(void **state)
{
    (void)state;
    assert_false(rayrestart_reconnect_expired(0, 1000000, 60000));
    assert_false(rayrestart_reconnect_expired(5000, 64999, 60000));
    assert_true(rayrestart_reconnect_expired(5000, 65000, 60000));
    assert_true(rayrestart_reconnect_expired(5000, 5000, 0));
}

/* A drain of this Ray's node (ended after it started, give or take the clocks' slack) is no death;
 * a drain of an earlier Ray of the pod, a crash, or a departure with no reason is. */
static void test_a_drain_is_not_a_death(void **state)
{
    (void)state;
    assert_true(rayrestart_was_drained(GCS_DEPARTURE_DRAIN_PREEMPTED, 50000, 40000));
    assert_true(rayrestart_was_drained(GCS_DEPARTURE_DRAIN_IDLE, 50000, 40000));
    assert_true(rayrestart_was_drained(GCS_DEPARTURE_DRAIN_PREEMPTED, 40000 - RAYRESTART_CLOCK_SLACK_MS, 40000));
    assert_false(rayrestart_was_drained(GCS_DEPARTURE_DRAIN_PREEMPTED, 40000 - RAYRESTART_CLOCK_SLACK_MS - 1, 40000));
    assert_false(rayrestart_was_drained(GCS_DEPARTURE_UNEXPECTED, 50000, 40000));
    assert_false(rayrestart_was_drained(GCS_DEPARTURE_EXPECTED, 50000, 40000));
    assert_false(rayrestart_was_drained(GCS_DEPARTURE_UNKNOWN, 50000, 40000));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_three_starts_then_none),
        cmocka_unit_test(test_a_stable_run_starts_over),
        cmocka_unit_test(test_reconnect_expiry),
        cmocka_unit_test(test_a_drain_is_not_a_death),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
