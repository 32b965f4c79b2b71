/* SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104): the rendezvous' tags (lib/ray/rdvauth.c). A
 * key is kept as the two hash states its padded key leaves (ipad and opad), so a process that
 * must tag or verify holds those, never the key itself. */
#ifndef RAYBOOT_SHA256_H
#define RAYBOOT_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_BYTES 32
#define SHA256_BLOCK_BYTES 64

struct sha256 {
    uint32_t h[8];
    uint64_t total; /* bytes hashed so far */
    size_t used;    /* bytes waiting in block */
    uint8_t block[SHA256_BLOCK_BYTES];
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
/* Writes the digest and wipes the state. */
void sha256_final(struct sha256 *s, uint8_t out[SHA256_BYTES]);

/* An HMAC-SHA256 key, as its inner and outer states. */
struct hmac_sha256_key {
    struct sha256 inner, outer;
};

/* Prepares key (any length; longer than a block is hashed first, as RFC 2104 says); the copies of
 * the key it made on the way are wiped. */
void hmac_sha256_key(struct hmac_sha256_key *k, const void *key, size_t len);
/* The tag of the n pieces, concatenated. */
void hmac_sha256(const struct hmac_sha256_key *k, const void *const *pieces, const size_t *lens, size_t n,
                 uint8_t out[SHA256_BYTES]);
/* 1 when the len bytes at a and b are equal, in a time that does not depend on where they differ. */
int hmac_equal(const uint8_t *a, const uint8_t *b, size_t len);

#endif
