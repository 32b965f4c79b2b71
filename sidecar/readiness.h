/* The sidecar's readiness (readiness.c): its state is in struct sidecar, its looks made by the
 * loop. */
#ifndef RAYBOOT_SIDECAR_READINESS_H
#define RAYBOOT_SIDECAR_READINESS_H

#include "prober_req.h"
#include "sidecar.h"

/* RAYBOOT_SIDECAR_READINESS into s->readiness (after the plan: a "cluster" head must know how
 * many workers it has); -1 with the variable named when it cannot be used. */
int sidecar_readiness_load(struct sidecar *s, struct errbuf *err);

/* The next look: a worker's node by name, the head's GCS health (or its nodes, counted, for a
 * "cluster" readiness); the one after it is due SIDECAR_READY_INTERVAL_MS from now. */
struct prober_request sidecar_ready_request(struct sidecar *s, long now_ms);

/* The reply to a look (NULL: the prober failed). */
void sidecar_ready_reply(struct sidecar *s, const struct prober_reply *reply, long now_ms);

/* The reply to a lookup of the head's name: its address, or why readiness cannot be looked at. */
void sidecar_resolve_reply(struct sidecar *s, const struct prober_reply *reply);

/* A refused token is a configuration error: said once, loudly, whichever request met it (reply
 * NULL or another status ends a run of refusals). */
void sidecar_note_token_refused(struct sidecar *s, const struct prober_reply *reply);

#endif
