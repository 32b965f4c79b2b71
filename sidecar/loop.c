/* The sidecar's event loop: one epoll over signals, the prober's socket, the HTTP server and the
 * API reader. It decides what the prober does next (the drain first, then readiness), finishes
 * the drain (log, metrics, termination log, waiting clients) and, after SIGTERM, leaves once the
 * drain is done and Ray's processes are gone. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "loop.h"

#include "http.h"
#include "log.h"
#include "monotime.h"
#include "raypids.h"
#include "sidecar.h"
#include "termlog.h"
#include "wait.h"

/* DNS for the head at most once a second, the rule rayboot's own waits keep. */
#define SIDECAR_RESOLVE_INTERVAL_MS 1000
/* A GCS that did not say its Ray version is asked again this much later: it may not have been up
 * yet (the sidecar starts with the pod), and one small RPC this seldom costs nothing. */
#define SIDECAR_VERSION_RETRY_MS 10000
/* After SIGTERM, how often to look whether Ray's processes are gone. */
#define SIDECAR_EXIT_POLL_MS 250
/* Nothing to do for this long: wake anyway (and run the HTTP server's timers). */
#define SIDECAR_IDLE_WAKE_MS 1000
/* The least a drain is given, whatever the grace period: one DrainNode and a look or two. */
#define SIDECAR_DRAIN_MIN_BUDGET_MS 1000

enum { TAG_SIGNAL = 1, TAG_PROBER, TAG_HTTP, TAG_HTTP_DRAIN, TAG_API };

static int watch(struct sidecar *s, int fd, int tag)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)tag};
    return epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev);
}

static void unwatch(struct sidecar *s, int fd)
{
    epoll_ctl(s->epfd, EPOLL_CTL_DEL, fd, NULL);
}

static void earliest(long *wake_ms, long t)
{
    if (t < *wake_ms)
        *wake_ms = t;
}

/* A prober that died or hung is replaced; the sidecar keeps serving meanwhile. */
static void restart_prober(struct sidecar *s, const char *why)
{
    struct errbuf err;
    log_warn("%s; starting a new prober", why);
    if (s->prober.fd >= 0)
        unwatch(s, s->prober.fd);
    prober_abort(&s->prober);
    s->in_flight = USE_NONE;
    s->version_addr[0] = '\0';
    if (prober_start(&s->prober, s->root, &err) < 0) {
        log_error("could not start the prober: %s", err.msg);
        return;
    }
    watch(s, s->prober.fd, TAG_PROBER);
}

static void send_request(struct sidecar *s, const struct prober_request *req, enum sidecar_prober_use use, long now_ms)
{
    struct errbuf err;
    if (prober_send(&s->prober, req, &err) < 0) {
        restart_prober(s, err.msg);
        return;
    }
    s->in_flight = use;
    s->prober_deadline_ms = now_ms + PROBER_TIMEOUT_MS; /* past it the prober is replaced */
}

static void send_resolve(struct sidecar *s, long now_ms)
{
    struct prober_request req = prober_req_resolve(s->plan.head_fqdn, 0);
    s->resolved_ms = now_ms;
    send_request(s, &req, USE_RESOLVE, now_ms);
}

static void send_version(struct sidecar *s, long now_ms)
{
    struct prober_request req = prober_req_ray_version(s->gcs_addr, s->plan.head_port, 0);
    send_request(s, &req, USE_VERSION, now_ms);
}

/* Readiness: a worker's node ALIVE in the GCS; on the head, the GCS SERVING. */
static void send_ready_check(struct sidecar *s, long now_ms)
{
    struct prober_request req = s->plan.role == PLAN_ROLE_WORKER
                                    ? prober_req_find_node(s->gcs_addr, s->plan.head_port, s->plan.node_name, 0)
                                    : prober_req_health(s->gcs_addr, s->plan.head_port, 0);
    s->next_ready_ms = now_ms + SIDECAR_READY_INTERVAL_MS;
    send_request(s, &req, USE_READY, now_ms);
}

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

/* What the prober does next, when it is free: the drain's needs first, then readiness. */
static void next_request(struct sidecar *s, long now_ms, long *wake_ms)
{
    struct prober_request req;
    long step_wake;
    if (s->gcs_addr[0] && strcmp(s->version_addr, s->gcs_addr) != 0 && now_ms >= s->version_retry_ms) {
        send_version(s, now_ms); /* first: every node lookup after it speaks that version */
        return;
    }
    if (s->drain_wanted && !s->reason_pending && s->drain.state == DRAIN_IDLE) {
        if (!s->plan.node_name[0]) {
            fail_drain(s, "this pod's Ray node name is unknown (no hostname; set RAYBOOT_POD_IP from status.podIP)",
                       now_ms);
            return;
        }
        if (!s->gcs_addr[0]) {
            if (now_ms - s->drain_wanted_ms >= s->drain_budget_ms) {
                fail_drain(s, s->ready_reason, now_ms);
            } else if (now_ms - s->resolved_ms >= DRAIN_POLL_MS) {
                send_resolve(s, now_ms);
            } else {
                earliest(wake_ms, s->resolved_ms + DRAIN_POLL_MS);
            }
            return;
        }
        begin_drain(s, now_ms);
    }
    if (drain_in_progress(&s->drain)) {
        enum drain_next step = drain_step(&s->drain, now_ms, &req, &step_wake);
        if (step == DRAIN_NEXT_ASK)
            send_request(s, &req, USE_DRAIN, now_ms);
        else if (step == DRAIN_NEXT_SLEEP)
            earliest(wake_ms, step_wake);
        return;
    }
    if (s->drain_wanted || sidecar_drained(s))
        return; /* readiness is over while a drain runs and once the node is going */
    if (now_ms < s->next_ready_ms) {
        earliest(wake_ms, s->next_ready_ms);
    } else if (s->gcs_addr[0]) {
        send_ready_check(s, now_ms);
    } else if (now_ms - s->resolved_ms >= SIDECAR_RESOLVE_INTERVAL_MS) {
        send_resolve(s, now_ms);
    } else {
        earliest(wake_ms, s->resolved_ms + SIDECAR_RESOLVE_INTERVAL_MS);
    }
}

/* A refused token is a configuration error: said once, loudly, whichever request met it. */
static void note_token_refused(struct sidecar *s, const struct prober_reply *reply)
{
    bool refused = reply && reply->status == PROBER_UNAUTHENTICATED;
    if (refused && !s->token_refused)
        log_error("%s", reply->reason);
    s->token_refused = refused;
}

static void on_ready_reply(struct sidecar *s, const struct prober_reply *reply)
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
    note_token_refused(s, reply);
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

static void on_reply(struct sidecar *s, const struct prober_reply *reply, long now_ms)
{
    enum sidecar_prober_use use = s->in_flight;
    enum drain_state before = s->drain.state;
    s->in_flight = USE_NONE;
    switch (use) {
    case USE_RESOLVE:
        if (reply && reply->status == PROBER_OK) {
            snprintf(s->gcs_addr, sizeof(s->gcs_addr), "%s", reply->addr);
        } else {
            s->ready = false;
            s->ready_checked = true;
            snprintf(s->ready_reason, sizeof(s->ready_reason), "head %.253s: %.700s", s->plan.head_fqdn,
                     reply ? reply->reason : "the prober failed");
        }
        break;
    case USE_READY:
        on_ready_reply(s, reply);
        if (s->drain_wanted || sidecar_drained(s))
            s->ready = false; /* a look that was under way when the drain began */
        break;
    case USE_DRAIN:
        drain_reply(&s->drain, now_ms, reply);
        if (before == DRAIN_REQUESTING && reply && reply->status == PROBER_OK) {
            s->drain_accepted = true;
            snprintf(s->node_id, sizeof(s->node_id), "%.56s", reply->value);
            log_info("DrainNode accepted for node %s (%s); waiting for it to leave", s->plan.node_name, s->node_id);
        }
        break;
    case USE_VERSION:
        if (reply && reply->status == PROBER_OK) {
            snprintf(s->version_addr, sizeof(s->version_addr), "%s", s->gcs_addr);
            wait_report_ray_version(s->gcs_addr, PROBER_OK, reply);
        } else {
            s->version_retry_ms = now_ms + SIDECAR_VERSION_RETRY_MS;
            if (reply && reply->status == PROBER_UNAUTHENTICATED) {
                note_token_refused(s, reply); /* the token is what is wrong, not the version */
                break;
            }
            if (!s->version_warned)
                wait_report_ray_version(s->gcs_addr, reply ? reply->status : PROBER_DIED, reply);
            s->version_warned = true;
        }
        break;
    case USE_NONE:
        break;
    }
}

static void report_drain(struct sidecar *s, long now_ms)
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
    case DRAIN_FAILED:
        s->drains_failed++;
        log_warn("could not drain node %s: %s", s->plan.node_name, d->detail);
        termlog_write(s->envp, "rayboot-sidecar: no drain on %s (%s): %s", s->drain_trigger, d->detail, s->disruption);
        break;
    }
    http_resume_waiters(s->http_drain);
}

long sidecar_drain_budget_cap_ms(const struct sidecar *s)
{
    long cap = s->settings.grace_period_ms - SETTINGS_GRACE_MARGIN_MS;
    return cap < SIDECAR_DRAIN_MIN_BUDGET_MS ? SIDECAR_DRAIN_MIN_BUDGET_MS : cap;
}

/* A new drain: what an earlier one left is cleared, readiness is over from now on. */
static void reset_drain(struct sidecar *s, const char *trigger, long budget_ms, long now_ms)
{
    long cap = sidecar_drain_budget_cap_ms(s);
    if (s->drain_reported)
        log_info("draining again (%s): the last drain failed (%s)", trigger, s->drain.detail);
    memset(&s->drain, 0, sizeof(s->drain));
    s->drain_reported = false;
    s->drain_accepted = false;
    s->node_id[0] = '\0';
    s->drain_wanted = true;
    s->drain_wanted_ms = now_ms;
    s->drain_budget_ms = budget_ms < cap ? budget_ms : cap;
    snprintf(s->drain_trigger, sizeof(s->drain_trigger), "%s", trigger);
    if (s->ready)
        log_info("not ready any more: draining (%s)", trigger);
    s->ready = false;
}

void sidecar_want_drain(struct sidecar *s, const char *trigger, long budget_ms)
{
    struct kubeapi_target t = {s->root, NULL, NULL, s->plan.namespace_, s->plan.pod_name};
    struct errbuf err;
    long now_ms = monotime_ms();
    if (s->drain_wanted || sidecar_drained(s))
        return;
    reset_drain(s, trigger, budget_ms, now_ms);
    for (const char *const *e = s->envp; *e; e++) {
        if (strncmp(*e, "KUBERNETES_SERVICE_HOST=", 24) == 0)
            t.host = *e + 24;
        else if (strncmp(*e, "KUBERNETES_SERVICE_PORT=", 24) == 0)
            t.port = *e + 24;
    }
    if (kubeapi_reason_start(&s->api, &t, now_ms, &err) < 0) {
        log_info("the reason this pod ends is unknown: %s", err.msg);
        snprintf(s->disruption, sizeof(s->disruption), "reason unknown");
        return;
    }
    s->reason_pending = true;
    watch(s, s->api.fd, TAG_API);
}

bool sidecar_drain_done(const struct sidecar *s)
{
    return s->drain.state == DRAIN_DONE && s->drain_reported;
}

bool sidecar_drained(const struct sidecar *s)
{
    return sidecar_drain_done(s) && s->drain.outcome != DRAIN_FAILED;
}

static void on_api(struct sidecar *s, long now_ms)
{
    int fd = s->api.fd;
    if (!s->reason_pending || !kubeapi_reason_read(&s->api, now_ms))
        return;
    unwatch(s, fd);
    s->reason_pending = false;
    snprintf(s->disruption, sizeof(s->disruption), "%s", s->api.line);
    log_info("the reason this pod ends: %s", s->disruption);
}

static void on_signals(struct sidecar *s)
{
    struct signalfd_siginfo si;
    while (read(s->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        long budget = sidecar_drain_budget_cap_ms(s);
        if (si.ssi_signo != SIGTERM && si.ssi_signo != SIGINT)
            continue;
        if (s->terminating) {
            log_info("signal %u again: already stopping", si.ssi_signo);
            continue;
        }
        log_info("%s: draining if nobody has, then waiting for Ray's processes (up to %.1f s)",
                 si.ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT", (double)budget / 1000.0);
        s->terminating = true;
        s->exit_at_ms = monotime_ms() + budget;
        sidecar_want_drain(s, "SIGTERM", budget);
    }
}

/* After SIGTERM: done when the drain is and no Ray process is left (or at the deadline). */
static bool may_exit(struct sidecar *s, long now_ms, long *wake_ms)
{
    int left;
    if (now_ms >= s->exit_at_ms) {
        log_warn("the grace period is nearly over; leaving");
        return true;
    }
    if (!sidecar_drain_done(s))
        return false;
    left = raypids_count();
    if (left == 0)
        return true;
    earliest(wake_ms, now_ms + SIDECAR_EXIT_POLL_MS);
    return false;
}

static void dispatch(struct sidecar *s, const struct epoll_event *ev, long now_ms)
{
    struct prober_reply reply;
    struct errbuf err;
    enum prober_status st;
    switch (ev->data.u32) {
    case TAG_SIGNAL:
        on_signals(s);
        break;
    case TAG_PROBER:
        st = prober_receive(&s->prober, &reply, &err);
        if (st == PROBER_DIED) {
            on_reply(s, NULL, now_ms);
            restart_prober(s, err.msg);
        } else if (st != PROBER_PENDING) {
            on_reply(s, &reply, now_ms);
        }
        break;
    case TAG_HTTP:
        http_run(s->http);
        break;
    case TAG_HTTP_DRAIN:
        http_run(s->http_drain);
        break;
    case TAG_API:
        on_api(s, now_ms);
        break;
    }
}

static void check_timeouts(struct sidecar *s, long now_ms)
{
    if (s->in_flight != USE_NONE && now_ms >= s->prober_deadline_ms) {
        on_reply(s, NULL, now_ms);
        restart_prober(s, "the prober did not answer in time");
    }
    if (s->reason_pending && now_ms >= s->api.deadline_ms)
        on_api(s, now_ms);
    http_run(s->http);
    http_run(s->http_drain);
}

int sidecar_loop(struct sidecar *s)
{
    struct epoll_event events[8];
    if (watch(s, s->sigfd, TAG_SIGNAL) < 0 || watch(s, s->prober.fd, TAG_PROBER) < 0 ||
        watch(s, http_fd(s->http), TAG_HTTP) < 0 || watch(s, http_fd(s->http_drain), TAG_HTTP_DRAIN) < 0) {
        log_error("epoll_ctl: %s", strerror(errno));
        return -1;
    }
    for (;;) {
        long now_ms = monotime_ms(), wake_ms = now_ms + SIDECAR_IDLE_WAKE_MS, http_ms;
        int n;
        if (s->in_flight == USE_NONE && s->prober.pid > 0)
            next_request(s, now_ms, &wake_ms);
        if (s->drain.state == DRAIN_DONE && !s->drain_reported)
            report_drain(s, now_ms);
        if (s->terminating && may_exit(s, now_ms, &wake_ms))
            return 0;
        if (s->in_flight != USE_NONE)
            earliest(&wake_ms, s->prober_deadline_ms);
        if (s->reason_pending)
            earliest(&wake_ms, s->api.deadline_ms);
        if (s->terminating)
            earliest(&wake_ms, s->exit_at_ms);
        if ((http_ms = http_timeout_ms(s->http)) >= 0)
            earliest(&wake_ms, now_ms + http_ms);
        if ((http_ms = http_timeout_ms(s->http_drain)) >= 0)
            earliest(&wake_ms, now_ms + http_ms);
        n = epoll_wait(s->epfd, events, 8, (int)(wake_ms > now_ms ? wake_ms - now_ms : 0));
        if (n < 0 && errno != EINTR) {
            log_error("epoll_wait: %s", strerror(errno));
            return -1;
        }
        now_ms = monotime_ms();
        for (int i = 0; i < n; i++)
            dispatch(s, &events[i], now_ms);
        check_timeouts(s, now_ms);
    }
}
