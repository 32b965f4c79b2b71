/* What each path answers, on each of the sidecar's ports. The HTTP mechanics are http.c's; the
 * drain itself is draining.c's. */
#include "endpoints.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "drainclient.h"
#include "draining.h"
#include "drainproof.h"
#include "guard.h"
#include "json.h"
#include "metrics.h"
#include "route.h"
#include "sidecar.h"
#include "monotime.h"
#include "version.h"

/* A method other than GET or HEAD on a path that takes only those, or on no path at all. */
#define WRONG_METHOD_FMT "%.100s: not found, or not with this method (GET /healthz /readyz /metrics)\n"

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

/* A refused ask (guard.c): 409, as JSON like a drain's answer. */
static void refusal_json(const struct sidecar *s, struct http_answer *a)
{
    cJSON *o = cJSON_CreateObject();
    char *text;
    cJSON_AddBoolToObject(o, "accepted", false);
    cJSON_AddNullToObject(o, "node_id");
    json_add_text(o, "outcome", "refused");
    cJSON_AddNullToObject(o, "drained_in_ms");
    json_add_text(o, "trigger", "preStop");
    json_add_text(o, "detail", s->refusal);
    text = cJSON_PrintUnformatted(o);
    a->status = 409;
    a->content_type = "application/json";
    snprintf(a->body, sizeof(a->body), "%s\n", text ? text : "{}");
    cJSON_free(text);
    cJSON_Delete(o);
}

/* A request resumed after its drain gets that drain's result, or after its ask was refused (the
 * pod is not going: guard.c) the refusal; a new one waits for the drain running, or gets the
 * result of one the GCS accepted, or asks for one (again, after one that failed or one the sidecar
 * forgot: draining.c), which the guard may refuse. Its deadline is the sidecar's, whatever the
 * caller asks. */
static void drain_endpoint(struct sidecar *s, const struct http_request *req, struct http_answer *a, bool *suspend)
{
    if (req->resumed && !s->drain_wanted && s->refusal[0]) { /* refused since it asked (an older drain aside) */
        refusal_json(s, a);
        return;
    }
    if (req->resumed && !sidecar_drain_done(s)) {
        set(a, 503, "the sidecar is stopping before the drain finished\n");
        return;
    }
    if (req->resumed || sidecar_drained(s)) {
        drain_json(s, a);
        return;
    }
    if (req->ray_start && (strcmp(req->ray_start, DRAINCLIENT_RAY_START_RAYBOOT) == 0 ||
                           strcmp(req->ray_start, DRAINCLIENT_RAY_START_BLOCKING) == 0))
        s->ray_start_stops_on_sigterm = true;
    if (!s->drain_wanted)
        guard_ask(s, monotime_ms());
    *suspend = true;
}

/* GET /hello on the drain port: who listens there, the longest a drain asked now may take, so that
 * the client waits no longer (a process holding the port in the sidecar's place would keep it
 * waiting for the whole grace period otherwise), and how long such a drain would be held for a
 * node that has just joined (the client may see its `ray start` past that sooner). Proven like
 * every answer of this port. */
static void hello(const struct sidecar *s, struct http_answer *a)
{
    a->status = 200;
    a->content_type = "application/json";
    snprintf(a->body, sizeof(a->body),
             "{\"sidecar\":\"rayboot-sidecar\",\"version\":\"%s\",\"drain_wait_ms\":%ld,\"join_hold_ms\":%ld}\n",
             RAYBOOT_VERSION, sidecar_drain_budget_cap_ms(s) + GUARD_ASK_WAIT_MS,
             sidecar_join_hold_ms(s, monotime_ms()));
}

static void readyz(const struct sidecar *s, struct http_answer *a)
{
    if (s->drain_wanted)
        set(a, 503, "not ready: draining (%s), for %.1f s\n", s->drain_trigger,
            (double)(monotime_ms() - s->drain_wanted_ms) / 1000.0);
    else if (sidecar_drained(s))
        set(a, 503, "not ready: drained (%s on %s)\n", drain_outcome_name(s->drain.outcome), s->drain_trigger);
    else if (!s->ready_checked)
        set(a, 503, "not ready: not looked yet\n");
    else
        set(a, s->ready ? 200 : 503, "%s: %.1500s\n", s->ready ? "ready" : "not ready", s->ready_reason);
}

static void answer(struct sidecar *s, enum route_port port, const struct http_request *req, struct http_answer *a,
                   bool *suspend)
{
    *suspend = false;
    if (!req->resumed)
        s->http_requests++;
    switch (route_request(port, req->method, req->path)) {
    case ROUTE_DRAIN:
        drain_endpoint(s, req, a, suspend);
        break;
    case ROUTE_DRAIN_METHOD:
        set(a, 405, "%s: use POST (rayboot-sidecar drain)\n", req->path);
        break;
    case ROUTE_HELLO:
        hello(s, a);
        break;
    case ROUTE_DRAIN_ELSEWHERE:
        s->drain_refused++;
        set(a, 403,
            "/drain is not served on this port: only processes in this pod drain it, on %s:%d "
            "(`rayboot-sidecar drain`, the preStop hook)\n",
            SIDECAR_DRAIN_ADDRESS, s->drain_port);
        break;
    case ROUTE_HEALTHZ:
        set(a, 200, "ok\n");
        break;
    case ROUTE_READYZ:
        readyz(s, a);
        break;
    case ROUTE_METRICS:
        a->status = 200;
        a->content_type = "text/plain; version=0.0.4; charset=utf-8";
        metrics_render(s, a->body, sizeof(a->body));
        break;
    case ROUTE_WRONG_METHOD:
        set(a, 405, WRONG_METHOD_FMT, req->path);
        break;
    case ROUTE_NOT_FOUND_OTHER:
        set(a, 404, port == ROUTE_PORT_DRAIN ? "%.100s: not found (POST /drain)\n" : WRONG_METHOD_FMT, req->path);
        break;
    case ROUTE_NOT_FOUND:
        set(a, 404,
            port == ROUTE_PORT_DRAIN ? "%.100s: not found (POST /drain)\n"
                                     : "%.100s: not found (GET /healthz /readyz /metrics)\n",
            req->path);
        break;
    }
}

void endpoints_probes(void *ctx, const struct http_request *req, struct http_answer *a, bool *suspend)
{
    answer(ctx, ROUTE_PORT_PROBES, req, a, suspend);
}

/* Every answer of the drain port carries the proof (drainproof.h) when the client sent a nonce and
 * the sidecar has Ray's token. */
void endpoints_drain(void *ctx, const struct http_request *req, struct http_answer *a, bool *suspend)
{
    struct sidecar *s = ctx;
    answer(s, ROUTE_PORT_DRAIN, req, a, suspend);
    if (!*suspend && s->proof_keyed && drainproof_nonce_valid(req->nonce))
        drainproof_tag(&s->proof_key, req->nonce, req->path, a->status, a->body, strlen(a->body), a->proof);
}
