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

/* Issue 40: the termination message and the log escape alike; a cut never splits an escape. */
static void test_printable_escapes_every_control_and_non_ascii_byte(void **state)
{
    char out[64];
    (void)state;
    assert_int_equal(text_printable(out, sizeof(out), "ok\x1b[2K\rforged\nline\xe9"), 31);
    assert_string_equal(out, "ok\\x1b[2K\\x0dforged\\x0aline\\xe9");
    assert_int_equal(text_printable(out, 6, "ab\ncd"), 2); /* "ab\x0a" needs 7 bytes with its NUL */
    assert_string_equal(out, "ab");
    assert_int_equal(text_printable(out, 1, "x"), 0);
    assert_string_equal(out, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_is_snprintf),
        cmocka_unit_test(test_copy_takes_len_bytes),
        cmocka_unit_test(test_printable_escapes_every_control_and_non_ascii_byte),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
