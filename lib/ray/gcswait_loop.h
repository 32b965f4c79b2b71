/* The loop that runs the wait for the head's GCS (gcswait.h's policy) in the prober, with its
 * calls. */
#ifndef RAYBOOT_GCSWAIT_LOOP_H
#define RAYBOOT_GCSWAIT_LOOP_H

#include "dns.h"
#include "errbuf.h"
#include "gcswait.h"
#include "prober_req.h"
#include "sha256.h"

/* The prober's calls, for gcswait_run. */
struct gcswait_io {
    void *ctx;
    int (*resolve)(void *ctx, const char *name, long budget_ms, char addr[DNS_ADDR_MAX_BYTES], struct errbuf *err);
    int (*tcp)(void *ctx, const char *addr, int port, long budget_ms, struct errbuf *err);
    int (*health)(void *ctx, const char *addr, int port, long budget_ms, struct errbuf *err);
    int parent_fd; /* the prober's socket: news go out on it, PROBE_CANCEL comes in */
    /* Ray's token's (rdvauth.h): the rendezvous is greeted with a nonce and its SERVING counts only
     * with the head's tag. NULL: its SERVING is confirmed by a Health/Check. */
    const struct hmac_sha256_key *rdv_key;
};

/* Runs the wait req (PROBE_WAIT_GCS) to its end, sending each piece of news to the parent.
 * Returns 0 when it ended (its last news sent), 1 when another request came in meanwhile (it is
 * in *next, to be served), -1 when the parent is gone. */
int gcswait_run(const struct prober_request *req, const struct gcswait_io *io, struct prober_request *next);

#endif
