/* The sidecar's readiness: a worker's node ALIVE in the GCS; on the head the GCS SERVING, or with
 * RAYBOOT_SIDECAR_READINESS=cluster every node of its cluster ALIVE; looked at every
 * SIDECAR_READY_INTERVAL_MS while no drain runs; what each look and each lookup of the head's name
 * make of it. When to look is the loop's (loop.c). */
#include "readiness.h"

#include <stdio.h>
#include <string.h>

#include "draining.h"
#include "env.h"
#include "log.h"
#include "text.h"

#define READINESS_ENV "RAYBOOT_SIDECAR_READINESS"

static const struct {
    const char *name;
    enum sidecar_readiness readiness;
} readiness_names[] = {
    {"node", READINESS_NODE},
    {"cluster", READINESS_CLUSTER},
    {"cluster-leader-ready", READINESS_CLUSTER_LEADER_READY},
};

int sidecar_readiness_load(struct sidecar *s, struct errbuf *err)
{
    const char *text = env_lookup_nonempty(s->envp, READINESS_ENV);
    size_t i, n = sizeof(readiness_names) / sizeof(readiness_names[0]);
    s->readiness = READINESS_NODE;
    if (!text)
        return 0;
    for (i = 0; i < n && strcmp(text, readiness_names[i].name) != 0; i++)
        ;
    if (i == n)
        return errbuf_set(err, "%s=%.40s: expected node, cluster or cluster-leader-ready", READINESS_ENV, text);
    s->readiness = readiness_names[i].readiness;
    /* A head that cannot tell when its cluster is whole would never be Ready: said now, not at the
     * first probe. */
    if (s->readiness != READINESS_NODE && s->plan.role == PLAN_ROLE_HEAD && s->plan.workers_expected < 0)
        return errbuf_set(err,
                          "%s=%s: this head's number of workers is not known (no LWS_GROUP_SIZE, Volcano task "
                          "list or Indexed Job completions in this pod): set RAYBOOT_WORKERS_EXPECTED",
                          READINESS_ENV, text);
    if (s->readiness != READINESS_NODE && s->plan.role == PLAN_ROLE_HEAD)
        log_info("readiness (%s=%s): Ready when all %ld nodes are ALIVE (the head and %ld workers, from %s)%s",
                 READINESS_ENV, text, s->plan.workers_expected + 1, s->plan.workers_expected,
                 s->plan.workers_from ? s->plan.workers_from : "the plan",
                 s->readiness == READINESS_CLUSTER_LEADER_READY ? ", and until the first worker joins" : "");
    return 0;
}

/* The head counts its cluster's nodes instead of asking for the GCS's health. */
static bool counts_nodes(const struct sidecar *s)
{
    return s->plan.role == PLAN_ROLE_HEAD && s->readiness != READINESS_NODE;
}

struct prober_request sidecar_ready_request(struct sidecar *s, long now_ms)
{
    struct prober_request req;
    if (s->plan.role == PLAN_ROLE_WORKER)
        req = prober_req_find_node(s->gcs_addr, s->plan.head_port, s->plan.node_name, 0);
    else if (counts_nodes(s))
        req = prober_req_nodes(s->gcs_addr, s->plan.head_port, 0);
    else
        req = prober_req_health(s->gcs_addr, s->plan.head_port, 0);
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

/* Ready or not, with why; a change is logged. */
static void become(struct sidecar *s, bool ready, const char *reason)
{
    if (ready && !s->ready)
        log_info("ready: %s", reason);
    else if (!ready && s->ready)
        log_info("not ready any more: %s", reason);
    s->ready = ready;
    text_copy(s->ready_reason, sizeof(s->ready_reason), reason, strlen(reason));
}

/* A count of the head's cluster: Ready when every node is ALIVE, the head's among them. For
 * LeaderWorkerSet's LeaderReady, also while no worker has joined yet: the controller makes the
 * workers only once the leader is Ready (and never takes them back), so "whole" alone would wait
 * for ever; from the first worker on, only a whole cluster is Ready. */
static void cluster_reply(struct sidecar *s, const struct prober_reply *reply)
{
    char why[ERRBUF_MAX_BYTES];
    long expected = s->plan.workers_expected;
    bool head_alive = reply->alive > reply->alive_workers;
    bool forming = s->readiness == READINESS_CLUSTER_LEADER_READY && !s->worker_seen && reply->alive_workers == 0;

    s->worker_seen = s->worker_seen || reply->alive_workers > 0;
    if (head_alive && reply->alive_workers >= expected) {
        text_format(why, sizeof(why),
                    "all %ld nodes of the cluster are ALIVE in the GCS at %s:%d (the head and %ld workers)",
                    expected + 1, s->gcs_addr, s->plan.head_port, expected);
        become(s, true, why);
    } else if (forming) {
        text_format(why, sizeof(why),
                    "no worker has joined the GCS at %s:%d yet: Ready until one does, so that LeaderWorkerSet's "
                    "startupPolicy LeaderReady makes them (%s=cluster-leader-ready)",
                    s->gcs_addr, s->plan.head_port, READINESS_ENV);
        become(s, true, why);
    } else {
        text_format(why, sizeof(why),
                    "%ld of the cluster's %ld nodes ALIVE in the GCS at %s:%d (head %s, %ld of %ld workers)%s",
                    reply->alive_workers + (head_alive ? 1 : 0), expected + 1, s->gcs_addr, s->plan.head_port,
                    head_alive ? "ALIVE" : "not ALIVE", reply->alive_workers, expected,
                    s->worker_seen || s->readiness != READINESS_CLUSTER
                        ? ""
                        : "; with LeaderWorkerSet's startupPolicy LeaderReady no worker comes until this pod is "
                          "Ready: set " READINESS_ENV "=cluster-leader-ready");
        become(s, false, why);
    }
}

static void ready_reply(struct sidecar *s, const struct prober_reply *reply)
{
    s->ready_checked = true;
    if (reply && reply->status == PROBER_OK) {
        s->token_refused = false;
        if (counts_nodes(s)) {
            cluster_reply(s, reply);
            return;
        }
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

/* When a worker's node joined, as far as the looks tell: after the last look that did not find it,
 * by the first that did. */
static void note_node_joining(struct sidecar *s, const struct prober_reply *reply, long now_ms)
{
    if (s->plan.role != PLAN_ROLE_WORKER || !reply)
        return;
    if (reply->status == PROBER_ABSENT) {
        s->node_absent_ms = now_ms;
        s->node_alive_ms = 0;
    } else if (reply->status == PROBER_OK && s->node_absent_ms && !s->node_alive_ms) {
        s->node_alive_ms = now_ms;
    }
}

void sidecar_ready_reply(struct sidecar *s, const struct prober_reply *reply, long now_ms)
{
    note_node_joining(s, reply, now_ms);
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
