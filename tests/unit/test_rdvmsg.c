/* Unit tests for lib/ray/rdvmsg.c: either message taken off the front of what was read, prefixes are
 * "read more", anything else is not our head, nothing past RENDEZVOUS_READ_MAX looked at. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rdvmsg.h"

static enum rendezvous_parse_result parse(const char *buf, size_t len, size_t *used)
{
    return rendezvous_parse(buf, len, used);
}

static void test_each_message_whole_and_its_prefixes(void **state)
{
    static const char *const messages[] = {RENDEZVOUS_MESSAGE, RENDEZVOUS_FINISHED_MESSAGE};
    static const enum rendezvous_parse_result want[] = {RENDEZVOUS_SERVING, RENDEZVOUS_FINISHED};
    size_t used = 99;
    (void)state;
    for (size_t k = 0; k < 2; k++) {
        size_t len = strlen(messages[k]);
        assert_true(len <= RENDEZVOUS_READ_MAX);
        assert_int_equal(parse(messages[k], len, &used), want[k]);
        assert_int_equal(used, len);
        for (size_t i = 0; i < len; i++) {
            assert_int_equal(parse(messages[k], i, &used), RENDEZVOUS_INCOMPLETE);
            assert_int_equal(used, 0);
        }
    }
}

static void test_both_in_one_read(void **state)
{
    const char both[] = RENDEZVOUS_MESSAGE RENDEZVOUS_FINISHED_MESSAGE;
    size_t used = 0, len = sizeof(both) - 1;
    (void)state;
    assert_int_equal(parse(both, len, &used), RENDEZVOUS_SERVING);
    assert_int_equal(used, strlen(RENDEZVOUS_MESSAGE));
    assert_int_equal(parse(both + used, len - used, &used), RENDEZVOUS_FINISHED);
    assert_int_equal(used, strlen(RENDEZVOUS_FINISHED_MESSAGE));
    /* SERVING and half of FINISHED: the rest is a prefix, read more. */
    assert_int_equal(parse(both + strlen(RENDEZVOUS_MESSAGE), 10, &used), RENDEZVOUS_INCOMPLETE);
}

static void test_anything_else_is_bad(void **state)
{
    size_t used = 99;
    (void)state;
    assert_int_equal(parse("RAYBOOT-RDV/2 SERVING\n", 22, &used), RENDEZVOUS_BAD);
    assert_int_equal(used, 0);
    assert_int_equal(parse("RAYBOOT-RDV/1 FINISHEX\n", 23, &used), RENDEZVOUS_BAD);
    assert_int_equal(parse("RAYBOOT-RDV/1 SERVINGX", 22, &used), RENDEZVOUS_BAD);
    assert_int_equal(parse("HTTP/1.1 400", 12, &used), RENDEZVOUS_BAD);
    assert_int_equal(parse("\0", 1, &used), RENDEZVOUS_BAD);
    /* A message followed by garbage is the message; the garbage is the next parse's. */
    assert_int_equal(parse("RAYBOOT-RDV/1 SERVING\nX", 23, &used), RENDEZVOUS_SERVING);
    assert_int_equal(parse("X", 1, &used), RENDEZVOUS_BAD);
}

static void test_nothing_past_the_bound_is_looked_at(void **state)
{
    char big[RENDEZVOUS_READ_MAX * 4];
    size_t used = 0;
    (void)state;
    memset(big, 'R', sizeof(big));
    assert_int_equal(parse(big, sizeof(big), &used), RENDEZVOUS_BAD);
    /* A prefix that would only complete past the bound is not a message. */
    memcpy(big, "RAYBOOT-RDV/1 ", 14);
    memset(big + 14, ' ', sizeof(big) - 14);
    assert_int_equal(parse(big, sizeof(big), &used), RENDEZVOUS_BAD);
    memcpy(big, RENDEZVOUS_FINISHED_MESSAGE, strlen(RENDEZVOUS_FINISHED_MESSAGE));
    assert_int_equal(parse(big, sizeof(big), &used), RENDEZVOUS_FINISHED);
    assert_int_equal(parse(big, 0, &used), RENDEZVOUS_INCOMPLETE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_message_whole_and_its_prefixes),
        cmocka_unit_test(test_both_in_one_read),
        cmocka_unit_test(test_anything_else_is_bad),
        cmocka_unit_test(test_nothing_past_the_bound_is_looked_at),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
