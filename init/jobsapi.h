/* The Ray Jobs REST API's bodies (dashboard, /api/jobs/): the submit request built with cJSON and
 * the replies parsed, bounded, into plain structs. Pure, so it can be unit-tested on replies
 * recorded from the pinned Ray and fuzzed. The HTTP itself is the caller's. */
#ifndef RAYBOOT_JOBSAPI_H
#define RAYBOOT_JOBSAPI_H

#include <stdbool.h>
#include <stddef.h>

#include "errbuf.h"

/* A job's details are a few KB (they echo the runtime_env and metadata). */
#define JOBSAPI_REPLY_MAX_BYTES (1024 * 1024)
/* GET .../logs returns the whole log every time; past this the submitter stops printing it. */
#define JOBSAPI_LOGS_MAX_BYTES (32 * 1024 * 1024)
#define JOBSAPI_ID_MAX_BYTES 128

enum jobsapi_status { JOB_PENDING, JOB_RUNNING, JOB_STOPPED, JOB_SUCCEEDED, JOB_FAILED };

struct jobsapi_submit {
    const char *entrypoint;       /* one shell string (see shellquote.h) */
    const char *submission_id;    /* or NULL: Ray makes one */
    const char *runtime_env_json; /* a JSON object's text, or NULL */
    const char *const *metadata;  /* "key=value" strings, NULL-terminated, or NULL */
};

struct jobsapi_job {
    enum jobsapi_status status;
    char message[1024];    /* Ray's message about the status, printable ASCII only */
    long driver_exit_code; /* -1 when Ray does not say */
};

/* The body of POST /api/jobs/. NULL with a message (runtime_env not a JSON object, no memory). */
char *jobsapi_submit_body(const struct jobsapi_submit *s, struct errbuf *err);

/* Checks that text is one JSON object (the runtime_env). */
int jobsapi_check_object(const char *text, size_t len, struct errbuf *err);

/* The reply to a submit: its submission_id. */
int jobsapi_parse_submitted(const char *body, size_t len, char id[JOBSAPI_ID_MAX_BYTES], struct errbuf *err);

/* The reply to GET /api/jobs/<id>. */
int jobsapi_parse_job(const char *body, size_t len, struct jobsapi_job *out, struct errbuf *err);

/* The reply to GET /api/jobs/<id>/logs: *logs is malloc'ed (NUL-terminated, *logs_len bytes). */
int jobsapi_parse_logs(const char *body, size_t len, char **logs, size_t *logs_len, struct errbuf *err);

bool jobsapi_status_terminal(enum jobsapi_status s);
const char *jobsapi_status_name(enum jobsapi_status s);

#endif
