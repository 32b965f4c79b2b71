/* The sidecar's event loop: one epoll over signals, the prober's socket, the HTTP servers and the
 * API reader. It decides what the prober does next (its Ray version, the drain, then readiness),
 * hands each reply to its owner (draining.c, readiness.c), replaces a prober that died or hung,
 * and, after SIGTERM, leaves once the drain is done and Ray's processes are gone. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "loop.h"

#include "draining.h"
#include "endpoints.h"
#include "guard.h"
#include "http.h"
#include "log.h"
#include "monotime.h"
#include "raypids.h"
#include "readiness.h"
#include "sidecar.h"
#include "wait.h"

/* DNS for the head at most once a second, the rule rayboot's own waits keep. */
#define SIDECAR_RESOLVE_INTERVAL_MS 1000
/* A GCS that did not say its Ray version is asked again this much later: it may not have been up
 * yet (the sidecar starts with the pod), and one small RPC this seldom costs nothing. */
#define SIDECAR_VERSION_RETRY_MS 10000
/* After SIGTERM, how often to look whether Ray's processes are gone. */
#define SIDECAR_EXIT_POLL_MS 250
/* The drain port held by another process is tried again this often: a squatter that leaves gives
 * the preStop its sidecar back within seconds, and a bind now and then costs nothing. */
#define SIDECAR_DRAIN_PORT_RETRY_MS 2000
/* Nothing to do for this long: wake anyway (and run the HTTP server's timers). */
#define SIDECAR_IDLE_WAKE_MS 1000

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

/* What the prober does next, when it is free: its Ray version for a new address, then the drain's
 * needs, then readiness. */
static void next_request(struct sidecar *s, long now_ms, long *wake_ms)
{
    struct prober_request req;
    long at_ms = -1;
    if (s->gcs_addr[0] && strcmp(s->version_addr, s->gcs_addr) != 0 && now_ms >= s->version_retry_ms) {
        send_version(s, now_ms); /* first: every node lookup after it speaks that version */
        return;
    }
    switch (sidecar_drain_next(s, now_ms, &req, &at_ms)) {
    case SIDECAR_DRAIN_ASK:
        send_request(s, &req, USE_DRAIN, now_ms);
        return;
    case SIDECAR_DRAIN_RESOLVE:
        send_resolve(s, now_ms);
        return;
    case SIDECAR_DRAIN_BUSY:
        if (at_ms >= 0)
            earliest(wake_ms, at_ms);
        return;
    case SIDECAR_DRAIN_IDLE:
        break;
    }
    if (s->drain_wanted || sidecar_drained(s))
        return; /* readiness is over while a drain runs and once the node is going */
    if (now_ms < s->next_ready_ms) {
        earliest(wake_ms, s->next_ready_ms);
    } else if (s->gcs_addr[0]) {
        req = sidecar_ready_request(s, now_ms);
        send_request(s, &req, USE_READY, now_ms);
    } else if (now_ms - s->resolved_ms >= SIDECAR_RESOLVE_INTERVAL_MS) {
        send_resolve(s, now_ms);
    } else {
        earliest(wake_ms, s->resolved_ms + SIDECAR_RESOLVE_INTERVAL_MS);
    }
}

static void on_reply(struct sidecar *s, const struct prober_reply *reply, long now_ms)
{
    enum sidecar_prober_use use = s->in_flight;
    s->in_flight = USE_NONE;
    switch (use) {
    case USE_RESOLVE:
        sidecar_resolve_reply(s, reply);
        break;
    case USE_READY:
        sidecar_ready_reply(s, reply, now_ms);
        break;
    case USE_DRAIN:
        sidecar_drain_reply(s, reply, now_ms);
        break;
    case USE_VERSION:
        if (reply && reply->status == PROBER_OK) {
            snprintf(s->version_addr, sizeof(s->version_addr), "%s", s->gcs_addr);
            wait_report_ray_version(s->gcs_addr, PROBER_OK, reply);
        } else {
            s->version_retry_ms = now_ms + SIDECAR_VERSION_RETRY_MS;
            if (reply && reply->status == PROBER_UNAUTHENTICATED) {
                sidecar_note_token_refused(s, reply); /* the token is what is wrong, not the version */
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

/* The read of this Pod has answered (or run out of time): guard.c acts on it. */
static void on_api(struct sidecar *s, long now_ms)
{
    int fd = s->api.fd;
    if (s->api_use == API_NONE || !kubeapi_reason_read(&s->api, now_ms))
        return;
    if (s->api_watched)
        unwatch(s, fd);
    s->api_watched = false;
    guard_read_done(s, now_ms);
}

/* A read started since the last turn (guard.c) is watched. */
static void watch_api(struct sidecar *s)
{
    if (s->api_use == API_NONE || s->api_watched || s->api.fd < 0)
        return;
    if (watch(s, s->api.fd, TAG_API) == 0)
        s->api_watched = true;
}

/* The drain port, when another process held it: tried again every SIDECAR_DRAIN_PORT_RETRY_MS. */
static void retry_drain_port(struct sidecar *s, long now_ms, long *wake_ms)
{
    struct errbuf err;
    if (s->http_drain)
        return;
    if (now_ms < s->drain_port_retry_ms) {
        earliest(wake_ms, s->drain_port_retry_ms);
        return;
    }
    if (sidecar_listen_drain(s, now_ms, &err) == 0 && s->http_drain) {
        log_info("listening on the drain port %s:%d now: the process that held it has let it go", SIDECAR_DRAIN_ADDRESS,
                 s->drain_port);
        watch(s, http_fd(s->http_drain), TAG_HTTP_DRAIN);
    }
    earliest(wake_ms, s->drain_port_retry_ms);
}

int sidecar_listen_drain(struct sidecar *s, long now_ms, struct errbuf *err)
{
    bool in_use = false;
    s->http_drain = http_start(SIDECAR_DRAIN_ADDRESS, s->drain_port, endpoints_drain, s, &in_use, err);
    if (s->http_drain) {
        s->drain_port = http_bound_port(s->http_drain);
        return 0;
    }
    errbuf_prefix(err, "RAYBOOT_SIDECAR_DRAIN_PORT");
    if (!in_use)
        return -1;
    s->drain_port_retry_ms = now_ms + SIDECAR_DRAIN_PORT_RETRY_MS;
    return 0;
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
        sidecar_want_drain(s, "SIGTERM");
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
        if (s->http_drain)
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
    if (s->api_use != API_NONE && now_ms >= s->api.deadline_ms)
        on_api(s, now_ms);
    http_run(s->http);
    if (s->http_drain)
        http_run(s->http_drain);
}

int sidecar_loop(struct sidecar *s)
{
    struct epoll_event events[8];
    if (watch(s, s->sigfd, TAG_SIGNAL) < 0 || watch(s, s->prober.fd, TAG_PROBER) < 0 ||
        watch(s, http_fd(s->http), TAG_HTTP) < 0 ||
        (s->http_drain && watch(s, http_fd(s->http_drain), TAG_HTTP_DRAIN) < 0)) {
        log_error("epoll_ctl: %s", strerror(errno));
        return -1;
    }
    for (;;) {
        long now_ms = monotime_ms(), wake_ms = now_ms + SIDECAR_IDLE_WAKE_MS, http_ms;
        int n;
        guard_step(s, now_ms, &wake_ms);
        watch_api(s);
        retry_drain_port(s, now_ms, &wake_ms);
        if (s->in_flight == USE_NONE && s->prober.pid > 0)
            next_request(s, now_ms, &wake_ms);
        if (s->drain.state == DRAIN_DONE && !s->drain_reported)
            sidecar_drain_report(s, now_ms);
        sidecar_drain_forget_stale(s, now_ms);
        if (s->terminating && may_exit(s, now_ms, &wake_ms))
            return 0;
        if (s->in_flight != USE_NONE)
            earliest(&wake_ms, s->prober_deadline_ms);
        if (s->api_use != API_NONE)
            earliest(&wake_ms, s->api.deadline_ms);
        if (s->terminating)
            earliest(&wake_ms, s->exit_at_ms);
        if ((http_ms = http_timeout_ms(s->http)) >= 0)
            earliest(&wake_ms, now_ms + http_ms);
        if (s->http_drain && (http_ms = http_timeout_ms(s->http_drain)) >= 0)
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
