/* The rendezvous' keyed messages: the cluster's key, the hello, the head's tagged answers, and their
 * bounded parsers. The key is HMAC-SHA256(token, "RAYBOOT-RDV/2 cluster\n" name), the tag
 * HMAC-SHA256(key, "RAYBOOT-RDV/2\n" nonce WORD "\n" cluster-id), compared in constant time. */
#include "rdvauth.h"

#include <stdio.h>
#include <string.h>

#include "hex.h"

#define BEARER "authorization: Bearer "
#define TAG_CONTEXT "RAYBOOT-RDV/2\n"
#define CLUSTER_CONTEXT "RAYBOOT-RDV/2 cluster\n"

int rdvauth_key_from_header(struct hmac_sha256_key *k, const char *header)
{
    size_t n = strlen(BEARER);
    if (strncmp(header, BEARER, n) != 0 || !header[n])
        return -1;
    hmac_sha256_key(k, header + n, strlen(header + n));
    return 0;
}

void rdvauth_key_for_cluster(struct hmac_sha256_key *out, const struct hmac_sha256_key *token_key, const char *name)
{
    uint8_t derived[SHA256_BYTES];
    const void *pieces[2] = {CLUSTER_CONTEXT, name};
    size_t lens[2] = {strlen(CLUSTER_CONTEXT), strnlen(name, RDVAUTH_CLUSTER_NAME_MAX_BYTES)};
    hmac_sha256(token_key, pieces, lens, 2, derived);
    hmac_sha256_key(out, derived, sizeof(derived));
    explicit_bzero(derived, sizeof(derived));
}

/* The words of a message, without the NUL: what goes on the wire is not a C string. */
static size_t put_words(char *out, const char *words)
{
    size_t n = 0;
    for (; words[n]; n++)
        out[n] = words[n];
    return n;
}

void rdvauth_hello(const uint8_t nonce[RDVAUTH_NONCE_BYTES], char out[RDVAUTH_HELLO_BYTES])
{
    size_t p = put_words(out, RDVAUTH_HELLO_PREFIX);
    hex_encode(nonce, RDVAUTH_NONCE_BYTES, out + p);
    out[RDVAUTH_HELLO_BYTES - 1] = '\n';
}

int rdvauth_parse_hello(const char *buf, size_t len, uint8_t nonce[RDVAUTH_NONCE_BYTES])
{
    size_t p = strlen(RDVAUTH_HELLO_PREFIX), n = len < p ? len : p;
    if (memcmp(buf, RDVAUTH_HELLO_PREFIX, n) != 0)
        return -1;
    for (size_t i = p; i < len && i < RDVAUTH_HELLO_BYTES - 1; i++)
        if (hex_digit(buf[i]) < 0)
            return -1;
    if (len < RDVAUTH_HELLO_BYTES)
        return 0;
    if (buf[RDVAUTH_HELLO_BYTES - 1] != '\n' || len > RDVAUTH_HELLO_BYTES)
        return -1; /* the hello is all a worker ever says */
    return hex_decode(buf + p, RDVAUTH_NONCE_BYTES, nonce) == 0 ? 1 : -1;
}

static const char *word_of(enum rendezvous_parse_result what)
{
    return what == RENDEZVOUS_FINISHED ? "FINISHED" : "SERVING";
}

static void tag(const struct hmac_sha256_key *k, const uint8_t nonce[RDVAUTH_NONCE_BYTES],
                enum rendezvous_parse_result what, const char *cluster_id, uint8_t out[SHA256_BYTES])
{
    const char *word = word_of(what);
    const char *id = what == RENDEZVOUS_FINISHED && cluster_id ? cluster_id : "";
    const void *pieces[5] = {TAG_CONTEXT, nonce, word, "\n", id};
    size_t lens[5] = {strlen(TAG_CONTEXT), RDVAUTH_NONCE_BYTES, strlen(word), 1,
                      strnlen(id, RDVAUTH_CLUSTER_ID_MAX_BYTES)};
    hmac_sha256(k, pieces, lens, 5, out);
}

size_t rdvauth_answer(const struct hmac_sha256_key *k, const uint8_t nonce[RDVAUTH_NONCE_BYTES],
                      enum rendezvous_parse_result what, const char *cluster_id, char out[RDVAUTH_ANSWER_MAX_BYTES])
{
    const char *prefix = what == RENDEZVOUS_FINISHED ? RDVAUTH_FINISHED_PREFIX : RDVAUTH_SERVING_PREFIX;
    size_t p;
    uint8_t t[SHA256_BYTES];
    tag(k, nonce, what, cluster_id, t);
    p = put_words(out, prefix);
    hex_encode(t, sizeof(t), out + p);
    out[p + 2 * SHA256_BYTES] = '\n';
    return p + 2 * SHA256_BYTES + 1;
}

/* buf against one answer's form: 1 whole (its tag in t), 0 a proper prefix, -1 neither. */
static int match_answer(const char *buf, size_t len, const char *prefix, uint8_t t[SHA256_BYTES])
{
    size_t p = strlen(prefix), whole = p + 2 * SHA256_BYTES + 1;
    if (memcmp(buf, prefix, len < p ? len : p) != 0)
        return -1;
    for (size_t i = p; i < len && i < whole - 1; i++)
        if (hex_digit(buf[i]) < 0)
            return -1;
    if (len < whole)
        return 0;
    if (buf[whole - 1] != '\n')
        return -1;
    return hex_decode(buf + p, SHA256_BYTES, t) == 0 ? 1 : -1;
}

enum rendezvous_parse_result rdvauth_parse(const struct hmac_sha256_key *k, const uint8_t nonce[RDVAUTH_NONCE_BYTES],
                                           const char *cluster_id, const char *buf, size_t len, size_t *used)
{
    static const enum rendezvous_parse_result kinds[2] = {RENDEZVOUS_SERVING, RENDEZVOUS_FINISHED};
    static const char *const prefixes[2] = {RDVAUTH_SERVING_PREFIX, RDVAUTH_FINISHED_PREFIX};
    int partial = 0;
    *used = 0;
    if (len > RDVAUTH_READ_MAX)
        len = RDVAUTH_READ_MAX;
    for (int i = 0; i < 2; i++) {
        uint8_t got[SHA256_BYTES], want[SHA256_BYTES];
        int m = match_answer(buf, len, prefixes[i], got);
        if (m == 0)
            partial = 1;
        if (m != 1)
            continue;
        tag(k, nonce, kinds[i], cluster_id, want);
        if (!hmac_equal(got, want, SHA256_BYTES))
            return RENDEZVOUS_BAD; /* not the head's: whoever wrote it has no token */
        *used = strlen(prefixes[i]) + 2 * SHA256_BYTES + 1;
        return kinds[i];
    }
    return partial ? RENDEZVOUS_INCOMPLETE : RENDEZVOUS_BAD;
}
