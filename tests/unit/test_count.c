/* Unit tests for lib/base/count.c: digits only, bounded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "count.h"

static int parse(const char *s, long *v)
{
    return count_parse(s, strlen(s), v);
}

static void test_counts(void **state)
{
    long v = -1;
    (void)state;
    assert_int_equal(parse("0", &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(parse("1000000", &v), 0);
    assert_int_equal(v, COUNT_MAX);
    assert_int_equal(parse("007", &v), 0);
    assert_int_equal(v, 7);
    assert_int_equal(count_parse("12x", 2, &v), 0); /* only len bytes are read */
    assert_int_equal(v, 12);
}

static void test_not_counts(void **state)
{
    static const char *const bad[] = {"", "1000001", "99999999", "-1", "+1", " 1", "1 ", "1e3", "0x1", "１"};
    long v = 42;
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (parse(bad[i], &v) != -1)
            fail_msg("'%s' parsed", bad[i]);
    }
    assert_int_equal(v, 42);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_counts), cmocka_unit_test(test_not_counts)};
    return cmocka_run_group_tests_name("count", tests, NULL, NULL);
}
