/* The client half of the drain: one POST to the sidecar's drain port on 127.0.0.1 with libcurl,
 * connection refusals retried briefly (a sidecar that is restarting), the sidecar's JSON answer
 * printed as it came. What a drain does is the sidecar's (draining.c). */
#include "drainclient.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exitcode.h"
#include "httpc.h"
#include "log.h"
#include "monotime.h"
#include "number.h"
#include "wait.h"

/* The sidecar answers in a few hundred bytes of JSON. */
#define DRAINCLIENT_ANSWER_MAX_BYTES 4096
/* Loopback: a connection is made at once or refused. */
#define DRAINCLIENT_CONNECT_TIMEOUT_MS 1000
/* A refused connection is tried again this often, for this long: a sidecar restarted by its
 * liveness probe listens again within a second or two. A 429 (as many callers as the sidecar lets
 * wait are waiting already, any process of the pod can be one) is tried again as often, for as
 * long as the client waits at all: the drain they wait for ends by its deadline, and this request
 * then gets its result at once. */
#define DRAINCLIENT_RETRY_MS 250
#define DRAINCLIENT_RETRY_FOR_MS 5000
/* The longest the client waits: the sidecar answers at its drain's deadline (its grace period less
 * 3 s), and the kubelet ends the hook at the grace period anyway. */
#define DRAINCLIENT_WAIT_MAX_MS 3605000L
/* --deadline=SECONDS, kept for older manifests: the range it always had. */
#define DRAINCLIENT_DEADLINE_MAX_S 3600

int drainclient_deadline_check(const char *text, struct errbuf *err)
{
    long v;
    if (number_parse(text, strlen(text), 1, DRAINCLIENT_DEADLINE_MAX_S, &v) < 0)
        return errbuf_set(err, "--deadline=%.40s: expected whole seconds from 1 to %d", text,
                          DRAINCLIENT_DEADLINE_MAX_S);
    return 0;
}

static int outcome(int rc, const struct httpc_reply *reply, const struct errbuf *err, int port)
{
    if (rc < 0) {
        log_error("no answer from the sidecar on 127.0.0.1:%d (RAYBOOT_SIDECAR_DRAIN_PORT): %s", port,
                  rc == HTTPC_TOO_LARGE ? "the answer is too large" : err->msg);
        return DRAINCLIENT_EXIT_NO_SIDECAR;
    }
    fputs(reply->body.buf, stdout);
    if (reply->status == 200)
        return EXIT_OK;
    if (reply->status == 503) {
        log_error("the sidecar could not drain this node (its answer is on stdout)");
        return DRAINCLIENT_EXIT_NOT_DRAINED;
    }
    log_error("the sidecar answered HTTP %ld: %.200s", reply->status, reply->body.buf);
    return EXIT_SOFTWARE;
}

int drainclient_run(int port)
{
    long give_up_ms = monotime_ms() + DRAINCLIENT_RETRY_FOR_MS, wait_until_ms = monotime_ms() + DRAINCLIENT_WAIT_MAX_MS;
    char url[96];
    struct httpc_request req = {
        .method = "POST",
        .url = url,
        .protocol = "http",
        .version = HTTPC_HTTP_ANY,
        .body = "",
        .body_len = 0,
        .connect_timeout_ms = DRAINCLIENT_CONNECT_TIMEOUT_MS,
        .timeout_ms = DRAINCLIENT_WAIT_MAX_MS,
        .max_reply_bytes = DRAINCLIENT_ANSWER_MAX_BYTES,
        .user_agent = "rayboot-sidecar drain",
    };
    struct httpc_reply reply;
    struct httpc http;
    struct errbuf err;
    int rc, code;

    snprintf(url, sizeof(url), "http://127.0.0.1:%d/drain", port);
    if (httpc_init(&http, false, &err) < 0) {
        log_error("%s", err.msg);
        return EXIT_SOFTWARE;
    }
    for (bool busy_said = false;; wait_sleep(DRAINCLIENT_RETRY_MS, NULL)) {
        rc = httpc_request(&http, &req, &reply, &err);
        if (rc == HTTPC_REFUSED && monotime_ms() < give_up_ms)
            continue;
        if (rc != 0 || reply.status != 429 || monotime_ms() >= wait_until_ms)
            break;
        httpc_reply_free(&reply);
        if (!busy_said)
            log_info("the sidecar has as many callers waiting as it lets wait: asking again until it answers");
        busy_said = true;
    }
    code = outcome(rc, &reply, &err, port);
    if (rc == 0)
        httpc_reply_free(&reply);
    httpc_free(&http);
    return code;
}
