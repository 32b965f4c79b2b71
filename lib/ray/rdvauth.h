/* The rendezvous' keyed messages (version 2, issue 28): with Ray's token, a worker says a fresh
 * random nonce when it connects, and the head answers SERVING and FINISHED each with an
 * HMAC-SHA256 over that nonce, the message and (FINISHED) the cluster's id, keyed by the token and
 * the cluster's name (issue 40: both sides know it from their pods before the head answers): a
 * process that holds the head's port without the token cannot make a worker act, the head of
 * another cluster that shares the token cannot either, and a message seen once cannot be replayed
 * to another connection. Without a token the messages are version
 * 1's (rdvmsg.h) and a worker confirms them through the GCS. Pure, shared by the head's child
 * (init/rendezvous.c), the prober (gcswait_loop.c) and the worker's watch (init/rdvwatch.c). */
#ifndef RAYBOOT_RDVAUTH_H
#define RAYBOOT_RDVAUTH_H

#include <stddef.h>
#include <stdint.h>

#include "rdvmsg.h"
#include "sha256.h"

#define RDVAUTH_NONCE_BYTES 16
/* The worker's hello: "RAYBOOT-RDV/2 " and the nonce in 32 hex digits, then "\n". */
#define RDVAUTH_HELLO_PREFIX "RAYBOOT-RDV/2 "
#define RDVAUTH_HELLO_BYTES (sizeof(RDVAUTH_HELLO_PREFIX) - 1 + 2 * RDVAUTH_NONCE_BYTES + 1)
/* The head's answers: the word, a space, the tag in 64 hex digits, "\n". */
#define RDVAUTH_SERVING_PREFIX "RAYBOOT-RDV/2 SERVING "
#define RDVAUTH_FINISHED_PREFIX "RAYBOOT-RDV/2 FINISHED "
#define RDVAUTH_ANSWER_MAX_BYTES (sizeof(RDVAUTH_FINISHED_PREFIX) - 1 + 2 * SHA256_BYTES + 1)
/* Nothing longer is looked at by a keyed reader. */
#define RDVAUTH_READ_MAX RDVAUTH_ANSWER_MAX_BYTES
/* The cluster's id as rayboot notes it (hex of the GCS's id; pod.h's cluster_id). */
#define RDVAUTH_CLUSTER_ID_MAX_BYTES 256

/* The cluster's name as the plan gives it (plan_cluster_name: "namespace/job"); longer is cut. */
#define RDVAUTH_CLUSTER_NAME_MAX_BYTES 256

/* The token's key from Ray's header as rayauth.h makes it ("authorization: Bearer TOKEN"): -1
 * when it is not one (no token: the rendezvous is unkeyed). */
int rdvauth_key_from_header(struct hmac_sha256_key *k, const char *header);

/* The key the messages are tagged with: the token's key bound to the cluster's name (out may not
 * be token_key). A head tags, and a worker checks, with the key of the name its own pod gives it,
 * so the head of another cluster holding the same token (one Secret per namespace) cannot vouch. */
void rdvauth_key_for_cluster(struct hmac_sha256_key *out, const struct hmac_sha256_key *token_key, const char *name);

/* The hello for nonce: RDVAUTH_HELLO_BYTES in out. */
void rdvauth_hello(const uint8_t nonce[RDVAUTH_NONCE_BYTES], char out[RDVAUTH_HELLO_BYTES]);

/* What a worker sent so far (len bytes): 1 a whole hello (its nonce in nonce), 0 a proper
 * prefix of one, -1 anything else. */
int rdvauth_parse_hello(const char *buf, size_t len, uint8_t nonce[RDVAUTH_NONCE_BYTES]);

/* The head's answer for nonce: SERVING (cluster_id is not part of it: neither side knows it yet)
 * or FINISHED (over cluster_id). Returns its length. */
size_t rdvauth_answer(const struct hmac_sha256_key *k, const uint8_t nonce[RDVAUTH_NONCE_BYTES],
                      enum rendezvous_parse_result what, const char *cluster_id, char out[RDVAUTH_ANSWER_MAX_BYTES]);

/* The answer at the front of what a worker read (len bytes; at most RDVAUTH_READ_MAX looked at):
 * RENDEZVOUS_SERVING or _FINISHED only when its tag is the one the key gives for nonce (and
 * cluster_id, for FINISHED); a prefix is RENDEZVOUS_INCOMPLETE; a wrong tag or anything else is
 * RENDEZVOUS_BAD. *used as rendezvous_parse's. */
enum rendezvous_parse_result rdvauth_parse(const struct hmac_sha256_key *k, const uint8_t nonce[RDVAUTH_NONCE_BYTES],
                                           const char *cluster_id, const char *buf, size_t len, size_t *used);

#endif
