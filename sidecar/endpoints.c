/* What each path answers. The HTTP mechanics are http.c's; the drain itself is loop.c's. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "sidecar.h"

/* A preStop hook's deadline in whole seconds; an hour is far past any grace period. */
#define DRAIN_DEADLINE_MAX_S 3600

static void set(struct http_answer *a, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void set(struct http_answer *a, int status, const char *fmt, ...)
{
    va_list ap;
    a->status = status;
    a->content_type = "text/plain; charset=utf-8";
    va_start(ap, fmt);
    vsnprintf(a->body, sizeof(a->body), fmt, ap);
    va_end(ap);
}

/* deadline=SECONDS: whole seconds, 1..DRAIN_DEADLINE_MAX_S. */
static int parse_deadline(const char *text, long *ms)
{
    char *end;
    long v;
    errno = 0;
    v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < 1 || v > DRAIN_DEADLINE_MAX_S)
        return -1;
    *ms = v * 1000;
    return 0;
}

static void drain_json(const struct sidecar *s, struct http_answer *a)
{
    const struct drain *d = &s->drain;
    cJSON *o = cJSON_CreateObject();
    char *text;
    bool left = d->state == DRAIN_DONE && d->outcome == DRAIN_LEFT;
    cJSON_AddBoolToObject(o, "accepted", s->drain_accepted);
    if (s->node_id[0])
        cJSON_AddStringToObject(o, "node_id", s->node_id);
    else
        cJSON_AddNullToObject(o, "node_id");
    cJSON_AddStringToObject(o, "outcome", drain_outcome_name(d->outcome));
    if (left)
        cJSON_AddNumberToObject(o, "drained_in_ms", (double)(d->finished_ms - d->started_ms));
    else
        cJSON_AddNullToObject(o, "drained_in_ms");
    cJSON_AddStringToObject(o, "reason", s->disruption);
    cJSON_AddStringToObject(o, "trigger", s->drain_trigger);
    if (d->outcome != DRAIN_LEFT && d->detail[0])
        cJSON_AddStringToObject(o, "detail", d->detail);
    text = cJSON_PrintUnformatted(o);
    a->status = s->drain_accepted ? 200 : 503;
    a->content_type = "application/json";
    snprintf(a->body, sizeof(a->body), "%s\n", text ? text : "{}");
    cJSON_free(text);
    cJSON_Delete(o);
}

static void drain_endpoint(struct sidecar *s, const char *deadline_arg, struct http_answer *a, bool *suspend)
{
    long budget_ms = s->settings.grace_period_ms - SETTINGS_GRACE_MARGIN_MS;
    if (deadline_arg && parse_deadline(deadline_arg, &budget_ms) < 0) {
        set(a, 400, "deadline=%.40s: expected whole seconds from 1 to 3600\n", deadline_arg);
        return;
    }
    if (sidecar_drain_done(s)) {
        drain_json(s, a);
        return;
    }
    /* The first caller's deadline holds; later callers wait for the same drain. */
    sidecar_want_drain(s, "preStop", budget_ms);
    *suspend = true;
}

void endpoints_answer(struct sidecar *s, const char *method, const char *path, const char *deadline_arg,
                      struct http_answer *a, bool *suspend)
{
    bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    bool post = strcmp(method, "POST") == 0;
    *suspend = false;
    s->http_requests++;
    if (strcmp(path, "/drain") == 0) {
        if (get || post)
            drain_endpoint(s, deadline_arg, a, suspend);
        else
            set(a, 405, "%s: use GET or POST\n", path);
        return;
    }
    if (!get) {
        set(a, strcmp(path, "/healthz") == 0 || strcmp(path, "/readyz") == 0 || strcmp(path, "/metrics") == 0
                   ? 405 : 404,
            "%.100s: not found, or not with this method (GET /healthz /readyz /metrics, GET or POST /drain)\n",
            path);
    } else if (strcmp(path, "/healthz") == 0) {
        set(a, 200, "ok\n");
    } else if (strcmp(path, "/readyz") == 0) {
        if (!s->ready_checked)
            set(a, 503, "not ready: not looked yet\n");
        else
            set(a, s->ready ? 200 : 503, "%s: %.1500s\n", s->ready ? "ready" : "not ready", s->ready_reason);
    } else if (strcmp(path, "/metrics") == 0) {
        a->status = 200;
        a->content_type = "text/plain; version=0.0.4; charset=utf-8";
        metrics_render(s, a->body, sizeof(a->body));
    } else {
        set(a, 404, "%.100s: not found (GET /healthz /readyz /metrics, GET or POST /drain)\n", path);
    }
}
