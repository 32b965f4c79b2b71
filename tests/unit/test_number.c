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

/* Seconds as a person writes them, to the millisecond; strtod's other forms are refused. */
static void test_millis(void **state)
{
    const struct {
        const char *text;
        long ms;
    } good[] = {{"30", 30000},       {" 2.5 ", 2500},         {".5", 500}, {"3.", 3000}, {"0.0019", 1},
                {"86400", 86400000}, {"86400.000", 86400000}, {"0", 0}};
    const char *bad[] = {"",      " ",    ".",         "-1",    "+1",
                         "1e3",   "0x10", "inf",       "nan",   "1,5",
                         "1.2.3", "1 .5", "86400.001", "86401", "99999999999999999999"};
    long v;
    (void)state;
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        v = -1;
        assert_int_equal(number_parse_millis(good[i].text, 86400, &v), 0);
        assert_int_equal(v, good[i].ms);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        v = 42;
        assert_int_equal(number_parse_millis(bad[i], 86400, &v), -1);
        assert_int_equal(v, 42);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_range),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_trimmed),
        cmocka_unit_test(test_millis),
    };
    return cmocka_run_group_tests_name("number", tests, NULL, NULL);
}
