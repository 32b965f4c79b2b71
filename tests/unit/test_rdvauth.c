/* Unit tests for lib/ray/rdvauth.c: the hello and the tagged answers, to the byte (the tags are
 * Python's hmac module's for the same inputs), and every way an answer is refused: another nonce,
 * key, cluster name or cluster id, a changed digit, a prefix, anything past the bound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "rdvauth.h"

static const uint8_t nonce[RDVAUTH_NONCE_BYTES] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
/* hmac.new(b"right", b"RAYBOOT-RDV/2\n" + bytes(range(16)) + b"SERVING\n", sha256) */
static const char serving_right[] =
    "RAYBOOT-RDV/2 SERVING d6db872079b83a237998a7cc588c91e6de9356494f05db7043f46ce30636c81b\n";
/* ... + b"FINISHED\nabc123" */
static const char finished_right[] =
    "RAYBOOT-RDV/2 FINISHED 9036584dc5d45300e912e7ee944d4e61a6a72084896e4030f5d4e13ebc5cac30\n";

static void key(struct hmac_sha256_key *k, const char *token)
{
    char header[128];
    snprintf(header, sizeof(header), "authorization: Bearer %s", token);
    assert_int_equal(rdvauth_key_from_header(k, header), 0);
}

static void test_no_token_no_key(void **state)
{
    struct hmac_sha256_key k;
    (void)state;
    assert_int_equal(rdvauth_key_from_header(&k, ""), -1);
    assert_int_equal(rdvauth_key_from_header(&k, "authorization: Bearer "), -1);
}

static void test_hello_and_its_prefixes(void **state)
{
    char hello[RDVAUTH_HELLO_BYTES];
    uint8_t got[RDVAUTH_NONCE_BYTES];
    (void)state;
    rdvauth_hello(nonce, hello);
    assert_memory_equal(hello, "RAYBOOT-RDV/2 000102030405060708090a0b0c0d0e0f\n", RDVAUTH_HELLO_BYTES);
    assert_int_equal(rdvauth_parse_hello(hello, sizeof(hello), got), 1);
    assert_memory_equal(got, nonce, sizeof(nonce));
    for (size_t i = 0; i < sizeof(hello); i++)
        assert_int_equal(rdvauth_parse_hello(hello, i, got), 0);
    assert_int_equal(rdvauth_parse_hello("GET / HTTP/1.1\r\n", 16, got), -1);
    assert_int_equal(rdvauth_parse_hello("RAYBOOT-RDV/2 00010203040506070809\n", 35, got), -1);
    assert_int_equal(rdvauth_parse_hello("RAYBOOT-RDV/2 000102030405060708090A0B0C0D0E0F\n", 47, got), -1);
    assert_int_equal(rdvauth_parse_hello("RAYBOOT-RDV/2 000102030405060708090a0b0c0d0e0fX", 47, got), -1);
}

static void test_answers_to_the_byte(void **state)
{
    struct hmac_sha256_key k;
    char out[RDVAUTH_ANSWER_MAX_BYTES];
    size_t n;
    (void)state;
    key(&k, "right");
    n = rdvauth_answer(&k, nonce, RENDEZVOUS_SERVING, "abc123", out); /* no cluster in SERVING */
    assert_int_equal(n, strlen(serving_right));
    assert_memory_equal(out, serving_right, n);
    n = rdvauth_answer(&k, nonce, RENDEZVOUS_FINISHED, "abc123", out);
    assert_int_equal(n, strlen(finished_right));
    assert_memory_equal(out, finished_right, n);
}

/* Issue 40: the key is bound to the cluster's name, so the head of ml/ray-b (the same token) tags
 * for ml/ray-a's worker what it refuses. k = hmac.new(b"right", b"RAYBOOT-RDV/2 cluster\nml/ray-a",
 * sha256).digest(); hmac.new(k, b"RAYBOOT-RDV/2\n" + bytes(range(16)) + b"SERVING\n", sha256) */
static void test_the_key_names_the_cluster(void **state)
{
    static const char serving_ray_a[] =
        "RAYBOOT-RDV/2 SERVING 9ac5641e9acb78a8915d3859fdc202a240c8a30503e4c01dad7eb82f80ac460d\n";
    struct hmac_sha256_key token_key, ray_a, ray_b;
    char out[RDVAUTH_ANSWER_MAX_BYTES];
    size_t n, used;
    (void)state;
    key(&token_key, "right");
    rdvauth_key_for_cluster(&ray_a, &token_key, "ml/ray-a");
    rdvauth_key_for_cluster(&ray_b, &token_key, "ml/ray-b");
    n = rdvauth_answer(&ray_a, nonce, RENDEZVOUS_SERVING, "", out);
    assert_int_equal(n, strlen(serving_ray_a));
    assert_memory_equal(out, serving_ray_a, n);
    assert_int_equal(rdvauth_parse(&ray_a, nonce, "", out, n, &used), RENDEZVOUS_SERVING);
    n = rdvauth_answer(&ray_b, nonce, RENDEZVOUS_SERVING, "", out);
    assert_int_equal(rdvauth_parse(&ray_a, nonce, "", out, n, &used), RENDEZVOUS_BAD);
    assert_int_equal(rdvauth_parse(&token_key, nonce, "", out, n, &used), RENDEZVOUS_BAD);
}

static void test_the_right_answers_pass(void **state)
{
    struct hmac_sha256_key k;
    char both[2 * RDVAUTH_ANSWER_MAX_BYTES];
    size_t used = 0, len;
    (void)state;
    key(&k, "right");
    snprintf(both, sizeof(both), "%s%s", serving_right, finished_right);
    len = strlen(both);
    assert_int_equal(rdvauth_parse(&k, nonce, "abc123", both, len, &used), RENDEZVOUS_SERVING);
    assert_int_equal(used, strlen(serving_right));
    assert_int_equal(rdvauth_parse(&k, nonce, "abc123", both + used, len - used, &used), RENDEZVOUS_FINISHED);
    for (size_t i = 0; i < strlen(finished_right); i++) {
        assert_int_equal(rdvauth_parse(&k, nonce, "abc123", finished_right, i, &used), RENDEZVOUS_INCOMPLETE);
        assert_int_equal(used, 0);
    }
}

static void test_everything_else_is_refused(void **state)
{
    struct hmac_sha256_key right, wrong;
    uint8_t other[RDVAUTH_NONCE_BYTES];
    char changed[sizeof(finished_right)];
    size_t used = 99;
    (void)state;
    key(&right, "right");
    key(&wrong, "wrong");
    memcpy(other, nonce, sizeof(other));
    other[15] ^= 1;
    assert_int_equal(rdvauth_parse(&wrong, nonce, "abc123", finished_right, strlen(finished_right), &used),
                     RENDEZVOUS_BAD);
    assert_int_equal(used, 0);
    assert_int_equal(rdvauth_parse(&right, other, "abc123", finished_right, strlen(finished_right), &used),
                     RENDEZVOUS_BAD);
    assert_int_equal(rdvauth_parse(&right, nonce, "abc124", finished_right, strlen(finished_right), &used),
                     RENDEZVOUS_BAD);
    assert_int_equal(rdvauth_parse(&right, other, "", serving_right, strlen(serving_right), &used), RENDEZVOUS_BAD);
    for (size_t i = strlen(RDVAUTH_FINISHED_PREFIX); i < strlen(finished_right) - 1; i++) {
        memcpy(changed, finished_right, sizeof(changed));
        changed[i] = changed[i] == '0' ? '1' : '0';
        assert_int_equal(rdvauth_parse(&right, nonce, "abc123", changed, strlen(changed), &used), RENDEZVOUS_BAD);
    }
    /* Version 1's words, with no tag, are not an answer. */
    assert_int_equal(rdvauth_parse(&right, nonce, "", RENDEZVOUS_MESSAGE, strlen(RENDEZVOUS_MESSAGE), &used),
                     RENDEZVOUS_BAD);
    assert_int_equal(
        rdvauth_parse(&right, nonce, "", RENDEZVOUS_FINISHED_MESSAGE, strlen(RENDEZVOUS_FINISHED_MESSAGE), &used),
        RENDEZVOUS_BAD);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_token_no_key),        cmocka_unit_test(test_hello_and_its_prefixes),
        cmocka_unit_test(test_answers_to_the_byte),    cmocka_unit_test(test_the_key_names_the_cluster),
        cmocka_unit_test(test_the_right_answers_pass), cmocka_unit_test(test_everything_else_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
