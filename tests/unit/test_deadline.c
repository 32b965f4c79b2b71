/* Unit tests for lib/base/deadline.c: a budget is never 0 ("none") while a deadline is set, and it
 * only ever shortens a timeout. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "deadline.h"

static void test_left(void **state)
{
    (void)state;
    assert_int_equal(deadline_left_ms(5000, 1000), 4000);
    assert_int_equal(deadline_left_ms(5000, 4999), 1);
    /* Reached or passed: the smallest budget, not 0 (which would lift every cap). */
    assert_int_equal(deadline_left_ms(5000, 5000), 1);
    assert_int_equal(deadline_left_ms(5000, 9000), 1);
}

static void test_cap(void **state)
{
    (void)state;
    assert_int_equal(deadline_cap_ms(2000, 300), 300);
    assert_int_equal(deadline_cap_ms(2000, 5000), 2000);
    assert_int_equal(deadline_cap_ms(2000, 2000), 2000);
    assert_int_equal(deadline_cap_ms(2000, 0), 2000);
    assert_int_equal(deadline_cap_ms(2000, -1), 2000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_left),
        cmocka_unit_test(test_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
