/* The drain port's proof: HMAC-SHA256(token, "RAYBOOT-DRAIN/1\n" nonce "\n" path "\n" status "\n"
 * body), in hex. The path keeps the quick /hello's answer from standing for a drain's; the nonce,
 * fresh for each request, keeps an answer seen once from being replayed. Where the key comes from
 * is the callers' (main.c, drainclient.c). */
#include "drainproof.h"

#include <stdio.h>
#include <string.h>

#include "hex.h"

#define CONTEXT "RAYBOOT-DRAIN/1\n"

/* hex_encode with a terminator: the proof and the nonce travel as header values. */
static void to_hex(const uint8_t *d, size_t n, char *out)
{
    hex_encode(d, n, out);
    out[2 * n] = '\0';
}

void drainproof_nonce_hex(const uint8_t nonce[DRAINPROOF_NONCE_BYTES], char out[DRAINPROOF_NONCE_HEX + 1])
{
    to_hex(nonce, DRAINPROOF_NONCE_BYTES, out);
}

bool drainproof_nonce_valid(const char *nonce_hex)
{
    size_t n = 0;
    if (!nonce_hex)
        return false;
    for (; nonce_hex[n]; n++)
        if (n >= DRAINPROOF_NONCE_HEX || hex_digit(nonce_hex[n]) < 0)
            return false;
    return n == DRAINPROOF_NONCE_HEX;
}

static void tag_bytes(const struct hmac_sha256_key *k, const char *nonce_hex, const char *path, int status,
                      const char *body, size_t len, uint8_t out[SHA256_BYTES])
{
    char status_text[16];
    const void *pieces[] = {CONTEXT, nonce_hex, "\n", path, "\n", status_text, "\n", body};
    size_t lens[] = {sizeof(CONTEXT) - 1, strlen(nonce_hex), 1, strlen(path), 1, 0, 1, len};
    snprintf(status_text, sizeof(status_text), "%d", status);
    lens[5] = strlen(status_text);
    hmac_sha256(k, pieces, lens, sizeof(lens) / sizeof(lens[0]), out);
}

void drainproof_tag(const struct hmac_sha256_key *k, const char *nonce_hex, const char *path, int status,
                    const char *body, size_t len, char out[DRAINPROOF_TAG_HEX + 1])
{
    uint8_t t[SHA256_BYTES];
    tag_bytes(k, nonce_hex, path, status, body, len, t);
    to_hex(t, sizeof(t), out);
}

bool drainproof_check(const struct hmac_sha256_key *k, const char *nonce_hex, const char *path, int status,
                      const char *body, size_t len, const char *tag_hex)
{
    char want[DRAINPROOF_TAG_HEX + 1];
    if (!tag_hex || strlen(tag_hex) != DRAINPROOF_TAG_HEX)
        return false;
    drainproof_tag(k, nonce_hex, path, status, body, len, want);
    return hmac_equal((const uint8_t *)want, (const uint8_t *)tag_hex, DRAINPROOF_TAG_HEX) == 1;
}
