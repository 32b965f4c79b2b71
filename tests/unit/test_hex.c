/* Unit tests for lib/base/hex.c: lower case both ways, every byte, nothing else decoded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "hex.h"

static void test_every_byte_round_trips(void **state)
{
    uint8_t bytes[256], back[256];
    char text[513];
    (void)state;
    for (size_t i = 0; i < sizeof(bytes); i++)
        bytes[i] = (uint8_t)i;
    hex_encode(bytes, sizeof(bytes), text);
    text[512] = '\0';
    assert_memory_equal(text, "000102", 6);
    assert_string_equal(text + 506, "fdfeff");
    assert_int_equal(hex_decode(text, sizeof(back), back), 0);
    assert_memory_equal(bytes, back, sizeof(bytes));
}

static void test_only_lower_case_hex_decodes(void **state)
{
    static const char *const bad[] = {"0A", "g0", " 0", "0 ", "\0000", "+1", "0x"};
    uint8_t d = 42;
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (hex_decode(bad[i], 1, &d) != -1)
            fail_msg("'%s' decoded", bad[i]);
    }
    assert_int_equal(d, 42);
    assert_int_equal(hex_decode("a5", 1, &d), 0);
    assert_int_equal(d, 0xa5);
    assert_int_equal(hex_digit('f'), 15);
    assert_int_equal(hex_digit('F'), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_byte_round_trips),
        cmocka_unit_test(test_only_lower_case_hex_decodes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
