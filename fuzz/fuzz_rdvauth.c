/* libFuzzer target: lib/ray/rdvauth.c's parsers on what crosses the rendezvous port with Ray's
 * token: a worker's hello, as the head's child reads it, and the head's tagged answers, as a
 * worker reads them (anything: a stranger on the port, an attacker in the pod network). The first
 * byte picks which. A hello is 1 only for exactly the hello of its nonce; an answer is SERVING or
 * FINISHED only when the input starts with exactly the answer the key gives for the nonce (and
 * cluster); INCOMPLETE only for a proper prefix of an answer's form. */
#include <string.h>

#include "fuzz.h"
#include "rdvauth.h"

static const uint8_t nonce[RDVAUTH_NONCE_BYTES] = {7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7};
static const char cluster[] = "0101";

static void hello(const char *buf, size_t len)
{
    uint8_t got[RDVAUTH_NONCE_BYTES];
    char want[RDVAUTH_HELLO_BYTES];
    int r = rdvauth_parse_hello(buf, len, got);
    if (r == 1) {
        rdvauth_hello(got, want);
        if (len != sizeof(want) || memcmp(buf, want, len) != 0)
            __builtin_trap();
    }
    if (r == 0 && len >= RDVAUTH_HELLO_BYTES)
        __builtin_trap();
}

static void answer(const struct hmac_sha256_key *k, const char *buf, size_t len)
{
    char want[RDVAUTH_ANSWER_MAX_BYTES];
    size_t used = 99, n;
    enum rendezvous_parse_result r = rdvauth_parse(k, nonce, cluster, buf, len, &used);
    if (r == RENDEZVOUS_SERVING || r == RENDEZVOUS_FINISHED) {
        n = rdvauth_answer(k, nonce, r, cluster, want);
        if (used != n || len < n || memcmp(buf, want, n) != 0)
            __builtin_trap();
    } else if (used != 0) {
        __builtin_trap();
    }
    if (r == RENDEZVOUS_INCOMPLETE && len >= RDVAUTH_READ_MAX)
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hmac_sha256_key k;
    char *buf;
    if (size == 0)
        return 0;
    hmac_sha256_key(&k, "right", 5);
    buf = malloc(size - 1 + 1); /* its own allocation: ASan sees any read past the input */
    if (!buf)
        abort();
    memcpy(buf, data + 1, size - 1);
    if (data[0] & 1)
        hello(buf, size - 1);
    else
        answer(&k, buf, size - 1);
    free(buf);
    return 0;
}
