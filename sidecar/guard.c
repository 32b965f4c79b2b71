/* The drain's guard. The preStop hook that asks for a drain runs in the Ray container as the same
 * UID as the user's code, so the drain port cannot tell it from any other process of the pod: what
 * decides is the pod itself. A /drain is answered by a read of this Pod (kubeapi.c), made after the
 * ask, and drains only when the Pod is going (podreason_going); any other answer refuses it, and
 * an unreadable Pod refuses it too. Without API access (no KUBERNETES_SERVICE_HOST or token at
 * start, or the API server refusing the token or the read) there is no guard: every ask drains, as
 * before, and the log says so. SIGTERM drains whatever the Pod says. What a drain does is
 * draining.c's; when the loop calls in, loop.c's. */
#include "guard.h"

#include <stdio.h>
#include <string.h>

#include "draining.h"
#include "http.h"
#include "log.h"
#include "monotime.h"
#include "text.h"

static void read_target(const struct sidecar *s, struct kubeapi_target *t)
{
    *t = (struct kubeapi_target){s->root, NULL, NULL, s->plan.namespace_, s->plan.pod_name};
    for (const char *const *e = s->envp; *e; e++) {
        if (strncmp(*e, "KUBERNETES_SERVICE_HOST=", 24) == 0)
            t->host = *e + 24;
        else if (strncmp(*e, "KUBERNETES_SERVICE_PORT=", 24) == 0)
            t->port = *e + 24;
    }
}

static int start_read(struct sidecar *s, enum sidecar_api_use use, long now_ms, struct errbuf *err)
{
    struct kubeapi_target t;
    read_target(s, &t);
    if (kubeapi_reason_start(&s->api, &t, now_ms, err) < 0)
        return -1;
    s->api_use = use;
    s->api_watched = false;
    return 0;
}

static void go_unguarded(struct sidecar *s, const char *why)
{
    if (!s->guarded)
        return;
    s->guarded = false;
    log_warn("no guard on the drain port: %s; any process of this pod can drain this node through %s:%d (give the "
             "sidecar a service-account token with get on pods: k8s/rbac/sidecar.yaml)",
             why, SIDECAR_DRAIN_ADDRESS, s->drain_port);
}

void guard_start(struct sidecar *s, long now_ms)
{
    struct kubeapi_target t;
    struct errbuf err;
    read_target(s, &t);
    s->guarded = true;
    if (kubeapi_access(&t, &err) < 0) {
        go_unguarded(s, err.msg);
        return;
    }
    if (start_read(s, API_STARTUP, now_ms, &err) < 0)
        log_warn("could not read this Pod at start (%s): a /drain is refused while it cannot be read", err.msg);
}

void guard_ask(struct sidecar *s, long now_ms)
{
    if (!s->guarded) {
        sidecar_want_drain(s, "preStop");
        return;
    }
    if (!s->ask_pending)
        s->ask_ms = now_ms;
    s->ask_pending = true;
}

/* A read for asks answered: the pod is going (or there is no guard after all), so they drain. */
static void drain_for_asks(struct sidecar *s)
{
    s->refusal[0] = '\0';
    if (s->drain_wanted || sidecar_drained(s))
        return;
    sidecar_drain_reset(s, "preStop", s->read_ask_ms); /* its budget counts from the first ask */
    snprintf(s->disruption, sizeof(s->disruption), "%s", s->api.line);
    log_info("the reason this pod ends: %s", s->disruption);
}

/* Not going, or not known to be: refused. Callers that asked while the read ran wait for the next
 * read (it may see a deletion this one began too early to see); the others are told. */
static void refuse_asks(struct sidecar *s)
{
    if (s->api.verdict == KUBEAPI_STAYING)
        snprintf(s->refusal, sizeof(s->refusal),
                 "this pod is not being deleted (its Pod has no metadata.deletionTimestamp and no DisruptionTarget "
                 "condition): nothing drained");
    else
        snprintf(s->refusal, sizeof(s->refusal),
                 "whether this pod is being deleted could not be read (%.400s): nothing drained", s->api.line);
    s->asks_refused++;
    log_warn("a drain asked on %s:%d is refused: %s", SIDECAR_DRAIN_ADDRESS, s->drain_port, s->refusal);
    if (!s->ask_pending && s->http_drain)
        http_resume_waiters(s->http_drain);
}

static void startup_read_done(struct sidecar *s)
{
    if (!s->guarded)
        return;
    if (s->api.verdict == KUBEAPI_UNREAD)
        log_warn("could not read this Pod from the API server at start (%s): a /drain is refused while it cannot be "
                 "read (SIGTERM drains regardless)",
                 s->api.line);
    else
        log_info("a /drain on %s:%d drains only while this pod is going: its Pod is read from the API server at each "
                 "ask (now: %s)",
                 SIDECAR_DRAIN_ADDRESS, s->drain_port,
                 s->api.verdict == KUBEAPI_GOING ? s->api.line : "not being deleted");
}

void guard_read_done(struct sidecar *s, long now_ms)
{
    enum sidecar_api_use use = s->api_use;
    (void)now_ms;
    s->api_use = API_NONE;
    if (s->api.verdict == KUBEAPI_DENIED)
        go_unguarded(s, s->api.line);
    switch (use) {
    case API_STARTUP:
        startup_read_done(s);
        break;
    case API_DELETION:
        if (!s->guarded || s->api.verdict == KUBEAPI_GOING)
            drain_for_asks(s);
        else
            refuse_asks(s);
        break;
    case API_REASON:
        s->reason_pending = false;
        snprintf(s->disruption, sizeof(s->disruption), "%s", s->api.line);
        log_info("the reason this pod ends: %s", s->disruption);
        break;
    case API_NONE:
        break;
    }
}

void guard_step(struct sidecar *s, long now_ms, long *wake_ms)
{
    struct errbuf err;
    if (!s->ask_pending || s->api_use != API_NONE)
        return; /* nothing asked, or a read runs: it is waited for */
    if (s->drain_wanted || sidecar_drained(s)) {
        s->ask_pending = false; /* those callers get that drain's result */
        return;
    }
    if (!s->guarded) {
        s->ask_pending = false;
        sidecar_want_drain(s, "preStop");
        return;
    }
    if (now_ms < s->next_read_ms) {
        if (s->next_read_ms < *wake_ms)
            *wake_ms = s->next_read_ms;
        return;
    }
    s->ask_pending = false;
    s->read_ask_ms = s->ask_ms;
    s->next_read_ms = now_ms + GUARD_READ_SPACING_MS;
    if (start_read(s, API_DELETION, now_ms, &err) < 0) {
        s->api.verdict = KUBEAPI_UNREAD;
        text_copy(s->api.line, sizeof(s->api.line), err.msg, strlen(err.msg));
        s->api_use = API_DELETION;
        guard_read_done(s, now_ms);
    }
}

void sidecar_want_drain(struct sidecar *s, const char *trigger)
{
    struct errbuf err;
    long now_ms = monotime_ms();
    if (s->drain_wanted || sidecar_drained(s))
        return;
    sidecar_drain_reset(s, trigger, now_ms);
    s->refusal[0] = '\0';
    if (s->api_use != API_NONE) {
        s->api_use = API_REASON; /* the read under way gives the reason */
        s->reason_pending = true;
        return;
    }
    if (start_read(s, API_REASON, now_ms, &err) < 0) {
        log_info("the reason this pod ends is unknown: %s", err.msg);
        snprintf(s->disruption, sizeof(s->disruption), "reason unknown");
        return;
    }
    s->reason_pending = true;
}
