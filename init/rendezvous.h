/* The rendezvous (issue 20): the head's rayboot tells its waiting workers the moment its GCS
 * serves, and its joined workers the moment its command ends. A child of the head's rayboot,
 * confined by its own seccomp filter, accepts and holds up to RENDEZVOUS_MAX_HELD connections on
 * a TCP port of ours (the oldest gives way to a new one when all are taken, and none is held
 * longer than an hour); when told the GCS is SERVING it writes SERVING to each held connection and
 * to every later one, and keeps them; when told the command FINISHED it writes FINISHED to each
 * and closes them (later ones get both and are closed). Without Ray's token those are version 1's
 * fixed lines (rdvmsg.h), nothing is read, and a worker confirms each through the GCS before it
 * acts; with it, each connection is answered once it has said its nonce, with the head's HMAC over
 * it (rdvauth.h), and a worker acts on that alone. Waiting workers (the prober, lib/ray/gcswait.c)
 * let go after SERVING; joined ones (their watch, init/rdvwatch.c) hold on for FINISHED. */
#ifndef RAYBOOT_RENDEZVOUS_H
#define RAYBOOT_RENDEZVOUS_H

#include <sys/types.h>

#include "errbuf.h"
#include "rdvmsg.h"
#include "sha256.h"

#define RENDEZVOUS_MAX_HELD 1024

/* The head side: the listening child and the parent's end of its control socket. */
struct rendezvous {
    pid_t pid; /* -1: none */
    int fd;    /* the control socket; -1: none */
};

/* rendezvous_start's failures: the port cannot be had (taken by another process, or not ours to
 * bind), or the child could not be made. */
#define RENDEZVOUS_NO_PORT (-2)
#define RENDEZVOUS_FAILED (-1)

/* Binds port on every address, then forks the child that holds the connections. key: Ray's
 * token's (rdvauth.h: each worker's hello awaited, each answer tagged), or NULL (version 1's fixed
 * messages). 0, or one of the failures above with a message. */
int rendezvous_start(struct rendezvous *r, int port, const struct hmac_sha256_key *key, struct errbuf *err);

/* The cluster's id (hex, as the GCS gave it): FINISHED's tag is over it, so a worker of another
 * cluster that shares the token cannot be told this one finished. Sent before FINISHED. */
void rendezvous_cluster_id(struct rendezvous *r, const char *id);

/* The GCS is SERVING: the child writes the message to every held and later connection, and keeps
 * them. */
void rendezvous_serving(struct rendezvous *r);

/* The head's command has ended: the child writes FINISHED to every held connection and closes
 * them, and answers later ones with both lines. */
void rendezvous_finished(struct rendezvous *r);

/* Closes the control socket (the child exits) and reaps it. */
void rendezvous_stop(struct rendezvous *r);

#endif
