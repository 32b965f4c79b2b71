/* Unit tests for lib/base/number.c: the whole text, digits only, within the range; overflow is
 * refused, not wrapped. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "number.h"

static int parse(const char *s, long min, long max, long *v)
{
    return number_parse(s, strlen(s), min, max, v);
}

static void test_in_range(void **state)
{
    long v = -1;
    (void)state;
    assert_int_equal(parse("0", 0, 10, &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(parse("10", 0, 10, &v), 0);
    assert_int_equal(v, 10);
    assert_int_equal(parse("0007", 1, 10, &v), 0);
    assert_int_equal(v, 7);
    assert_int_equal(number_parse("12x", 2, 0, 99, &v), 0); /* only len bytes are read */
    assert_int_equal(v, 12);
    assert_int_equal(parse("9223372036854775807", 0, LONG_MAX, &v), 0);
    assert_int_equal(v, LONG_MAX);
}

static void test_refused(void **state)
{
    long v = 42;
    (void)state;
    const char *bad[] = {"", "11", "+1", "-1", " 1", "1 ", "1x", "x", "1.0", "0x1", "1e1", "99999999999999999999"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(parse(bad[i], 0, 10, &v), -1);
        assert_int_equal(v, 42); /* untouched on failure */
    }
    assert_int_equal(parse("0", 1, 10, &v), -1);                         /* below min */
    assert_int_equal(parse("5", 0, 0, &v), -1);                          /* one digit already past max */
    assert_int_equal(parse("9223372036854775808", 0, LONG_MAX, &v), -1); /* LONG_MAX + 1 */
    assert_int_equal(v, 42);
}

static void test_trimmed(void **state)
{
    long v = -1;
    (void)state;
    assert_int_equal(number_parse_trimmed(" \t8\n ", 0, 10, &v), 0);
    assert_int_equal(v, 8);
    assert_int_equal(number_parse_trimmed("8", 0, 10, &v), 0);
    assert_int_equal(number_parse_trimmed("   ", 0, 10, &v), -1);
    assert_int_equal(number_parse_trimmed("8 8", 0, 100, &v), -1);
    assert_int_equal(number_parse_trimmed(" +8", 0, 10, &v), -1);
    assert_int_equal(number_parse_trimmed("11 ", 0, 10, &v), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_range),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_trimmed),
    };
    return cmocka_run_group_tests_name("number", tests, NULL, NULL);
}
