/* The client half of the drain: one POST to the sidecar's drain port on 127.0.0.1 with libcurl,
 * connection refusals retried briefly (a sidecar that is restarting), the sidecar's JSON answer
 * printed as it came. What a drain does is the sidecar's (loop.c). */
#include "drainclient.h"

#include <stdio.h>
#include <stdlib.h>

#include <curl/curl.h>

#include "curlbody.h"
#include "exitcode.h"
#include "log.h"
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

static CURLcode post_once(CURL *curl, struct curl_body *body, long *status)
{
    CURLcode rc;
    free(body->buf);
    body->buf = NULL;
    body->len = 0;
    body->too_big = false;
    rc = curl_easy_perform(curl);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, status);
    return rc;
}

static int outcome(long status, const struct curl_body *body, CURLcode rc, int port)
{
    if (rc != CURLE_OK) {
        log_error("no answer from the sidecar on 127.0.0.1:%d (RAYBOOT_SIDECAR_DRAIN_PORT): %s", port,
                  body->too_big ? "the answer is too large" : curl_easy_strerror(rc));
        return DRAINCLIENT_EXIT_NO_SIDECAR;
    }
    if (body->buf)
        fputs(body->buf, stdout);
    if (status == 200)
        return EXIT_OK;
    if (status == 503) {
        log_error("the sidecar could not drain this node (its answer is on stdout)");
        return DRAINCLIENT_EXIT_NOT_DRAINED;
    }
    log_error("the sidecar answered HTTP %ld: %.200s", status, body->buf ? body->buf : "");
    return EXIT_SOFTWARE;
}

int drainclient_run(int port, long deadline_s)
{
    struct curl_body body = {NULL, 0, DRAINCLIENT_ANSWER_MAX_BYTES, false};
    long wait_ms = (deadline_s > 0 ? deadline_s : ROUTE_DEADLINE_MAX_S) * 1000L + DRAINCLIENT_SLACK_MS;
    long status = 0, give_up_ms = wait_now_ms() + DRAINCLIENT_RETRY_FOR_MS;
    char url[96];
    CURLcode rc;
    CURL *curl;
    int code;

    if (deadline_s > 0)
        snprintf(url, sizeof(url), "http://127.0.0.1:%d/drain?deadline=%ld", port, deadline_s);
    else
        snprintf(url, sizeof(url), "http://127.0.0.1:%d/drain", port);
    if (curl_global_init(CURL_GLOBAL_NOTHING) != CURLE_OK || !(curl = curl_easy_init())) {
        log_error("cannot set up libcurl");
        return EXIT_SOFTWARE;
    }
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http");
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, "");
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, 0L);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, (long)DRAINCLIENT_CONNECT_TIMEOUT_MS);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, wait_ms);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, curl_body_write);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "rayboot-sidecar drain");
    while ((rc = post_once(curl, &body, &status)) == CURLE_COULDNT_CONNECT && wait_now_ms() < give_up_ms)
        wait_sleep(DRAINCLIENT_RETRY_MS, -1);
    code = outcome(status, &body, rc, port);
    free(body.buf);
    curl_easy_cleanup(curl);
    curl_global_cleanup();
    return code;
}
