/* The sidecar's event loop, and how the endpoints and SIGTERM ask it for a drain (draining.h). */
#ifndef RAYBOOT_SIDECAR_LOOP_H
#define RAYBOOT_SIDECAR_LOOP_H

#include <stdbool.h>

#include "sidecar.h"

/* Runs until SIGTERM's work is done (0) or the loop cannot go on (-1, logged). */
int sidecar_loop(struct sidecar *s);

/* Asks for a drain that finishes within what the grace period allows (sidecar_drain_budget_cap_ms;
 * no caller chooses). While one runs, this changes nothing (its callers wait for it); after one
 * that failed (DrainNode could not be made), it starts another; after one the GCS accepted (the
 * node left, or is draining still at the deadline), nothing, until that one is forgotten
 * (sidecar_drain_forget_stale). */
void sidecar_want_drain(struct sidecar *s, const char *trigger);

#endif
