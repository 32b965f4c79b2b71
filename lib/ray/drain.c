/* The drain sequence: one DrainNode, then a look every DRAIN_POLL_MS until the node is gone from
 * the GCS's ALIVE list; when there is no ALIVE node to drain, one question: how did it leave (a
 * drain before this one, or a death). Deciding when to drain, and what to do after, is the
 * caller's. */
#include "drain.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "deadline.h"

static long long unix_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

void drain_begin(struct drain *d, const char *gcs_addr, int gcs_port, const char *node_name, const char *reason,
                 long budget_ms, long now_ms)
{
    memset(d, 0, sizeof(*d));
    d->state = DRAIN_REQUESTING;
    snprintf(d->gcs_addr, sizeof(d->gcs_addr), "%s", gcs_addr);
    d->gcs_port = gcs_port;
    snprintf(d->node_name, sizeof(d->node_name), "%s", node_name);
    snprintf(d->reason, sizeof(d->reason), "%s", reason);
    d->started_ms = now_ms;
    d->deadline_ms = now_ms + (budget_ms > 0 ? budget_ms : 0);
    /* The GCS gets the same deadline: past it, the node may be killed whatever it runs. */
    d->deadline_unix_ms = unix_now_ms() + (budget_ms > 0 ? budget_ms : 0);
}

static void finish(struct drain *d, enum drain_outcome outcome, long now_ms)
{
    d->state = DRAIN_DONE;
    d->outcome = outcome;
    d->finished_ms = now_ms;
}

/* Every request is bounded by the drain's own deadline: a GCS that stops answering mid-drain
 * must not eat the grace period that stopping Ray still needs. */
static struct prober_request request(const struct drain *d, int op, long now_ms)
{
    long budget_ms = deadline_left_ms(d->deadline_ms, now_ms);
    if (op == PROBE_DRAIN)
        return prober_req_drain(d->gcs_addr, d->gcs_port, d->node_name, d->reason, d->deadline_unix_ms, budget_ms);
    if (op == PROBE_DEPARTURE)
        return prober_req_departure(d->gcs_addr, d->gcs_port, d->node_name, budget_ms);
    return prober_req_find_node(d->gcs_addr, d->gcs_port, d->node_name, budget_ms);
}

enum drain_next drain_step(struct drain *d, long now_ms, struct prober_request *req, long *wake_ms)
{
    *wake_ms = now_ms;
    switch (d->state) {
    case DRAIN_IDLE:
    case DRAIN_DONE:
        return DRAIN_NEXT_DONE;
    case DRAIN_REQUESTING:
        *req = request(d, PROBE_DRAIN, now_ms);
        return DRAIN_NEXT_ASK;
    case DRAIN_ASKING:
        if (now_ms >= d->deadline_ms) {
            finish(d, DRAIN_FAILED, now_ms); /* d->detail: there was no ALIVE node */
            return DRAIN_NEXT_DONE;
        }
        *req = request(d, PROBE_DEPARTURE, now_ms);
        return DRAIN_NEXT_ASK;
    case DRAIN_WATCHING:
        if (now_ms >= d->deadline_ms) {
            finish(d, DRAIN_DEADLINE, now_ms);
            return DRAIN_NEXT_DONE;
        }
        if (now_ms < d->next_poll_ms) {
            *wake_ms = d->next_poll_ms < d->deadline_ms ? d->next_poll_ms : d->deadline_ms;
            return DRAIN_NEXT_SLEEP;
        }
        *req = request(d, PROBE_FIND_NODE, now_ms);
        return DRAIN_NEXT_ASK;
    }
    return DRAIN_NEXT_DONE;
}

/* The GCS's answer to "how did the node leave", after DrainNode found no ALIVE node. */
static void departure_reply(struct drain *d, long now_ms, const struct prober_reply *reply)
{
    d->earlier = true;
    if (!reply || reply->status != PROBER_OK) {
        /* d->detail still says there was no ALIVE node; how it left is unknown. */
        finish(d, DRAIN_FAILED, now_ms);
        return;
    }
    d->departure = reply->departure;
    if (d->departure == GCS_DEPARTURE_DRAIN_PREEMPTED || d->departure == GCS_DEPARTURE_DRAIN_IDLE) {
        snprintf(d->detail, sizeof(d->detail), "node %s had been drained already (%s)", d->node_name,
                 gcs_departure_name(d->departure));
        finish(d, DRAIN_LEFT, now_ms);
        return;
    }
    snprintf(d->detail, sizeof(d->detail), "node %s had left the cluster already, not drained (%s)", d->node_name,
             gcs_departure_name(d->departure));
    finish(d, DRAIN_FAILED, now_ms);
}

void drain_reply(struct drain *d, long now_ms, const struct prober_reply *reply)
{
    if (d->state == DRAIN_ASKING) {
        departure_reply(d, now_ms, reply);
        return;
    }
    if (d->state == DRAIN_REQUESTING) {
        if (!reply || reply->status != PROBER_OK) {
            snprintf(d->detail, sizeof(d->detail), "%s", reply ? reply->reason : "the prober failed");
            if (reply && reply->status == PROBER_ABSENT)
                d->state = DRAIN_ASKING; /* nothing ALIVE to drain: ask how it left */
            else
                finish(d, DRAIN_FAILED, now_ms);
            return;
        }
        d->state = DRAIN_WATCHING;
        d->next_poll_ms = now_ms + DRAIN_POLL_MS;
        return;
    }
    if (d->state != DRAIN_WATCHING)
        return;
    /* Only a GCS that answered "no such ALIVE node" proves the node left; silence proves nothing,
     * but a GCS silent DRAIN_GCS_LOST_LOOKS times in a row will not say it any more. */
    if (reply && reply->status == PROBER_ABSENT) {
        finish(d, DRAIN_LEFT, now_ms);
        return;
    }
    d->failed_looks = reply && reply->status == PROBER_OK ? 0 : d->failed_looks + 1;
    if (d->failed_looks > 0)
        snprintf(d->detail, sizeof(d->detail), "%s", reply ? reply->reason : "the prober failed");
    if (d->failed_looks >= DRAIN_GCS_LOST_LOOKS) {
        finish(d, DRAIN_GCS_LOST, now_ms);
        return;
    }
    d->next_poll_ms = now_ms + DRAIN_POLL_MS;
}

bool drain_in_progress(const struct drain *d)
{
    return d->state == DRAIN_REQUESTING || d->state == DRAIN_ASKING || d->state == DRAIN_WATCHING;
}

long drain_elapsed_ms(const struct drain *d, long now_ms)
{
    return (d->state == DRAIN_DONE ? d->finished_ms : now_ms) - d->started_ms;
}

const char *drain_outcome_name(enum drain_outcome outcome)
{
    switch (outcome) {
    case DRAIN_LEFT:
        return "left";
    case DRAIN_DEADLINE:
        return "deadline";
    case DRAIN_FAILED:
        return "failed";
    case DRAIN_GCS_LOST:
        return "gcs-lost";
    }
    return "unknown";
}
