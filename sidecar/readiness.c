/* The sidecar's readiness: a worker's node ALIVE in the GCS, on the head the GCS SERVING, looked at
 * every SIDECAR_READY_INTERVAL_MS while no drain runs; what each look and each lookup of the head's
 * name make of it. When to look is the loop's (loop.c). */
#include "readiness.h"

#include <stdio.h>

#include "draining.h"
#include "log.h"

struct prober_request sidecar_ready_request(struct sidecar *s, long now_ms)
{
    struct prober_request req = s->plan.role == PLAN_ROLE_WORKER
                                    ? prober_req_find_node(s->gcs_addr, s->plan.head_port, s->plan.node_name, 0)
                                    : prober_req_health(s->gcs_addr, s->plan.head_port, 0);
    s->next_ready_ms = now_ms + SIDECAR_READY_INTERVAL_MS;
    return req;
}

/* A refused token is a configuration error: said once, loudly, whichever request met it. */
void sidecar_note_token_refused(struct sidecar *s, const struct prober_reply *reply)
{
    bool refused = reply && reply->status == PROBER_UNAUTHENTICATED;
    if (refused && !s->token_refused)
        log_error("%s", reply->reason);
    s->token_refused = refused;
}

static void ready_reply(struct sidecar *s, const struct prober_reply *reply)
{
    s->ready_checked = true;
    if (reply && reply->status == PROBER_OK) {
        s->token_refused = false;
        if (!s->ready)
            log_info("ready: %s", s->plan.role == PLAN_ROLE_WORKER ? "this pod's node is ALIVE" : "the GCS is SERVING");
        s->ready = true;
        if (s->plan.role == PLAN_ROLE_WORKER)
            snprintf(s->ready_reason, sizeof(s->ready_reason), "node %s is ALIVE in the GCS at %s:%d",
                     s->plan.node_name, s->gcs_addr, s->plan.head_port);
        else
            snprintf(s->ready_reason, sizeof(s->ready_reason), "the GCS at %s:%d is SERVING", s->gcs_addr,
                     s->plan.head_port);
        return;
    }
    sidecar_note_token_refused(s, reply);
    if (s->ready)
        log_info("not ready any more: %s", reply ? reply->reason : "the prober failed");
    s->ready = false;
    snprintf(s->ready_reason, sizeof(s->ready_reason), "GCS %s:%d: %.900s", s->gcs_addr, s->plan.head_port,
             reply ? reply->reason : "the prober failed");
    /* Only "no such node" and a refused token come from a GCS that answered; anything else may be
     * an old address. */
    if (!reply || (reply->status != PROBER_ABSENT && reply->status != PROBER_UNAUTHENTICATED))
        s->gcs_addr[0] = '\0';
}

void sidecar_ready_reply(struct sidecar *s, const struct prober_reply *reply)
{
    ready_reply(s, reply);
    if (s->drain_wanted || sidecar_drained(s))
        s->ready = false; /* a look that was under way when the drain began */
}

void sidecar_resolve_reply(struct sidecar *s, const struct prober_reply *reply)
{
    if (reply && reply->status == PROBER_OK) {
        snprintf(s->gcs_addr, sizeof(s->gcs_addr), "%s", reply->addr);
        return;
    }
    s->ready = false;
    s->ready_checked = true;
    snprintf(s->ready_reason, sizeof(s->ready_reason), "head %.253s: %.700s", s->plan.head_fqdn,
             reply ? reply->reason : "the prober failed");
}
