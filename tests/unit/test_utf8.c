/* Unit tests for lib/base/utf8.c: well-formed sequences of every length pass; overlongs, surrogates,
 * code points past U+10FFFF, stray continuation bytes and truncated sequences are found, at the
 * offset of their first byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "utf8.h"

static void test_well_formed(void **state)
{
    (void)state;
    assert_int_equal(utf8_invalid_offset(""), -1);
    assert_int_equal(utf8_invalid_offset("python job.py"), -1);
    assert_int_equal(utf8_invalid_offset("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf"), -1);
    assert_int_equal(utf8_sequence_length((const unsigned char *)"\xe2\x82\xac"), 3);
}

static void test_ill_formed(void **state)
{
    static const struct {
        const char *text;
        long offset;
    } bad[] = {
        {"caf\xe9", 3},          /* Latin-1 */
        {"ab\x80", 2},           /* a continuation byte alone */
        {"\xc0\xaf", 0},         /* overlong '/' */
        {"\xe0\x80\xaf", 0},     /* overlong, three bytes */
        {"x\xed\xa0\x80", 1},    /* a UTF-16 surrogate */
        {"\xf4\x90\x80\x80", 0}, /* past U+10FFFF */
        {"ok\xe2\x82", 2},       /* truncated at the end */
        {"\xf5\x80\x80\x80", 0}, /* not a lead byte */
    };
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(utf8_invalid_offset(bad[i].text), bad[i].offset);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_well_formed), cmocka_unit_test(test_ill_formed)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
