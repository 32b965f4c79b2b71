/* One dashboard request per call, bounded in time and size; the JSON is jobsapi.c's, the
 * entrypoint's quoting shellquote.c's. */
#include "jobclient.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "httpc.h"
#include "shellquote.h"

/* A small reply should come at once; the logs may be long. */
#define JOBCLIENT_CALL_TIMEOUT_MS 10000
#define JOBCLIENT_LOGS_TIMEOUT_MS 30000
/* Room for a one-line summary of an error reply (a Python traceback's last line). */
#define JOBCLIENT_SUMMARY_BYTES 512

enum jobclient_result jobclient_version(struct dashboard *d, struct errbuf *err)
{
    struct httpc_reply r;
    long status;
    if (dashboard_call(d, "GET", "/api/version", NULL, JOBSAPI_REPLY_MAX_BYTES, JOBCLIENT_CALL_TIMEOUT_MS, &r, err) < 0)
        return JOBCLIENT_FAILED;
    status = r.status;
    httpc_reply_free(&r);
    if (status == 401 || status == 403) {
        errbuf_set(err,
                   "GET /api/version: HTTP %ld: the dashboard refused %s (Ray token authentication): give this pod "
                   "the cluster's token in RAY_AUTH_TOKEN or RAY_AUTH_TOKEN_PATH",
                   status, d->auth_header[0] ? "this pod's token" : "a request without a token (this pod found none)");
        return JOBCLIENT_UNAUTHORIZED;
    }
    if (status != 200) {
        errbuf_set(err, "GET /api/version: HTTP %ld", status);
        return JOBCLIENT_FAILED;
    }
    return JOBCLIENT_OK;
}

enum jobclient_result jobclient_get(struct dashboard *d, const char *id, struct jobsapi_job *job, struct errbuf *err)
{
    struct httpc_reply r;
    char path[JOBSAPI_ID_MAX_BYTES + 16];
    enum jobclient_result rc = JOBCLIENT_OK;
    snprintf(path, sizeof(path), "/api/jobs/%s", id);
    if (dashboard_call(d, "GET", path, NULL, JOBSAPI_REPLY_MAX_BYTES, JOBCLIENT_CALL_TIMEOUT_MS, &r, err) < 0)
        return JOBCLIENT_FAILED;
    if (r.status == 404)
        rc = JOBCLIENT_NO_SUCH_JOB;
    else if (r.status != 200)
        rc = (errbuf_set(err, "GET %s: HTTP %ld", path, r.status), JOBCLIENT_FAILED);
    else if (jobsapi_parse_job(r.body.buf, r.body.len, job, err) < 0)
        rc = JOBCLIENT_FAILED;
    httpc_reply_free(&r);
    return rc;
}

enum jobclient_result jobclient_submit(struct dashboard *d, char *const *argv, int argc,
                                       const struct jobsapi_submit *req, char id[JOBSAPI_ID_MAX_BYTES],
                                       struct errbuf *err)
{
    struct jobsapi_submit full = *req;
    struct httpc_reply r;
    char *entrypoint = shellquote_join(argv, argc), *body;
    char summary[JOBCLIENT_SUMMARY_BYTES];
    enum jobclient_result rc = JOBCLIENT_OK;
    if (!entrypoint) {
        errbuf_set(err, "the entrypoint is too long (more than %d bytes quoted)", SHELLQUOTE_MAX_BYTES);
        return JOBCLIENT_FAILED;
    }
    full.entrypoint = entrypoint;
    body = jobsapi_submit_body(&full, err);
    free(entrypoint);
    if (!body)
        return JOBCLIENT_FAILED;
    if (dashboard_call(d, "POST", "/api/jobs/", body, JOBSAPI_REPLY_MAX_BYTES, JOBCLIENT_CALL_TIMEOUT_MS, &r, err) <
        0) {
        free(body);
        return JOBCLIENT_FAILED;
    }
    free(body);
    dashboard_reply_summary(&r, summary, sizeof(summary));
    if (r.status == 200) {
        if (jobsapi_parse_submitted(r.body.buf, r.body.len, id, err) < 0)
            rc = JOBCLIENT_FAILED;
    } else if (r.status >= 400 && r.status < 500 && strstr(r.body.buf, "already exists")) {
        rc = JOBCLIENT_EXISTS;
    } else if (r.status >= 400 && r.status < 500) {
        errbuf_set(err, "the dashboard refused the job (HTTP %ld): %s", r.status, summary);
        rc = JOBCLIENT_REFUSED;
    } else {
        errbuf_set(err, "POST /api/jobs/: HTTP %ld: %s", r.status, summary);
        rc = JOBCLIENT_FAILED;
    }
    httpc_reply_free(&r);
    return rc;
}

enum jobclient_result jobclient_logs(struct dashboard *d, const char *id, char **logs, size_t *len, struct errbuf *err)
{
    struct httpc_reply r;
    char path[JOBSAPI_ID_MAX_BYTES + 16];
    enum jobclient_result rc = JOBCLIENT_OK;
    int http;
    snprintf(path, sizeof(path), "/api/jobs/%s/logs", id);
    http = dashboard_call(d, "GET", path, NULL, JOBSAPI_LOGS_MAX_BYTES, JOBCLIENT_LOGS_TIMEOUT_MS, &r, err);
    if (http < 0)
        return http == HTTPC_TOO_LARGE ? JOBCLIENT_TOO_LARGE : JOBCLIENT_FAILED;
    if (r.status != 200)
        rc = (errbuf_set(err, "GET %s: HTTP %ld", path, r.status), JOBCLIENT_FAILED);
    else if (jobsapi_parse_logs(r.body.buf, r.body.len, logs, len, err) < 0)
        rc = JOBCLIENT_FAILED;
    httpc_reply_free(&r);
    return rc;
}

enum jobclient_result jobclient_stop(struct dashboard *d, const char *id, long *status, struct errbuf *err)
{
    struct httpc_reply r;
    char path[JOBSAPI_ID_MAX_BYTES + 16];
    snprintf(path, sizeof(path), "/api/jobs/%s/stop", id);
    if (dashboard_call(d, "POST", path, "{}", JOBSAPI_REPLY_MAX_BYTES, JOBCLIENT_CALL_TIMEOUT_MS, &r, err) < 0)
        return JOBCLIENT_FAILED;
    *status = r.status;
    httpc_reply_free(&r);
    return JOBCLIENT_OK;
}
