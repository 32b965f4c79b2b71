/* How the sidecar proves to `rayboot-sidecar drain` that it is the sidecar and not another process
 * that took the drain port first: the client sends a fresh nonce with each request, and the
 * sidecar answers with an HMAC-SHA256, keyed by Ray's token, over the nonce, the request, and the
 * answer's status and body. A process without the token cannot make one. Both sides have the
 * token where Ray's token authentication is on (the sidecar needs it for the GCS, the Ray
 * container for Ray); without it nothing is proven. Pure: no I/O. */
#ifndef RAYBOOT_SIDECAR_DRAINPROOF_H
#define RAYBOOT_SIDECAR_DRAINPROOF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sha256.h"

#define DRAINPROOF_NONCE_BYTES 16
/* The request's header: the nonce in 32 lower-case hex digits. */
#define DRAINPROOF_NONCE_HEADER "X-Rayboot-Nonce"
/* The answer's header: the tag in 64 lower-case hex digits. */
#define DRAINPROOF_PROOF_HEADER "X-Rayboot-Proof"
#define DRAINPROOF_NONCE_HEX (2 * DRAINPROOF_NONCE_BYTES)
#define DRAINPROOF_TAG_HEX (2 * SHA256_BYTES)

/* What the client sends: the nonce's hex (and a NUL) from DRAINPROOF_NONCE_BYTES random bytes. */
void drainproof_nonce_hex(const uint8_t nonce[DRAINPROOF_NONCE_BYTES], char out[DRAINPROOF_NONCE_HEX + 1]);

/* A nonce header's value as the sidecar takes it: exactly 32 lower-case hex digits. */
bool drainproof_nonce_valid(const char *nonce_hex);

/* The tag's hex (and a NUL) for the answer (status, body of len bytes) to path with nonce_hex. */
void drainproof_tag(const struct hmac_sha256_key *k, const char *nonce_hex, const char *path, int status,
                    const char *body, size_t len, char out[DRAINPROOF_TAG_HEX + 1]);

/* Whether tag_hex (from the answer's header; NULL when there was none) is the tag the key gives for
 * that answer; compared in constant time. */
bool drainproof_check(const struct hmac_sha256_key *k, const char *nonce_hex, const char *path, int status,
                      const char *body, size_t len, const char *tag_hex);

#endif
