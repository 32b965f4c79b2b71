/* Unit tests for lib/net/grpc_frame.c: framing both ways and every malformed reply shape. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "grpc_frame.h"

/* The empty request is the 5 bytes 00 00 00 00 00. */
static void test_encode_empty_request(void **state)
{
    uint8_t out[8];
    (void)state;
    assert_int_equal(grpc_frame_encode(NULL, 0, out, sizeof(out)), 5);
    assert_memory_equal(out, "\0\0\0\0\0", 5);
    assert_int_equal(grpc_frame_encode((const uint8_t *)"abcd", 4, out, sizeof(out)), -1);
}

/* A SERVING reply: one frame holding 08 01. */
static void test_decode_serving(void **state)
{
    const uint8_t reply[] = {0, 0, 0, 0, 2, 0x08, 0x01};
    const uint8_t *msg;
    size_t len;
    struct errbuf err;
    (void)state;
    assert_int_equal(grpc_frame_decode(reply, sizeof(reply), &msg, &len, &err), 0);
    assert_int_equal(len, 2);
    assert_int_equal(msg[1], 1);
}

static void expect_rejected(const uint8_t *buf, size_t len, const char *says)
{
    const uint8_t *msg;
    size_t msg_len;
    struct errbuf err;
    assert_int_equal(grpc_frame_decode(buf, len, &msg, &msg_len, &err), -1);
    if (!strstr(err.msg, says))
        fail_msg("message '%s' lacks '%s'", err.msg, says);
}

/* Short, compressed, huge declared length, trailing bytes. */
static void test_decode_malformed(void **state)
{
    const uint8_t shortish[] = {0, 0, 0};
    const uint8_t compressed[] = {1, 0, 0, 0, 0};
    const uint8_t huge[] = {0, 0x7f, 0xff, 0xff, 0xff, 0x08, 0x01};
    const uint8_t trailing[] = {0, 0, 0, 0, 1, 0x08, 0x01};
    (void)state;
    expect_rejected(shortish, sizeof(shortish), "shorter");
    expect_rejected(compressed, sizeof(compressed), "flag 1");
    expect_rejected(huge, sizeof(huge), "declares");
    expect_rejected(trailing, sizeof(trailing), "after its frame");
}

/* Trailers: grpc-status in any case and spacing; garbage becomes -2; grpc-message copied. */
static void test_header_lines(void **state)
{
    int status = -1;
    char message[16] = "";
    (void)state;
    grpc_header_line("content-type: application/grpc\r\n", 32, &status, message, sizeof(message));
    assert_int_equal(status, -1);
    grpc_header_line("grpc-status: 0\r\n", 16, &status, message, sizeof(message));
    assert_int_equal(status, 0);
    grpc_header_line("Grpc-Status:14\r\n", 16, &status, message, sizeof(message));
    assert_int_equal(status, 14);
    grpc_header_line("grpc-status: x1\r\n", 17, &status, message, sizeof(message));
    assert_int_equal(status, -2);
    grpc_header_line("grpc-status: 12345\r\n", 20, &status, message, sizeof(message));
    assert_int_equal(status, -2);
    grpc_header_line("grpc-message: a very long message indeed\r\n", 42, &status, message, sizeof(message));
    assert_string_equal(message, "a very long mes");
    grpc_header_line("grpc-statusx: 3\r\n", 17, &status, message, sizeof(message));
    assert_int_equal(status, -2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encode_empty_request),
        cmocka_unit_test(test_decode_serving),
        cmocka_unit_test(test_decode_malformed),
        cmocka_unit_test(test_header_lines),
    };
    return cmocka_run_group_tests_name("grpc_frame", tests, NULL, NULL);
}
