/* Waiting for the head: its name, its GCS, and (on the head) the workers joining. The policy
 * (backoff, re-resolution, progress lines, deadline) lives here; the network work is the
 * prober's. */
#ifndef RAYBOOT_WAIT_H
#define RAYBOOT_WAIT_H

#include "dns.h"
#include "errbuf.h"
#include "prober.h"

#include <stdbool.h>

enum wait_result {
    WAIT_READY = 0,
    WAIT_DEADLINE = -1,    /* the message names the address and the last failure */
    WAIT_STOPPED = -2,     /* the wait's stop check said to give up */
    WAIT_PROBER_DIED = -3, /* the message says how */
    /* The GCS refused the token (or its absence): a configuration error (exit 2); the message
     * names the variables. */
    WAIT_UNAUTHENTICATED = -4,
};

/* What may cut a wait short. When fd (a signalfd) becomes readable, check(ctx) reads everything
 * there (it must: the wait polls fd again) and says whether to give up; if not, the wait goes on
 * where it was: the same deadline, address, backoff and attempt count. */
struct wait_stop {
    int fd; /* -1: nothing interrupts */
    bool (*check)(void *ctx);
    void *ctx;
};

struct wait_gcs {
    const char *name; /* host name or address of the head */
    int port;
    long timeout_ms;              /* the overall deadline for this wait */
    const struct wait_stop *stop; /* or NULL */
    int rendezvous_port;          /* the head rayboot's rendezvous (init/rendezvous.h); 0: none */
    int poll_min_ms, poll_max_ms; /* the GCS poll's interval (gcswait.h); 0: the default */
    bool confirm;                 /* the head's rendezvous message is confirmed by a Health/Check */
    const char *cluster_name;     /* the rendezvous' key is bound to it (rdvauth.h); NULL: "" */
};

/* Waits until name resolves and its GCS answers Health/Check SERVING (which Ray answers without
 * a token), or the head's rendezvous says it does (its rayboot saw it; with confirm, one
 * Health/Check of ours confirms): the prober does (gcswait.h), this waits on its news and on
 * stop. addr receives the address that answered. A stop that says to give up cancels the
 * prober's wait and returns at once. Nothing more is asked: the Ray version (and with it the
 * token's check) is wait_read_ray_version's, at the moment the caller chooses. */
enum wait_result wait_for_gcs(struct prober *p, const struct wait_gcs *w, char addr[DNS_ADDR_MAX_BYTES],
                              struct errbuf *err);

/* Reads the Ray version of the GCS at addr:port (CheckAlive) and logs it; the prober asks for
 * nodes in that version's form from then on, so this comes before the first node lookup. It is
 * also the token's check: Ray's GCS answers Health/Check to anyone but refuses CheckAlive without
 * the cluster's token (WAIT_UNAUTHENTICATED, err naming the variables). A version that cannot be
 * read otherwise is logged and taken for the newest form: WAIT_READY. */
enum wait_result wait_read_ray_version(struct prober *p, const char *addr, int port, struct errbuf *err);

/* Waits until `expected` workers are ALIVE in the GCS at addr:port, or the timeout; either way
 * *joined says how many were seen last. WAIT_DEADLINE here is not fatal: the caller goes on. */
enum wait_result wait_for_workers(struct prober *p, const char *addr, int port, long expected, long timeout_ms,
                                  const struct wait_stop *stop, long *joined, struct errbuf *err);

/* Sleeps ms. Whatever arrives on stop->fd meanwhile is handed to stop->check (even when ms is 0);
 * returns -1 as soon as that says to give up, 0 after ms otherwise. stop may be NULL. */
int wait_sleep(long ms, const struct wait_stop *stop);

/* Logs the GCS's Ray version (a PROBE_RAY_VERSION reply; reply may be NULL when the prober
 * failed), with a warning when it is too old for filtered node lookups or unknown. A GCS that does
 * not say is taken to be as new as the pinned Ray. */
void wait_report_ray_version(const char *addr, enum prober_status st, const struct prober_reply *reply);

#endif
