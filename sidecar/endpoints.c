/* What each path answers. The HTTP mechanics are http.c's; the drain itself is loop.c's. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "json.h"
#include "route.h"
#include "sidecar.h"

/* A method other than GET or HEAD on a path that takes only those, or on no path at all. */
#define WRONG_METHOD_FMT \
    "%.100s: not found, or not with this method (GET /healthz /readyz /metrics, GET or POST /drain)\n"

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

static void drain_json(const struct sidecar *s, struct http_answer *a)
{
    const struct drain *d = &s->drain;
    cJSON *o = cJSON_CreateObject();
    char *text;
    bool left = d->state == DRAIN_DONE && d->outcome == DRAIN_LEFT;
    cJSON_AddBoolToObject(o, "accepted", s->drain_accepted);
    if (s->node_id[0])
        json_add_text(o, "node_id", s->node_id);
    else
        cJSON_AddNullToObject(o, "node_id");
    json_add_text(o, "outcome", drain_outcome_name(d->outcome));
    if (left)
        cJSON_AddNumberToObject(o, "drained_in_ms", (double)(d->finished_ms - d->started_ms));
    else
        cJSON_AddNullToObject(o, "drained_in_ms");
    json_add_text(o, "reason", s->disruption);
    json_add_text(o, "trigger", s->drain_trigger);
    if (d->outcome != DRAIN_LEFT && d->detail[0])
        json_add_text(o, "detail", d->detail);
    text = cJSON_PrintUnformatted(o);
    a->status = s->drain_accepted ? 200 : 503;
    a->content_type = "application/json";
    snprintf(a->body, sizeof(a->body), "%s\n", text ? text : "{}");
    cJSON_free(text);
    cJSON_Delete(o);
}

/* deadline_ms: the request's own deadline, or -1 for the grace period's. */
static void drain_endpoint(struct sidecar *s, long deadline_ms, struct http_answer *a, bool *suspend)
{
    long budget_ms = deadline_ms >= 0 ? deadline_ms : s->settings.grace_period_ms - SETTINGS_GRACE_MARGIN_MS;
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
    long deadline_ms = -1;
    *suspend = false;
    s->http_requests++;
    switch (route_request(method, path, deadline_arg, &deadline_ms)) {
    case ROUTE_DRAIN:
        drain_endpoint(s, deadline_ms, a, suspend);
        break;
    case ROUTE_BAD_DEADLINE:
        set(a, 400, "deadline=%.40s: expected whole seconds from 1 to %d\n", deadline_arg, ROUTE_DEADLINE_MAX_S);
        break;
    case ROUTE_DRAIN_METHOD:
        set(a, 405, "%s: use GET or POST\n", path);
        break;
    case ROUTE_HEALTHZ:
        set(a, 200, "ok\n");
        break;
    case ROUTE_READYZ:
        if (!s->ready_checked)
            set(a, 503, "not ready: not looked yet\n");
        else
            set(a, s->ready ? 200 : 503, "%s: %.1500s\n", s->ready ? "ready" : "not ready", s->ready_reason);
        break;
    case ROUTE_METRICS:
        a->status = 200;
        a->content_type = "text/plain; version=0.0.4; charset=utf-8";
        metrics_render(s, a->body, sizeof(a->body));
        break;
    case ROUTE_WRONG_METHOD:
        set(a, 405, WRONG_METHOD_FMT, path);
        break;
    case ROUTE_NOT_FOUND_OTHER:
        set(a, 404, WRONG_METHOD_FMT, path);
        break;
    case ROUTE_NOT_FOUND:
        set(a, 404, "%.100s: not found (GET /healthz /readyz /metrics, GET or POST /drain)\n", path);
        break;
    }
}
