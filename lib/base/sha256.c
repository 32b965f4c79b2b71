/* SHA-256 and HMAC-SHA256, written from FIPS 180-4 and RFC 2104 for the rendezvous' tags: rayboot
 * links no crypto library (its TLS is the sidecar's alone), and these are small. Checked against
 * the FIPS examples and RFC 4231's vectors (tests/unit/test_sha256.c). */
#include "sha256.h"

#include <string.h>

static const uint32_t round_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t ror(uint32_t x, unsigned n)
{
    return (x >> n) | (x << (32 - n));
}

static void compress(uint32_t h[8], const uint8_t block[SHA256_BLOCK_BYTES])
{
    uint32_t w[64], v[8];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)block[4 * i] << 24 | (uint32_t)block[4 * i + 1] << 16 | (uint32_t)block[4 * i + 2] << 8 |
               (uint32_t)block[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    memcpy(v, h, sizeof(v));
    for (int i = 0; i < 64; i++) {
        uint32_t s1 = ror(v[4], 6) ^ ror(v[4], 11) ^ ror(v[4], 25);
        uint32_t ch = (v[4] & v[5]) ^ (~v[4] & v[6]);
        uint32_t t1 = v[7] + s1 + ch + round_k[i] + w[i];
        uint32_t s0 = ror(v[0], 2) ^ ror(v[0], 13) ^ ror(v[0], 22);
        uint32_t maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
        memmove(v + 1, v, 7 * sizeof(v[0]));
        v[4] += t1;
        v[0] = t1 + s0 + maj;
    }
    for (int i = 0; i < 8; i++)
        h[i] += v[i];
    explicit_bzero(w, sizeof(w));
    explicit_bzero(v, sizeof(v));
}

void sha256_init(struct sha256 *s)
{
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memset(s, 0, sizeof(*s));
    memcpy(s->h, iv, sizeof(iv));
}

void sha256_update(struct sha256 *s, const void *data, size_t len)
{
    const uint8_t *p = data;
    s->total += len;
    while (len > 0) {
        size_t take = SHA256_BLOCK_BYTES - s->used < len ? SHA256_BLOCK_BYTES - s->used : len;
        memcpy(s->block + s->used, p, take);
        s->used += take;
        p += take;
        len -= take;
        if (s->used == SHA256_BLOCK_BYTES) {
            compress(s->h, s->block);
            s->used = 0;
        }
    }
}

void sha256_final(struct sha256 *s, uint8_t out[SHA256_BYTES])
{
    uint64_t bits = s->total * 8;
    static const uint8_t one = 0x80, zero = 0;
    uint8_t len_be[8];
    for (int i = 0; i < 8; i++)
        len_be[i] = (uint8_t)(bits >> (56 - 8 * i));
    sha256_update(s, &one, 1);
    while (s->used != SHA256_BLOCK_BYTES - 8)
        sha256_update(s, &zero, 1);
    sha256_update(s, len_be, sizeof(len_be));
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(s->h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
        out[4 * i + 3] = (uint8_t)s->h[i];
    }
    explicit_bzero(s, sizeof(*s));
}

void hmac_sha256_key(struct hmac_sha256_key *k, const void *key, size_t len)
{
    uint8_t k0[SHA256_BLOCK_BYTES] = {0}, pad[SHA256_BLOCK_BYTES];
    if (len > SHA256_BLOCK_BYTES) {
        struct sha256 s;
        sha256_init(&s);
        sha256_update(&s, key, len);
        sha256_final(&s, k0);
    } else if (len > 0) {
        memcpy(k0, key, len);
    }
    for (size_t i = 0; i < sizeof(pad); i++)
        pad[i] = k0[i] ^ 0x36;
    sha256_init(&k->inner);
    sha256_update(&k->inner, pad, sizeof(pad));
    for (size_t i = 0; i < sizeof(pad); i++)
        pad[i] = k0[i] ^ 0x5c;
    sha256_init(&k->outer);
    sha256_update(&k->outer, pad, sizeof(pad));
    explicit_bzero(k0, sizeof(k0));
    explicit_bzero(pad, sizeof(pad));
}

void hmac_sha256(const struct hmac_sha256_key *k, const void *const *pieces, const size_t *lens, size_t n,
                 uint8_t out[SHA256_BYTES])
{
    struct sha256 s = k->inner;
    uint8_t inner[SHA256_BYTES];
    for (size_t i = 0; i < n; i++)
        sha256_update(&s, pieces[i], lens[i]);
    sha256_final(&s, inner);
    s = k->outer;
    sha256_update(&s, inner, sizeof(inner));
    sha256_final(&s, out);
    explicit_bzero(inner, sizeof(inner));
}

int hmac_equal(const uint8_t *a, const uint8_t *b, size_t len)
{
    uint8_t diff = 0;
    for (size_t i = 0; i < len; i++)
        diff |= (uint8_t)(a[i] ^ b[i]);
    return diff == 0;
}
