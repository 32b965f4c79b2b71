/* The drain's guard (guard.c): a drain asked on the drain port only for a pod that is going, and
 * the reads of this Pod that decide it and give every drain its reason. */
#ifndef RAYBOOT_SIDECAR_GUARD_H
#define RAYBOOT_SIDECAR_GUARD_H

#include "kubeapi.h"
#include "sidecar.h"

/* Asks on the drain port are read at most this often: any process of the pod can ask, and each
 * read is a request to the API server. A preStop that comes within it waits this much longer. */
#define GUARD_READ_SPACING_MS 250
/* The longest an ask waits before its drain starts or it is refused: a read under way that began
 * before it (a start-up read, or one for earlier asks), then its own. A drain's budget counts from
 * the first ask it answers, so its answer comes within its budget and this. */
#define GUARD_ASK_WAIT_MS (2 * KUBEAPI_TIMEOUT_MS + GUARD_READ_SPACING_MS)

/* At start: guarded when the sidecar has API access (KUBERNETES_SERVICE_HOST and a token), then
 * one read of this Pod, to say in the log whether it works; unguarded (any ask drains, as before)
 * with a warning otherwise. */
void guard_start(struct sidecar *s, long now_ms);

/* A new POST /drain (not one resumed). Guarded: a read of this Pod follows (guard_step); its
 * caller waits for it, and for the drain when the pod is going. Unguarded: the drain is wanted. */
void guard_ask(struct sidecar *s, long now_ms);

/* Starts the read that asks since the last one need, when none runs and GUARD_READ_SPACING_MS has
 * passed (*wake_ms is lowered to when it may). A read answers only the asks made before it began. */
void guard_step(struct sidecar *s, long now_ms, long *wake_ms);

/* The read in s->api has its answer: said, and acted on by its use. */
void guard_read_done(struct sidecar *s, long now_ms);

/* Asks for a drain that finishes within what the grace period allows (sidecar_drain_budget_cap_ms;
 * no caller chooses), whatever the Pod says: SIGTERM, and /drain where there is no guard. While
 * one runs, this changes nothing (its callers wait for it); after one that failed (DrainNode could
 * not be made), it starts another; after one the GCS accepted (the node left, or is draining still
 * at the deadline), nothing, until that one is forgotten (sidecar_drain_forget_stale). Its reason
 * is read from the API (the read under way, if one is). */
void sidecar_want_drain(struct sidecar *s, const char *trigger);

#endif
