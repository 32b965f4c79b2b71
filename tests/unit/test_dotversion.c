/* Unit tests for lib/base/dotversion.c: Ray's version forms, the boundaries, what is not a version. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dotversion.h"

static void test_at_least(void **state)
{
    (void)state;
    assert_int_equal(dotversion_at_least("2.49.0", 2, 49), 1);
    assert_int_equal(dotversion_at_least("2.49.0rc1", 2, 49), 1);
    assert_int_equal(dotversion_at_least("2.60.0", 2, 49), 1);
    assert_int_equal(dotversion_at_least("3.0.0.dev0", 2, 49), 1);
    assert_int_equal(dotversion_at_least("2.48.9", 2, 49), 0);
    assert_int_equal(dotversion_at_least("2.5.0", 2, 49), 0);
    assert_int_equal(dotversion_at_least("1.99", 2, 49), 0);
    assert_int_equal(dotversion_at_least("2.36.1", 2, 36), 1);
    assert_int_equal(dotversion_at_least("2.35.0", 2, 36), 0);
}

static void test_not_a_version(void **state)
{
    (void)state;
    assert_int_equal(dotversion_at_least("2", 2, 49), -1);
    assert_int_equal(dotversion_at_least("v2.49", 2, 49), -1);
    assert_int_equal(dotversion_at_least("2.x", 2, 49), -1);
    assert_int_equal(dotversion_at_least("", 2, 49), -1);
    assert_int_equal(dotversion_at_least("nightly", 2, 49), -1);
    assert_int_equal(dotversion_at_least(" 2.49", 2, 49), -1);
    assert_int_equal(dotversion_at_least("9999999999.1", 2, 49), -1); /* past 9 digits: refused */
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_at_least), cmocka_unit_test(test_not_a_version)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
