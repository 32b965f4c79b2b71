/* Unit tests for lib/net/protobuf.c: the reader rejects every malformed shape, the writer round-trips. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "protobuf.h"

/* A writer's output reads back field by field. */
static void test_round_trip(void **state)
{
    uint8_t buf[64];
    struct pb_writer w;
    struct pb_reader r;
    struct pb_field f;
    (void)state;
    pb_writer_init(&w, buf, sizeof(buf));
    pb_put_varint(&w, 2, 2);
    pb_put_bytes(&w, 3, "hello", 5);
    pb_put_varint(&w, 25, 1);
    pb_put_varint(&w, 4, 1763800000000ULL);
    assert_false(w.overflow);
    pb_reader_init(&r, buf, w.len);
    assert_int_equal(pb_next(&r, &f), PB_FIELD);
    assert_int_equal(f.number, 2);
    assert_int_equal(f.varint, 2);
    assert_int_equal(pb_next(&r, &f), PB_FIELD);
    assert_int_equal(f.number, 3);
    assert_int_equal(f.wire, PB_BYTES);
    assert_memory_equal(f.data, "hello", 5);
    assert_int_equal(pb_next(&r, &f), PB_FIELD);
    assert_int_equal(f.number, 25);
    assert_int_equal(pb_next(&r, &f), PB_FIELD);
    assert_int_equal(f.varint, 1763800000000ULL);
    assert_int_equal(pb_next(&r, &f), PB_END);
}

/* Known bytes: field 1 varint 150 is 08 96 01 (the protobuf documentation's example). */
static void test_known_encoding(void **state)
{
    uint8_t buf[8];
    struct pb_writer w;
    (void)state;
    pb_writer_init(&w, buf, sizeof(buf));
    pb_put_varint(&w, 1, 150);
    assert_int_equal(w.len, 3);
    assert_memory_equal(buf, "\x08\x96\x01", 3);
}

/* Truncations, overlong varints, lengths past the end, groups and field 0 are all -1. */
static void test_malformed(void **state)
{
    static const struct {
        const char *bytes;
        size_t len;
    } bad[] = {
        {"\x08", 1},                                          /* varint value missing */
        {"\x08\xff", 2},                                      /* varint never ends */
        {"\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 11}, /* 11-byte varint */
        {"\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 11}, /* bit 64 set */
        {"\x12\x05hi", 4},                                    /* length beyond the data */
        {"\x12\xff\xff\xff\xff\x0f", 6},                      /* huge length */
        {"\x0b", 1},                                          /* start group: wire type 3 */
        {"\x0c", 1},                                          /* end group: wire type 4 */
        {"\x00\x01", 2},                                      /* field number 0 */
        {"\x09\x01\x02", 3},                                  /* fixed64 cut short */
        {"\x0d\x01", 2},                                      /* fixed32 cut short */
    };
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct pb_reader r;
        struct pb_field f;
        int rc;
        pb_reader_init(&r, (const uint8_t *)bad[i].bytes, bad[i].len);
        while ((rc = pb_next(&r, &f)) == PB_FIELD)
            ;
        if (rc != -1)
            fail_msg("case %zu was not rejected", i);
    }
}

/* A writer that runs out of room says so instead of writing past its buffer. */
static void test_writer_overflow(void **state)
{
    uint8_t buf[4];
    struct pb_writer w;
    (void)state;
    pb_writer_init(&w, buf, sizeof(buf));
    pb_put_bytes(&w, 1, "0123456789", 10);
    assert_true(w.overflow);
    assert_true(w.len <= sizeof(buf));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_known_encoding),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_writer_overflow),
    };
    return cmocka_run_group_tests_name("protobuf", tests, NULL, NULL);
}
