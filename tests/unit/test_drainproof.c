/* Unit tests for sidecar/drainproof.c: the drain port's proof is bound to its key, the nonce, the
 * path, the status and the body; a nonce is taken only in its one spelling. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "drainproof.h"

static const char nonce[] = "00112233445566778899aabbccddeeff";
static const char body[] = "{\"accepted\":true,\"outcome\":\"left\"}\n";

static void test_the_proof_binds_everything(void **state)
{
    struct hmac_sha256_key k, other;
    char tag[DRAINPROOF_TAG_HEX + 1];
    (void)state;
    hmac_sha256_key(&k, "the-token", 9);
    hmac_sha256_key(&other, "another-token", 13);
    drainproof_tag(&k, nonce, "/drain", 200, body, strlen(body), tag);
    assert_int_equal(strlen(tag), DRAINPROOF_TAG_HEX);
    assert_true(drainproof_check(&k, nonce, "/drain", 200, body, strlen(body), tag));
    assert_false(drainproof_check(&other, nonce, "/drain", 200, body, strlen(body), tag));
    assert_false(drainproof_check(&k, "ffeeddccbbaa99887766554433221100", "/drain", 200, body, strlen(body), tag));
    assert_false(drainproof_check(&k, nonce, "/hello", 200, body, strlen(body), tag));
    assert_false(drainproof_check(&k, nonce, "/drain", 503, body, strlen(body), tag));
    assert_false(drainproof_check(&k, nonce, "/drain", 200, body, strlen(body) - 1, tag));
    assert_false(drainproof_check(&k, nonce, "/drain", 200, body, strlen(body), NULL));
    assert_false(drainproof_check(&k, nonce, "/drain", 200, body, strlen(body), "abc"));
    tag[0] = tag[0] == '0' ? '1' : '0';
    assert_false(drainproof_check(&k, nonce, "/drain", 200, body, strlen(body), tag));
}

static void test_nonces(void **state)
{
    const uint8_t bytes[DRAINPROOF_NONCE_BYTES] = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                                                   0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};
    char hex[DRAINPROOF_NONCE_HEX + 1];
    (void)state;
    drainproof_nonce_hex(bytes, hex);
    assert_string_equal(hex, nonce);
    assert_true(drainproof_nonce_valid(nonce));
    assert_false(drainproof_nonce_valid(NULL));
    assert_false(drainproof_nonce_valid(""));
    assert_false(drainproof_nonce_valid("00112233445566778899AABBCCDDEEFF"));
    assert_false(drainproof_nonce_valid("00112233445566778899aabbccddeef"));
    assert_false(drainproof_nonce_valid("00112233445566778899aabbccddeeff0"));
    assert_false(drainproof_nonce_valid("00112233445566778899aabbccddeefg"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_proof_binds_everything),
        cmocka_unit_test(test_nonces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
