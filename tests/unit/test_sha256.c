/* Unit tests for lib/base/sha256.c: FIPS 180-4's SHA-256 examples (with the input fed in every
 * split), and RFC 4231's HMAC-SHA256 test cases (keys shorter than, and longer than, a block). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sha256.h"

static void hex(const uint8_t *d, char out[2 * SHA256_BYTES + 1])
{
    for (int i = 0; i < SHA256_BYTES; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static void check_sha256(const void *data, size_t len, const char *want)
{
    struct sha256 s;
    uint8_t d[SHA256_BYTES];
    char got[2 * SHA256_BYTES + 1];
    sha256_init(&s);
    sha256_update(&s, data, len);
    sha256_final(&s, d);
    hex(d, got);
    assert_string_equal(got, want);
}

static void test_fips_examples(void **state)
{
    static const char two_blocks[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    (void)state;
    check_sha256("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    check_sha256("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    check_sha256(two_blocks, strlen(two_blocks), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void test_a_million_a_in_uneven_pieces(void **state)
{
    struct sha256 s;
    uint8_t d[SHA256_BYTES];
    char got[2 * SHA256_BYTES + 1];
    char *a = malloc(1000000);
    size_t done = 0, step = 1;
    (void)state;
    assert_non_null(a);
    memset(a, 'a', 1000000);
    sha256_init(&s);
    while (done < 1000000) {
        size_t n = step < 1000000 - done ? step : 1000000 - done;
        sha256_update(&s, a + done, n);
        done += n;
        step = step * 3 % 1021 + 1; /* pieces of every size across block boundaries */
    }
    sha256_final(&s, d);
    hex(d, got);
    assert_string_equal(got, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(a);
}

static void test_every_split_of_two_blocks(void **state)
{
    static const char two_blocks[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    size_t len = strlen(two_blocks);
    (void)state;
    for (size_t cut = 0; cut <= len; cut++) {
        struct sha256 s;
        uint8_t d[SHA256_BYTES];
        char got[2 * SHA256_BYTES + 1];
        sha256_init(&s);
        sha256_update(&s, two_blocks, cut);
        sha256_update(&s, two_blocks + cut, len - cut);
        sha256_final(&s, d);
        hex(d, got);
        assert_string_equal(got, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    }
}

static void check_hmac(const uint8_t *key, size_t klen, const void *msg, size_t mlen, const char *want)
{
    struct hmac_sha256_key k;
    uint8_t tag[SHA256_BYTES];
    char got[2 * SHA256_BYTES + 1];
    const void *pieces[2] = {msg, (const uint8_t *)msg + mlen / 2};
    size_t lens[2] = {mlen / 2, mlen - mlen / 2};
    hmac_sha256_key(&k, key, klen);
    hmac_sha256(&k, pieces, lens, 2, tag); /* in two pieces: the same as in one */
    hex(tag, got);
    assert_string_equal(got, want);
    hmac_sha256(&k, pieces, lens, 2, tag); /* the key's states are not used up */
    hex(tag, got);
    assert_string_equal(got, want);
}

static void test_rfc4231(void **state)
{
    uint8_t k[131], m[50];
    static const char tc6[] = "Test Using Larger Than Block-Size Key - Hash Key First";
    static const char tc7[] =
        "This is a test using a larger than block-size key and a larger than block-size data. The "
        "key needs to be hashed before being used by the HMAC algorithm.";
    (void)state;
    memset(k, 0x0b, 20);
    check_hmac(k, 20, "Hi There", 8, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    check_hmac((const uint8_t *)"Jefe", 4, "what do ya want for nothing?", 28,
               "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    memset(k, 0xaa, 20);
    memset(m, 0xdd, 50);
    check_hmac(k, 20, m, 50, "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
    for (int i = 0; i < 25; i++)
        k[i] = (uint8_t)(i + 1);
    memset(m, 0xcd, 50);
    check_hmac(k, 25, m, 50, "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
    memset(k, 0xaa, 131);
    check_hmac(k, 131, tc6, strlen(tc6), "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
    check_hmac(k, 131, tc7, strlen(tc7), "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

static void test_equal(void **state)
{
    uint8_t a[4] = {1, 2, 3, 4}, b[4] = {1, 2, 3, 4};
    (void)state;
    assert_true(hmac_equal(a, b, 4));
    b[3] = 5;
    assert_false(hmac_equal(a, b, 4));
    b[3] = 4;
    b[0] = 0;
    assert_false(hmac_equal(a, b, 4));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fips_examples),
        cmocka_unit_test(test_a_million_a_in_uneven_pieces),
        cmocka_unit_test(test_every_split_of_two_blocks),
        cmocka_unit_test(test_rfc4231),
        cmocka_unit_test(test_equal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
