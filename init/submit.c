/* The submitter's life: wait for the dashboard, find or submit the job under a stable
 * submission_id (a restarted submitter never submits twice), print the job's log as it grows,
 * and turn the job's end into an exit code. The requests are jobclient.c's. */
#include "submit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backoff.h"
#include "dashboard.h"
#include "jobclient.h"
#include "env.h"
#include "exitcode.h"
#include "fsroot.h"
#include "jobsapi.h"
#include "log.h"
#include "monotime.h"
#include "raytls.h"
#include "settings.h"
#include "utf8.h"
#include "wait.h"

/* Polling: fast while the log grows, backing off to the cap while it is quiet (lib/base/backoff.c's
 * schedule without jitter: one submitter, one dashboard). */
#define SUBMIT_POLL_MIN_MS 250
#define SUBMIT_POLL_MAX_MS 2000
/* Waiting for the dashboard to answer, and to submit: retries with this backoff inside the wait
 * deadline. */
#define SUBMIT_RETRY_MIN_MS 200
#define SUBMIT_RETRY_MAX_MS 2000
#define SUBMIT_PROGRESS_MS 5000
/* After SIGTERM: how long to wait for Ray to report the job STOPPED. */
#define SUBMIT_STOP_WAIT_MS 10000
#define RUNTIME_ENV_MAX_BYTES (1024 * 1024)

struct submitter {
    const struct submit_config *c;
    struct dashboard dash;
    char id[JOBSAPI_ID_MAX_BYTES]; /* the submission_id: given, derived, or Ray's */
    long stop_wait_ms;
    size_t logs_printed;
    bool logs_given_up;
};

/* ---- options -------------------------------------------------------------------------------- */

static int load_runtime_env(struct submit_config *c, const char *const *envp, struct errbuf *err)
{
    const char *text = env_lookup_nonempty(envp, "RAYBOOT_RUNTIME_ENV");
    const char *file = env_lookup_nonempty(envp, "RAYBOOT_RUNTIME_ENV_FILE");
    size_t len;
    if (text && file)
        return errbuf_set(err, "RAYBOOT_RUNTIME_ENV and RAYBOOT_RUNTIME_ENV_FILE are both set: keep one");
    if (text) {
        if (jobsapi_check_object(text, strlen(text), err) < 0)
            return errbuf_prefix(err, "RAYBOOT_RUNTIME_ENV");
        c->runtime_env = strdup(text);
        return c->runtime_env ? 0 : errbuf_set(err, "out of memory");
    }
    if (!file)
        return 0;
    if (fsroot_read(NULL, file, RUNTIME_ENV_MAX_BYTES, &c->runtime_env, &len, err) < 0)
        return errbuf_prefix(err, "RAYBOOT_RUNTIME_ENV_FILE");
    if (jobsapi_check_object(c->runtime_env, len, err) < 0)
        return errbuf_prefix(err, "RAYBOOT_RUNTIME_ENV_FILE=%.200s", file);
    return 0;
}

static int load_submission_id(struct submit_config *c, const char *const *envp, const char *derived, struct errbuf *err)
{
    const char *given = env_lookup_nonempty(envp, "RAYBOOT_SUBMISSION_ID");
    const char *id = given ? given : derived;
    if (!id)
        return 0;
    /* It goes into URL paths: letters, digits and a few marks only. */
    if (strlen(id) >= sizeof(c->id) ||
        strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") != strlen(id))
        return errbuf_set(err, "RAYBOOT_SUBMISSION_ID=%.80s: use letters, digits, '-', '_' and '.' (at most %zu)", id,
                          sizeof(c->id) - 1);
    snprintf(c->id, sizeof(c->id), "%s", id);
    return 0;
}

/* Ray's TLS covers its gRPC only: the dashboard's Jobs API stays HTTP, and the submitter would
 * send the token there to whatever the head's name resolves to, unproven. */
static int refuse_tls(const char *const *envp, struct errbuf *err)
{
    if (!raytls_wanted(envp))
        return 0;
    return errbuf_set(err,
                      "RAY_USE_TLS=%s: rayboot submit talks to the dashboard's Jobs API, which Ray's TLS does not "
                      "cover (HTTP), and would send Ray's token there unproven; run the job as the head's "
                      "command instead (docs/tls.md)",
                      env_lookup(envp, "RAY_USE_TLS"));
}

int submit_config_load(struct submit_config *c, const char *const *envp, const char *derived_id, struct errbuf *err)
{
    if (load_runtime_env(c, envp, err) < 0 || load_submission_id(c, envp, derived_id, err) < 0)
        return -1;
    /* The dashboard takes the same token as the GCS, found the same way. */
    if (refuse_tls(envp, err) < 0 || rayauth_load(envp, env_lookup_nonempty(envp, "RAYBOOT_ROOT"), &c->auth, err) < 0)
        return -1;
    return 0;
}

void submit_config_free(struct submit_config *c)
{
    rayauth_clear(&c->auth);
    free(c->runtime_env);
    c->runtime_env = NULL;
}

/* The entrypoint reaches the dashboard as a JSON string, and JSON is UTF-8: a word that is not
 * (a Latin-1 file name, stray bytes) would make the request invalid, so it is refused up front. */
int submit_check_entrypoint(char *const *argv, int argc, struct errbuf *err)
{
    for (int i = 0; i < argc; i++) {
        long at = utf8_invalid_offset(argv[i]);
        if (at >= 0)
            return errbuf_set(err,
                              "argument %d of the job's entrypoint is not valid UTF-8 (byte %ld is 0x%02x): the Ray "
                              "Jobs API takes the entrypoint as JSON text",
                              i + 1, at + 1, (unsigned)(unsigned char)argv[i][at]);
    }
    return 0;
}

/* ---- talking to the dashboard --------------------------------------------------------------- */

/* Sleeps ms; true when the stop check said to stop meanwhile (signals are read either way). */
static bool pause_ms(struct submitter *s, long ms)
{
    return wait_sleep(ms, s->c->stop) < 0;
}

/* Sleeps ms whatever arrives: the job is being stopped already, signals are only read. */
static void pause_through(struct submitter *s, long ms)
{
    long end = monotime_ms() + ms;
    while (wait_sleep(end - monotime_ms(), s->c->stop) < 0)
        ;
}

/* GET /api/version until it answers 200. 0, or -1 with *exit_code and the message (the deadline
 * passed, or a stop signal came). */
static int wait_dashboard(struct submitter *s, int *exit_code, struct errbuf *err)
{
    long start = monotime_ms(), next_progress = start + SUBMIT_PROGRESS_MS;
    struct backoff retry;
    struct errbuf last;
    backoff_init(&retry, SUBMIT_RETRY_MIN_MS, SUBMIT_RETRY_MAX_MS, 0);
    for (int attempt = 1;; attempt++) {
        enum jobclient_result rc = jobclient_version(&s->dash, &last);
        if (rc == JOBCLIENT_OK) {
            log_info("dashboard %s answers (%.1f s)", s->dash.base, (double)(monotime_ms() - start) / 1000.0);
            return 0;
        }
        if (rc == JOBCLIENT_UNAUTHORIZED) { /* waiting mends no token */
            *exit_code = EXIT_CONFIG;
            return errbuf_set(err, "%s", last.msg);
        }
        if (monotime_ms() - start >= s->c->wait_timeout_ms) {
            *exit_code = EXIT_WAIT_DEADLINE;
            return errbuf_set(err, "gave up waiting for the dashboard %s after %.1f s and %d attempts; last: %s",
                              s->dash.base, (double)(monotime_ms() - start) / 1000.0, attempt, last.msg);
        }
        if (monotime_ms() >= next_progress) {
            log_info("waiting for the dashboard %s (attempt %d, %.0f s): %s", s->dash.base, attempt,
                     (double)(monotime_ms() - start) / 1000.0, last.msg);
            next_progress += SUBMIT_PROGRESS_MS;
        }
        if (pause_ms(s, backoff_step_ms(&retry))) {
            *exit_code = EXIT_JOB_STOPPED;
            return errbuf_set(err, "stopped before the dashboard answered");
        }
    }
}

/* Finds the job under s->id, or submits it; retries transient failures inside the deadline.
 * 0, or -1 with *exit_code and the message. */
static int find_or_submit(struct submitter *s, int *exit_code, struct errbuf *err)
{
    struct jobsapi_submit req = {NULL, NULL, s->c->runtime_env, s->c->metadata};
    long start = monotime_ms();
    struct backoff retry;
    backoff_init(&retry, SUBMIT_RETRY_MIN_MS, SUBMIT_RETRY_MAX_MS, 0);
    for (;;) {
        struct jobsapi_job job = {0};
        enum jobclient_result rc = s->id[0] ? jobclient_get(&s->dash, s->id, &job, err) : JOBCLIENT_NO_SUCH_JOB;
        if (rc == JOBCLIENT_OK) {
            log_info("job %s exists already (%s): following it, not submitting again", s->id,
                     jobsapi_status_name(job.status));
            return 0;
        }
        if (rc == JOBCLIENT_NO_SUCH_JOB) {
            req.submission_id = s->id[0] ? s->id : NULL;
            rc = jobclient_submit(&s->dash, s->c->argv, s->c->argc, &req, s->id, err);
            if (rc == JOBCLIENT_OK) {
                log_info("submitted job %s", s->id);
                return 0;
            }
            if (rc == JOBCLIENT_EXISTS)
                continue; /* someone else submitted it meanwhile: find it */
            if (rc == JOBCLIENT_REFUSED) {
                *exit_code = EXIT_CONFIG;
                return -1;
            }
        }
        if (monotime_ms() - start >= s->c->wait_timeout_ms) {
            *exit_code = EXIT_WAIT_DEADLINE;
            return errbuf_prefix(err, "could not submit the job within %.0f s", (double)s->c->wait_timeout_ms / 1000.0);
        }
        log_warn("%s; retrying", err->msg);
        if (pause_ms(s, backoff_step_ms(&retry))) {
            *exit_code = EXIT_JOB_STOPPED;
            return errbuf_set(err, "stopped before the job was submitted");
        }
    }
}

/* Prints the part of the job's log not printed yet. True when there was some. */
static bool print_new_logs(struct submitter *s)
{
    struct errbuf err;
    char *logs;
    size_t len;
    bool grew = false;
    enum jobclient_result rc;
    if (s->logs_given_up)
        return false;
    rc = jobclient_logs(&s->dash, s->id, &logs, &len, &err);
    if (rc == JOBCLIENT_TOO_LARGE) {
        log_warn("the job's log passed %d bytes: no longer printed here (see the dashboard)", JOBSAPI_LOGS_MAX_BYTES);
        s->logs_given_up = true;
    }
    if (rc != JOBCLIENT_OK)
        return false;
    if (len > s->logs_printed) {
        fwrite(logs + s->logs_printed, 1, len - s->logs_printed, stdout);
        fflush(stdout);
        s->logs_printed = len;
        grew = true;
    }
    free(logs);
    return grew;
}

static int outcome(struct submitter *s, const struct jobsapi_job *job)
{
    switch (job->status) {
    case JOB_SUCCEEDED:
        log_info("job %s SUCCEEDED", s->id);
        return EXIT_OK;
    case JOB_FAILED:
        if (job->driver_exit_code >= 0)
            log_error("job %s FAILED (its entrypoint exited %ld): %s", s->id, job->driver_exit_code, job->message);
        else
            log_error("job %s FAILED: %s", s->id, job->message);
        return EXIT_JOB_FAILED;
    default:
        log_warn("job %s %s: %s", s->id, jobsapi_status_name(job->status), job->message);
        return EXIT_JOB_STOPPED;
    }
}

/* SIGTERM while following: the job must not outlive its submitter. */
static int stop_job(struct submitter *s)
{
    struct errbuf err;
    struct jobsapi_job job = {0};
    long deadline = monotime_ms() + s->stop_wait_ms, status;
    if (jobclient_stop(&s->dash, s->id, &status, &err) != JOBCLIENT_OK) {
        log_error("could not stop job %s: %s", s->id, err.msg);
        return EXIT_JOB_STOPPED;
    }
    log_info("asked Ray to stop job %s (HTTP %ld)", s->id, status);
    while (monotime_ms() < deadline) {
        if (jobclient_get(&s->dash, s->id, &job, &err) == JOBCLIENT_OK && jobsapi_status_terminal(job.status)) {
            print_new_logs(s);
            log_info("job %s is %s", s->id, jobsapi_status_name(job.status));
            return EXIT_JOB_STOPPED;
        }
        pause_through(s, SUBMIT_POLL_MIN_MS);
    }
    log_warn("job %s did not stop within %.0f s", s->id, (double)s->stop_wait_ms / 1000.0);
    return EXIT_JOB_STOPPED;
}

static int follow(struct submitter *s)
{
    long delay = 0, unreachable_since = 0;
    struct backoff poll;
    backoff_init(&poll, SUBMIT_POLL_MIN_MS, SUBMIT_POLL_MAX_MS, 0);
    for (;;) {
        struct jobsapi_job job = {0};
        struct errbuf err;
        enum jobclient_result found;
        if (pause_ms(s, delay))
            return stop_job(s);
        if (print_new_logs(s))
            backoff_reset(&poll); /* the log grows: look again soon */
        delay = backoff_step_ms(&poll);
        found = jobclient_get(&s->dash, s->id, &job, &err);
        if (found == JOBCLIENT_OK) {
            unreachable_since = 0;
            if (jobsapi_status_terminal(job.status)) {
                print_new_logs(s);
                return outcome(s, &job);
            }
            continue;
        }
        if (found == JOBCLIENT_NO_SUCH_JOB) {
            /* A new head has a new job table: the cluster this job ran on is gone. */
            log_error("job %s is gone from the cluster (was the head re-created?)", s->id);
            return EXIT_JOB_FAILED;
        }
        if (!unreachable_since)
            unreachable_since = monotime_ms();
        if (monotime_ms() - unreachable_since >= s->c->head_loss_timeout_ms) {
            log_error("the dashboard has not answered for %.0f s: %s", (double)s->c->head_loss_timeout_ms / 1000.0,
                      err.msg);
            return EXIT_WAIT_DEADLINE;
        }
    }
}

/* ---- the whole of it ------------------------------------------------------------------------ */

int submit_job(const struct submit_config *c)
{
    struct submitter s;
    struct errbuf err;
    int code = EXIT_OK;

    memset(&s, 0, sizeof(s));
    s.c = c;
    memcpy(s.id, c->id, sizeof(s.id));
    s.stop_wait_ms = c->grace_period_ms - SETTINGS_GRACE_MARGIN_MS;
    if (s.stop_wait_ms > SUBMIT_STOP_WAIT_MS)
        s.stop_wait_ms = SUBMIT_STOP_WAIT_MS;
    if (dashboard_init(&s.dash, c->url, c->url_from, &err) < 0) {
        log_error("%s", err.msg);
        return EXIT_SOFTWARE;
    }
    memcpy(s.dash.auth_header, c->auth.header, sizeof(s.dash.auth_header));
    if (wait_dashboard(&s, &code, &err) < 0 || find_or_submit(&s, &code, &err) < 0)
        log_error("%s", err.msg);
    else
        code = follow(&s);
    dashboard_free(&s.dash);
    return code;
}
