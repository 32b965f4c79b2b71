/* Unit tests for lib/base/backoff.c: the schedule's ceilings and the jitter's bounds and spread. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "backoff.h"

/* Attempt n draws from the upper half of min(cap, base*2^n): [25, 50], [50, 100], ... [500, 1000]
 * forever, and reaches both ends of it. */
static void test_ceilings(void **state)
{
    static const long ceiling[] = {50, 100, 200, 400, 800, 1000, 1000, 1000};
    (void)state;
    for (size_t n = 0; n < sizeof(ceiling) / sizeof(ceiling[0]); n++) {
        long max_seen = 0, min_seen = ceiling[n];
        for (int trial = 0; trial < 2000; trial++) {
            struct backoff b;
            long d = 0;
            backoff_init(&b, 50, 1000, (uint64_t)trial + 1);
            for (size_t k = 0; k <= n; k++)
                d = backoff_next_ms(&b);
            assert_true(d >= ceiling[n] / 2 && d <= ceiling[n]);
            if (d > max_seen)
                max_seen = d;
            if (d < min_seen)
                min_seen = d;
        }
        assert_true(max_seen >= ceiling[n] * 19 / 20);
        assert_true(min_seen <= ceiling[n] * 11 / 20);
    }
}

/* Without jitter: the ceilings themselves, and back to the base after a reset. */
static void test_steps(void **state)
{
    static const long step[] = {250, 500, 1000, 2000, 2000, 2000};
    struct backoff b;
    (void)state;
    backoff_init(&b, 250, 2000, 1);
    for (size_t n = 0; n < sizeof(step) / sizeof(step[0]); n++)
        assert_int_equal(backoff_step_ms(&b), step[n]);
    backoff_reset(&b);
    assert_int_equal(backoff_step_ms(&b), 250);
    for (int i = 0; i < 100000; i++)
        assert_int_equal(backoff_step_ms(&b) <= 2000, 1);
}

/* Never overflows, however many attempts. */
static void test_many_attempts(void **state)
{
    struct backoff b;
    (void)state;
    backoff_init(&b, 50, 1000, 7);
    for (int i = 0; i < 100000; i++) {
        long d = backoff_next_ms(&b);
        assert_true(d >= (i < 5 ? 25 : 500) && d <= 1000); /* at the cap from the 6th on */
    }
    backoff_reset(&b);
    long d = backoff_next_ms(&b);
    assert_true(d >= 25 && d <= 50);
}

/* Steady polling stays in [lo, hi] and its mean sits in the middle (25 attempts/s for 30-50). */
static void test_jitter_bounds_and_mean(void **state)
{
    struct backoff b;
    long sum = 0;
    (void)state;
    backoff_init(&b, 30, 50, 12345);
    for (int i = 0; i < 10000; i++) {
        long d = backoff_jitter_ms(&b, 30, 50);
        assert_true(d >= 30 && d <= 50);
        sum += d;
    }
    assert_true(sum / 10000 >= 38 && sum / 10000 <= 42);
    assert_int_equal(backoff_jitter_ms(&b, 40, 40), 40);
}

/* At the cap the mean delay is 750 ms: ~1.33 lookups a second for a name that does not resolve,
 * where [0, 1000] made it 2. */
static void test_capped_mean(void **state)
{
    struct backoff b;
    long sum = 0;
    (void)state;
    backoff_init(&b, 50, 1000, 99);
    for (int i = 0; i < 10; i++)
        (void)backoff_next_ms(&b);
    for (int i = 0; i < 10000; i++)
        sum += backoff_next_ms(&b);
    assert_true(sum / 10000 >= 730 && sum / 10000 <= 770);
}

/* Two pods seeded differently do not retry in lockstep. */
static void test_seeds_differ(void **state)
{
    struct backoff a, b;
    int same = 0;
    (void)state;
    backoff_init(&a, 50, 1000, 1);
    backoff_init(&b, 50, 1000, 2);
    for (int i = 0; i < 20; i++)
        same += backoff_next_ms(&a) == backoff_next_ms(&b);
    assert_true(same < 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ceilings),      cmocka_unit_test(test_steps),
        cmocka_unit_test(test_many_attempts), cmocka_unit_test(test_jitter_bounds_and_mean),
        cmocka_unit_test(test_capped_mean),   cmocka_unit_test(test_seeds_differ),
    };
    return cmocka_run_group_tests_name("backoff", tests, NULL, NULL);
}
