/* The drain the sidecar runs for the preStop hook (/drain) and SIGTERM: asked for once, given the
 * budget its grace period allows (never a caller's), started when the reason the pod ends is known
 * and the head's address is, stepped by lib/ray/drain.c, reported (log, metrics, termination log,
 * the clients waiting on /drain), and forgotten when no deletion of the pod followed it. When the
 * prober is asked, and the reason read, is the loop's (loop.c). */
#include "draining.h"

#include <stdio.h>
#include <string.h>

#include "http.h"
#include "log.h"
#include "termlog.h"

/* The least a drain is given, whatever the grace period: one DrainNode and a look or two. */
#define SIDECAR_DRAIN_MIN_BUDGET_MS 1000
/* Ray's `ray start` (2.60) waits for its own node to be ALIVE in the GCS before it does anything
 * else, in C++ (GlobalStateAccessor::GetNode: one look a second, for up to
 * RAY_raylet_start_wait_time_s, 30 s), and runs no Python signal handler meanwhile. A node drained
 * before that look saw it leaves at once (it is idle), so `ray start` waits out its 30 s, and the
 * kubelet's SIGTERM with it: a KubeRay pod, where `ray start` is PID 1, took 28 s to go. A drain of
 * a node seen joining is therefore held until this long after it was first seen ALIVE (or after
 * the drain was asked, when no look has seen it yet): Ray's look a second, and its round trip. */
#define SIDECAR_DRAIN_AFTER_JOIN_MS 1500
/* Past the grace period, how long the kubelet may still take to stop this container: a native
 * sidecar gets SIGTERM only once the Ray container has stopped, and at least 2 s more. */
#define SIDECAR_DRAIN_FORGET_SLACK_MS 5000

static void fail_drain(struct sidecar *s, const char *detail, long now_ms)
{
    memset(&s->drain, 0, sizeof(s->drain));
    s->drain.state = DRAIN_DONE;
    s->drain.outcome = DRAIN_FAILED;
    s->drain.started_ms = s->drain_wanted_ms;
    s->drain.finished_ms = now_ms;
    snprintf(s->drain.detail, sizeof(s->drain.detail), "%s", detail);
}

static void begin_drain(struct sidecar *s, long now_ms)
{
    char reason[sizeof(s->drain.reason)];
    long left_ms = s->drain_budget_ms - (now_ms - s->drain_wanted_ms);
    snprintf(reason, sizeof(reason), "rayboot-sidecar: pod %.40s/%.60s is ending (%.8s): %.90s", s->plan.namespace_,
             s->plan.pod_name, s->drain_trigger, s->disruption);
    drain_begin(&s->drain, s->gcs_addr, s->plan.head_port, s->plan.node_name, reason, left_ms, now_ms);
    s->drain.started_ms = s->drain_wanted_ms; /* the client waited from its request on */
    s->drains_started++;
    log_info("draining node %s (%s; %s), up to %.1f s", s->plan.node_name, s->drain_trigger, s->disruption,
             (double)left_ms / 1000.0);
}

/* The moment before which this pod's node may not have been seen by its own `ray start` yet, for a
 * drain asked at ASKED_MS; 0 when the node was never seen missing (it was ALIVE when this sidecar
 * first looked), or when the drain's client said its `ray start` acts on SIGTERM whether or not it
 * saw its node (rayboot's, or Ray's own past that wait). */
static long node_settled_ms(const struct sidecar *s, long asked_ms)
{
    if (!s->node_absent_ms || s->ray_start_stops_on_sigterm)
        return 0;
    return (s->node_alive_ms ? s->node_alive_ms : asked_ms) + SIDECAR_DRAIN_AFTER_JOIN_MS;
}

long sidecar_join_hold_ms(const struct sidecar *s, long now_ms)
{
    long settled_ms = node_settled_ms(s, s->drain_wanted ? s->drain_wanted_ms : now_ms);
    return settled_ms > now_ms ? settled_ms - now_ms : 0;
}

enum sidecar_drain_next sidecar_drain_next(struct sidecar *s, long now_ms, struct prober_request *req, long *at_ms)
{
    long settled_ms;
    if (s->drain_wanted && !s->reason_pending && s->drain.state == DRAIN_IDLE) {
        if (!s->plan.node_name[0]) {
            fail_drain(s, "this pod's Ray node name is unknown (no hostname; set RAYBOOT_POD_IP from status.podIP)",
                       now_ms);
            return SIDECAR_DRAIN_BUSY;
        }
        if (!s->gcs_addr[0]) {
            if (now_ms - s->drain_wanted_ms >= s->drain_budget_ms) {
                fail_drain(s, s->ready_reason, now_ms);
                return SIDECAR_DRAIN_BUSY;
            }
            if (now_ms - s->resolved_ms >= DRAIN_POLL_MS)
                return SIDECAR_DRAIN_RESOLVE;
            *at_ms = s->resolved_ms + DRAIN_POLL_MS;
            return SIDECAR_DRAIN_BUSY;
        }
        settled_ms = node_settled_ms(s, s->drain_wanted_ms);
        if (now_ms < settled_ms) {
            if (!s->drain_held)
                log_info("holding the drain %.2f s: node %s has just joined, and Ray's start-up may not have seen it "
                         "yet (drained now, it would leave before `ray start` sees it and keep it from its SIGTERM "
                         "for 30 s)",
                         (double)(settled_ms - now_ms) / 1000.0, s->plan.node_name);
            s->drain_held = true;
            *at_ms = settled_ms;
            return SIDECAR_DRAIN_BUSY;
        }
        begin_drain(s, now_ms);
    }
    if (drain_in_progress(&s->drain)) {
        long step_wake;
        enum drain_next step = drain_step(&s->drain, now_ms, req, &step_wake);
        if (step == DRAIN_NEXT_ASK)
            return SIDECAR_DRAIN_ASK;
        if (step == DRAIN_NEXT_SLEEP)
            *at_ms = step_wake;
        return SIDECAR_DRAIN_BUSY;
    }
    return SIDECAR_DRAIN_IDLE;
}

void sidecar_drain_reply(struct sidecar *s, const struct prober_reply *reply, long now_ms)
{
    enum drain_state before = s->drain.state;
    drain_reply(&s->drain, now_ms, reply);
    if (before == DRAIN_REQUESTING && reply && reply->status == PROBER_OK) {
        s->drain_accepted = true;
        snprintf(s->node_id, sizeof(s->node_id), "%.56s", reply->value);
        log_info("DrainNode accepted for node %s (%s); waiting for it to leave", s->plan.node_name, s->node_id);
    }
}

void sidecar_drain_report(struct sidecar *s, long now_ms)
{
    const struct drain *d = &s->drain;
    long ms = drain_elapsed_ms(d, now_ms);
    s->drain_reported = true;
    s->drain_wanted = false;
    s->last_drain_ms = ms;
    switch (d->outcome) {
    case DRAIN_LEFT:
        s->drains_left++;
        if (d->earlier)
            log_info("%s on the %s (%s)", d->detail, s->drain_trigger, s->disruption);
        else
            log_info("node %s drained: it left the cluster %.2f s after the %s (%s)", s->plan.node_name,
                     (double)ms / 1000.0, s->drain_trigger, s->disruption);
        termlog_write(s->envp, "rayboot-sidecar: node drained in %.2f s on %s: %s", (double)ms / 1000.0,
                      s->drain_trigger, s->disruption);
        break;
    case DRAIN_DEADLINE:
        s->drains_deadline++;
        log_warn("node %s still in the cluster after %.1f s of draining (%s)", s->plan.node_name, (double)ms / 1000.0,
                 s->disruption);
        termlog_write(s->envp, "rayboot-sidecar: drain not finished within its deadline on %s: %s", s->drain_trigger,
                      s->disruption);
        break;
    case DRAIN_GCS_LOST:
        s->drains_gcs_lost++;
        log_warn("node %s: drain accepted, then the GCS stopped answering (%s) before the node was seen leaving",
                 s->plan.node_name, d->detail);
        termlog_write(s->envp,
                      "rayboot-sidecar: drain accepted on %s, the GCS gone before the node was seen leaving: %s",
                      s->drain_trigger, s->disruption);
        break;
    case DRAIN_FAILED:
        s->drains_failed++;
        log_warn("could not drain node %s: %s", s->plan.node_name, d->detail);
        termlog_write(s->envp, "rayboot-sidecar: no drain on %s (%s): %s", s->drain_trigger, d->detail, s->disruption);
        break;
    }
    if (s->http_drain)
        http_resume_waiters(s->http_drain);
}

long sidecar_drain_budget_cap_ms(const struct sidecar *s)
{
    long cap = s->settings.grace_period_ms - SETTINGS_GRACE_MARGIN_MS;
    return cap < SIDECAR_DRAIN_MIN_BUDGET_MS ? SIDECAR_DRAIN_MIN_BUDGET_MS : cap;
}

/* A new drain: what an earlier one left is cleared, readiness is over from now on. */
void sidecar_drain_reset(struct sidecar *s, const char *trigger, long now_ms)
{
    if (s->drain_reported)
        log_info("draining again (%s): the last drain failed (%s)", trigger, s->drain.detail);
    memset(&s->drain, 0, sizeof(s->drain));
    s->drain_reported = false;
    s->drain_accepted = false;
    s->node_id[0] = '\0';
    s->drain_wanted = true;
    s->drain_wanted_ms = now_ms;
    s->drain_held = false;
    s->drain_budget_ms = sidecar_drain_budget_cap_ms(s);
    snprintf(s->drain_trigger, sizeof(s->drain_trigger), "%s", trigger);
    if (s->ready)
        log_info("not ready any more: draining (%s)", trigger);
    s->ready = false;
}

bool sidecar_drain_done(const struct sidecar *s)
{
    return s->drain.state == DRAIN_DONE && s->drain_reported;
}

bool sidecar_drained(const struct sidecar *s)
{
    return sidecar_drain_done(s) && s->drain.outcome != DRAIN_FAILED;
}

/* The kubelet kills a pod at most its grace period after the preStop hook began, so a drain the
 * sidecar outlives by that (and the slack) was followed by no deletion of this pod: a local caller
 * asked (any process of the pod can, as the same UID as the preStop hook), or a preStop ran for a
 * container the kubelet restarted. Forgotten: readiness is looked at again (a node still ALIVE is
 * ready) and the next /drain or SIGTERM drains again. Never after SIGTERM: the pod is going. */
void sidecar_drain_forget_stale(struct sidecar *s, long now_ms)
{
    long age_ms = now_ms - s->drain_wanted_ms;
    if (s->terminating || !sidecar_drained(s) || age_ms < s->settings.grace_period_ms + SIDECAR_DRAIN_FORGET_SLACK_MS)
        return;
    log_warn("the drain asked for %.1f s ago (%s) was not followed by this pod's deletion: looking at readiness again",
             (double)age_ms / 1000.0, s->drain_trigger);
    memset(&s->drain, 0, sizeof(s->drain));
    s->drain_reported = false;
    s->drain_accepted = false;
    s->node_id[0] = '\0';
    s->ray_start_stops_on_sigterm = false; /* said of the Ray of then: the pod lives on, and Ray may start again */
    s->drains_forgotten++;
    s->ready = false;
    s->next_ready_ms = now_ms;
    snprintf(s->ready_reason, sizeof(s->ready_reason), "not looked at since a drain %.0f s ago",
             (double)age_ms / 1000.0);
}
