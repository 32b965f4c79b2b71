/* The client half of the drain: one POST to the sidecar's drain port on 127.0.0.1 with libcurl,
 * connection refusals retried briefly (a sidecar that is restarting), the sidecar's JSON answer
 * printed as it came. What a drain does is the sidecar's (draining.c). */
#include "drainclient.h"

#include <stdio.h>
#include <stdlib.h>

#include "exitcode.h"
#include "httpc.h"
#include "log.h"
#include "monotime.h"
#include "route.h"
#include "wait.h"

/* The sidecar answers in a few hundred bytes of JSON. */
#define DRAINCLIENT_ANSWER_MAX_BYTES 4096
/* Loopback: a connection is made at once or refused. */
#define DRAINCLIENT_CONNECT_TIMEOUT_MS 1000
/* A refused connection is tried again this often, for this long: a sidecar restarted by its
 * liveness probe listens again within a second or two. */
#define DRAINCLIENT_RETRY_MS 250
#define DRAINCLIENT_RETRY_FOR_MS 5000
/* Past the drain's own deadline, the sidecar still has to look once more and answer. */
#define DRAINCLIENT_SLACK_MS 5000

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

int drainclient_run(int port, long deadline_s)
{
    long give_up_ms = monotime_ms() + DRAINCLIENT_RETRY_FOR_MS;
    char url[96];
    struct httpc_request req = {
        .method = "POST",
        .url = url,
        .protocol = "http",
        .version = HTTPC_HTTP_ANY,
        .body = "",
        .body_len = 0,
        .connect_timeout_ms = DRAINCLIENT_CONNECT_TIMEOUT_MS,
        .timeout_ms = (deadline_s > 0 ? deadline_s : ROUTE_DEADLINE_MAX_S) * 1000L + DRAINCLIENT_SLACK_MS,
        .max_reply_bytes = DRAINCLIENT_ANSWER_MAX_BYTES,
        .user_agent = "rayboot-sidecar drain",
    };
    struct httpc_reply reply;
    struct httpc http;
    struct errbuf err;
    int rc, code;

    if (deadline_s > 0)
        snprintf(url, sizeof(url), "http://127.0.0.1:%d/drain?deadline=%ld", port, deadline_s);
    else
        snprintf(url, sizeof(url), "http://127.0.0.1:%d/drain", port);
    if (httpc_init(&http, false, &err) < 0) {
        log_error("%s", err.msg);
        return EXIT_SOFTWARE;
    }
    while ((rc = httpc_request(&http, &req, &reply, &err)) == HTTPC_REFUSED && monotime_ms() < give_up_ms)
        wait_sleep(DRAINCLIENT_RETRY_MS, NULL);
    code = outcome(rc, &reply, &err, port);
    if (rc == 0)
        httpc_reply_free(&reply);
    httpc_free(&http);
    return code;
}
