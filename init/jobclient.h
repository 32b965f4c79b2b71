/* The Ray Jobs REST API as calls: each one request to the dashboard (dashboard.c), its reply read
 * by jobsapi.c. Retrying, following and deciding the exit code are submit.c's. */
#ifndef RAYBOOT_INIT_JOBCLIENT_H
#define RAYBOOT_INIT_JOBCLIENT_H

#include <stddef.h>

#include "dashboard.h"
#include "errbuf.h"
#include "jobsapi.h"

/* How a call ended. The failures carry a message; the others are answers. */
enum jobclient_result {
    JOBCLIENT_OK = 0,
    JOBCLIENT_FAILED = -1,      /* no answer, an unexpected status, a reply that does not parse */
    JOBCLIENT_NO_SUCH_JOB = -2, /* GET: 404 */
    JOBCLIENT_EXISTS = -3,      /* submit: a job with this submission_id exists already */
    JOBCLIENT_REFUSED = -4,     /* submit: the dashboard refused the request (4xx); the message has its reason */
    JOBCLIENT_TOO_LARGE = -5,   /* logs: longer than JOBSAPI_LOGS_MAX_BYTES */
    /* version: HTTP 401 or 403, Ray's token authentication refused us (a configuration error). */
    JOBCLIENT_UNAUTHORIZED = -6,
};

/* GET /api/version: JOBCLIENT_OK when it answers 200; JOBCLIENT_UNAUTHORIZED on 401/403, with a
 * message naming the variables that give the token. */
enum jobclient_result jobclient_version(struct dashboard *d, struct errbuf *err);
/* GET /api/jobs/<id>. */
enum jobclient_result jobclient_get(struct dashboard *d, const char *id, struct jobsapi_job *job, struct errbuf *err);
/* POST /api/jobs/ with the entrypoint's argv (quoted into one shell string) and req's other
 * fields; id receives the submission_id (Ray's when req->submission_id is NULL). */
enum jobclient_result jobclient_submit(struct dashboard *d, char *const *argv, int argc,
                                       const struct jobsapi_submit *req, char id[JOBSAPI_ID_MAX_BYTES],
                                       struct errbuf *err);
/* GET /api/jobs/<id>/logs: the whole log so far, malloc'd into *logs (*len bytes). */
enum jobclient_result jobclient_logs(struct dashboard *d, const char *id, char **logs, size_t *len, struct errbuf *err);
/* POST /api/jobs/<id>/stop; *status: the HTTP status. */
enum jobclient_result jobclient_stop(struct dashboard *d, const char *id, long *status, struct errbuf *err);

#endif
