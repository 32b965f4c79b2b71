/* The worker's watch on its head (issue 20): once the worker has joined, a small child of its
 * rayboot holds a connection to the head's rendezvous (init/rendezvous.h) and exits the moment the
 * head writes FINISHED, so the worker leaves within milliseconds of the head's command instead of
 * at its next look at the "finished" key. The child is confined by its own seccomp filter once
 * connected: it can only wait, read and exit. How it ended is its exit status. */
#ifndef RAYBOOT_RDVWATCH_H
#define RAYBOOT_RDVWATCH_H

#include <sys/types.h>

#include "errbuf.h"
#include "sha256.h"

/* The watch's connect is given this long: the head is on the pod network, answering at once. */
#define RDVWATCH_CONNECT_TIMEOUT_MS 1000

struct rdvwatch {
    pid_t pid; /* -1: none */
};

/* What the watch's exit status says. */
enum rdvwatch_outcome {
    RDVWATCH_FINISHED,    /* FINISHED was written (with a key: by the head; without: to be confirmed) */
    RDVWATCH_UNREACHABLE, /* no rendezvous there: refused, unreachable, timeout */
    RDVWATCH_LOST,        /* it was held, and closed (or reset) without FINISHED */
    RDVWATCH_BAD,         /* it wrote something that is not rayboot's rendezvous */
    RDVWATCH_FAILED,      /* the child itself failed (its confinement, a signal: SIGSYS is a bug) */
};

/* Forks the watch on addr (numeric, as DNS gave it) port. key: Ray's token's (the watch says a
 * fresh nonce and FINISHED counts only with the head's tag for it and cluster_id), or NULL
 * (version 1: the supervisor confirms FINISHED through the GCS). -1 with a message when it cannot
 * fork. */
int rdvwatch_start(struct rdvwatch *w, const char *addr, int port, const struct hmac_sha256_key *key,
                   const char *cluster_id, struct errbuf *err);

/* The reaped watch's wait status: what it saw, and in err why (for the log). */
enum rdvwatch_outcome rdvwatch_outcome(int status, struct errbuf *err);

/* Kills and reaps a running watch (the worker is leaving, or rejoining another head). */
void rdvwatch_stop(struct rdvwatch *w);

#endif
