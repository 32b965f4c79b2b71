/* The prober: a child process, confined by seccomp, that does all of rayboot's network work
 * (DNS, TCP, gRPC to the GCS) and answers one request at a time over a seqpacket socket. The
 * parent, which will exec Ray, never parses a byte from the network itself. */
#ifndef RAYBOOT_PROBER_H
#define RAYBOOT_PROBER_H

#include <stdbool.h>
#include <sys/types.h>

#include "errbuf.h"
#include "prober_req.h"

struct prober {
    pid_t pid;
    int fd;
};

/* Forks the prober: it sets up the resolver from the files under root, then confines itself.
 * Returns 0, or -1 with a message (the resolver's set-up failed, or fork did). */
int prober_start(struct prober *p, const char *root, struct errbuf *err);

/* One request, waited for (PROBER_TIMEOUT_MS at most). Returns the reply's status (reply->reason
 * says why when it is not PROBER_OK), or PROBER_DIED when the prober itself failed: it died (err
 * says how, e.g. killed by SIGSYS for a syscall outside its allowlist) or did not answer in time
 * (it is then killed). */
enum prober_status prober_ask(struct prober *p, const struct prober_request *req, struct prober_reply *reply,
                              struct errbuf *err);

/* The same call split for an event loop: send one request, then call prober_receive when p->fd
 * is readable. prober_receive returns the reply's status, PROBER_PENDING when there is none yet,
 * or PROBER_DIED (err says how). The caller owns the timeout (PROBER_TIMEOUT_MS): prober_abort
 * ends a prober that is stuck. */
int prober_send(struct prober *p, const struct prober_request *req, struct errbuf *err);
enum prober_status prober_receive(struct prober *p, struct prober_reply *reply, struct errbuf *err);
void prober_abort(struct prober *p);

/* Closes the socket and reaps the prober; logs a warning if it was killed by SIGSYS on its way out. */
void prober_stop(struct prober *p);

/* The message for a prober that ended with wait status `status` (killed by SIGSYS: a call outside
 * its seccomp allowlist). Always returns -1. */
int prober_end_reason(pid_t pid, int status, struct errbuf *err);

#endif
