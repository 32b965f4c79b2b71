/* The sidecar's drain (draining.c): its state is in struct sidecar, its steps asked for by the
 * loop. */
#ifndef RAYBOOT_SIDECAR_DRAINING_H
#define RAYBOOT_SIDECAR_DRAINING_H

#include <stdbool.h>

#include "prober_req.h"
#include "sidecar.h"

/* What the drain needs of the prober now. */
enum sidecar_drain_next {
    SIDECAR_DRAIN_IDLE,    /* no drain runs: the prober is free for readiness */
    SIDECAR_DRAIN_BUSY,    /* nothing to ask now (*at_ms, when >= 0, is when to look again) */
    SIDECAR_DRAIN_RESOLVE, /* the head's address is needed first: resolve its name */
    SIDECAR_DRAIN_ASK,     /* send *req */
};

/* Starts a wanted drain once the reason is known and the head's address is, or fails it (no node
 * name, no address within its budget); then the drain's next step. */
enum sidecar_drain_next sidecar_drain_next(struct sidecar *s, long now_ms, struct prober_request *req, long *at_ms);

/* The prober's reply to a drain's request (NULL: the prober failed). */
void sidecar_drain_reply(struct sidecar *s, const struct prober_reply *reply, long now_ms);

/* A drain that is done, reported: the log, the counters, the termination log, the clients
 * waiting on /drain. */
void sidecar_drain_report(struct sidecar *s, long now_ms);

/* A new drain, given sidecar_drain_budget_cap_ms: what an earlier one left is cleared, readiness is
 * over from now on. */
void sidecar_drain_reset(struct sidecar *s, const char *trigger, long now_ms);

/* A drain the GCS accepted that no deletion of this pod followed within the grace period (and no
 * SIGTERM came) is forgotten: readiness is looked at again, and a new drain may be asked for. */
void sidecar_drain_forget_stale(struct sidecar *s, long now_ms);

/* How long a drain asked at NOW_MS would be held for a node that has just joined (0: not held). */
long sidecar_join_hold_ms(const struct sidecar *s, long now_ms);

/* How long every drain may take: the grace period less what the kubelet needs after it. */
long sidecar_drain_budget_cap_ms(const struct sidecar *s);

/* A drain has been made and reported (its outcome in s->drain). */
bool sidecar_drain_done(const struct sidecar *s);

/* The node is gone or going: a drain left or ran out of time (a failed one did not drain). */
bool sidecar_drained(const struct sidecar *s);

#endif
