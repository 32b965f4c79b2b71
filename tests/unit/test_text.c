/* Unit tests for lib/base/text.c: the same bytes as snprintf, cut where the buffer ends. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "text.h"

static void test_format_is_snprintf(void **state)
{
    char buf[8];
    (void)state;
    assert_int_equal(text_format(buf, sizeof(buf), "%s-%d", "ab", 12), 5);
    assert_string_equal(buf, "ab-12");
    /* Cut: cap - 1 bytes and a NUL, and the whole length returned. */
    assert_int_equal(text_format(buf, sizeof(buf), "%s", "abcdefghij"), 10);
    assert_string_equal(buf, "abcdefg");
    assert_int_equal(text_format(buf, 1, "%s", "abc"), 3);
    assert_string_equal(buf, "");
}

static void test_copy_takes_len_bytes(void **state)
{
    char buf[8];
    (void)state;
    assert_int_equal(text_copy(buf, sizeof(buf), "abc,def", 3), 3);
    assert_string_equal(buf, "abc");
    assert_int_equal(text_copy(buf, sizeof(buf), "abcdefghij", 10), 7); /* cut at cap - 1 */
    assert_string_equal(buf, "abcdefg");
    assert_int_equal(text_copy(buf, sizeof(buf), "ab", 5), 2); /* src ends sooner */
    assert_string_equal(buf, "ab");
    assert_int_equal(text_copy(buf, sizeof(buf), "abc", 0), 0);
    assert_string_equal(buf, "");
    assert_int_equal(text_copy(buf, 1, "abc", 3), 0);
    assert_string_equal(buf, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_is_snprintf),
        cmocka_unit_test(test_copy_takes_len_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
