/* Unit tests for lib/net/dnsreply.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dnsreply.h"

/* A reply header: ID 0x1234, QR, the given flags and rcode, one question. */
static void header(unsigned char h[DNSREPLY_HEADER_BYTES], unsigned char flags1, unsigned char rcode)
{
    static const unsigned char base[DNSREPLY_HEADER_BYTES] = {0x12, 0x34, 0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 0};
    memcpy(h, base, sizeof(base));
    h[2] |= flags1;
    h[3] = (unsigned char)(0x80 | rcode);
}

/* Nothing seen explains nothing: the caller keeps c-ares' own "timeout". */
static void test_nothing_seen(void **state)
{
    struct dnsreply_seen s = {0};
    (void)state;
    assert_null(dnsreply_reason(&s));
}

/* SERVFAIL and REFUSED are named; the last failure code wins, and beats everything else. */
static void test_failure_codes(void **state)
{
    struct dnsreply_seen s = {0};
    unsigned char h[DNSREPLY_HEADER_BYTES];
    (void)state;
    header(h, 0, 2);
    dnsreply_note(&s, h, sizeof(h), sizeof(h));
    assert_non_null(strstr(dnsreply_reason(&s), "SERVFAIL"));
    header(h, 0x02, 0); /* truncated */
    dnsreply_note(&s, h, sizeof(h), sizeof(h));
    dnsreply_note(&s, (const unsigned char *)"junk", 4, 4);
    assert_non_null(strstr(dnsreply_reason(&s), "SERVFAIL"));
    header(h, 0, 5);
    dnsreply_note(&s, h, sizeof(h), sizeof(h));
    assert_non_null(strstr(dnsreply_reason(&s), "REFUSED"));
    header(h, 0, 4);
    dnsreply_note(&s, h, sizeof(h), sizeof(h));
    assert_non_null(strstr(dnsreply_reason(&s), "NOTIMP"));
}

/* The TC bit, or a datagram longer than 512 bytes, is a truncated reply (c-ares goes to TCP). */
static void test_truncated(void **state)
{
    struct dnsreply_seen s = {0}, t = {0};
    unsigned char h[DNSREPLY_HEADER_BYTES];
    (void)state;
    header(h, 0x02, 0);
    dnsreply_note(&s, h, sizeof(h), sizeof(h));
    assert_true(s.truncated);
    assert_non_null(strstr(dnsreply_reason(&s), "truncated"));
    header(h, 0, 0);
    dnsreply_note(&t, h, sizeof(h), DNSREPLY_UDP_MAX_BYTES + 1);
    assert_true(t.truncated);
    dnsreply_note(&t, h, sizeof(h), DNSREPLY_UDP_MAX_BYTES);
    assert_int_equal(t.replies, 1);
}

/* Short datagrams, queries (QR clear), other opcodes, other question counts: not DNS replies. */
static void test_garbage(void **state)
{
    struct dnsreply_seen s = {0};
    unsigned char h[DNSREPLY_HEADER_BYTES];
    (void)state;
    dnsreply_note(&s, (const unsigned char *)"", 0, 0);
    dnsreply_note(&s, (const unsigned char *)"\x12\x34\x81\x80\x00", 5, 5);
    header(h, 0, 0);
    h[2] &= (unsigned char)~0x80;
    dnsreply_note(&s, h, sizeof(h), sizeof(h));
    header(h, 0x10, 0); /* opcode 2 */
    dnsreply_note(&s, h, sizeof(h), sizeof(h));
    header(h, 0, 0);
    h[5] = 0;
    dnsreply_note(&s, h, sizeof(h), sizeof(h));
    header(h, 0, 0);
    dnsreply_note(&s, h, 11, sizeof(h)); /* fewer bytes copied than a header */
    assert_int_equal(s.not_dns, 6);
    assert_int_equal(s.replies, 0);
    assert_non_null(strstr(dnsreply_reason(&s), "malformed"));
    assert_non_null(strstr(dnsreply_reason(&s), "not a DNS reply"));
}

/* Well-formed replies that c-ares still dropped did not match the query. */
static void test_unmatched(void **state)
{
    struct dnsreply_seen s = {0};
    unsigned char h[DNSREPLY_HEADER_BYTES];
    (void)state;
    header(h, 0, 3); /* NXDOMAIN, another ID */
    dnsreply_note(&s, h, sizeof(h), sizeof(h));
    assert_int_equal(s.replies, 1);
    assert_non_null(strstr(dnsreply_reason(&s), "does not match"));
}

static void test_rcode_reasons(void **state)
{
    (void)state;
    assert_non_null(strstr(dnsreply_rcode_reason(DNSREPLY_RCODE_FORMERR), "FORMERR"));
    assert_non_null(strstr(dnsreply_rcode_reason(DNSREPLY_RCODE_SERVFAIL), "SERVFAIL"));
    assert_non_null(strstr(dnsreply_rcode_reason(DNSREPLY_RCODE_NOTIMP), "NOTIMP"));
    assert_non_null(strstr(dnsreply_rcode_reason(DNSREPLY_RCODE_REFUSED), "REFUSED"));
    assert_null(dnsreply_rcode_reason(0));
    assert_null(dnsreply_rcode_reason(3)); /* NXDOMAIN: an answer, not a failure */
    assert_null(dnsreply_rcode_reason(15));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nothing_seen), cmocka_unit_test(test_failure_codes), cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_garbage),      cmocka_unit_test(test_unmatched),     cmocka_unit_test(test_rcode_reasons),
    };
    return cmocka_run_group_tests_name("dnsreply", tests, NULL, NULL);
}
