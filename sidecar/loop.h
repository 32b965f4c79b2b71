/* The sidecar's event loop, and the drain it runs for the endpoints and for SIGTERM. */
#ifndef RAYBOOT_SIDECAR_LOOP_H
#define RAYBOOT_SIDECAR_LOOP_H

#include <stdbool.h>

#include "sidecar.h"

/* Runs until SIGTERM's work is done (0) or the loop cannot go on (-1, logged). */
int sidecar_loop(struct sidecar *s);

/* Asks for a drain that finishes within budget_ms, cut to what the grace period allows. While one
 * runs, this changes nothing (its callers wait for it); after one that failed (DrainNode could not
 * be made), it starts another; after one the GCS accepted (the node left, or is draining still at
 * the deadline), nothing. */
void sidecar_want_drain(struct sidecar *s, const char *trigger, long budget_ms);

/* The longest a drain may take: the grace period less what the kubelet needs after it. */
long sidecar_drain_budget_cap_ms(const struct sidecar *s);

/* A drain has been made and reported (its outcome in s->drain). */
bool sidecar_drain_done(const struct sidecar *s);

/* The node is gone or going: a drain left or ran out of time (a failed one did not drain). */
bool sidecar_drained(const struct sidecar *s);

#endif
