/* The submitter: submit an entrypoint through the Ray Jobs REST API, follow the job (its logs on
 * stdout) to its end, and stop it if this process is told to stop first. It is handed plain
 * configuration; waiting for the cluster first is its caller's. */
#ifndef RAYBOOT_INIT_SUBMIT_H
#define RAYBOOT_INIT_SUBMIT_H

#include "errbuf.h"
#include "jobsapi.h"
#include "rayauth.h"
#include "wait.h"

struct submit_config {
    char *const *argv; /* the job's entrypoint */
    int argc;
    const char *url;               /* the dashboard, http://HOST:PORT */
    const char *url_from;          /* where url came from ("--address", ...), for messages */
    char id[JOBSAPI_ID_MAX_BYTES]; /* the submission_id, or "": Ray makes one */
    char *runtime_env;             /* a JSON object's text, or NULL (submit_config_free) */
    const char *metadata[4];       /* "key=value" strings, NULL-terminated */
    long wait_timeout_ms;          /* for the dashboard to answer and the job to be submitted */
    long head_loss_timeout_ms;     /* the dashboard silent this long while following: give up */
    long grace_period_ms;          /* stopping the job after a stop signal fits in this */
    const struct wait_stop *stop;  /* its check says when to stop the job (wait.h) */
    struct rayauth auth;           /* Ray's token for the dashboard (submit_config_load) */
};

/* The entrypoint reaches the dashboard as JSON text: every word must be UTF-8. -1 with a message
 * naming the word. */
int submit_check_entrypoint(char *const *argv, int argc, struct errbuf *err);

/* What the environment adds: RAYBOOT_RUNTIME_ENV or RAYBOOT_RUNTIME_ENV_FILE,
 * RAYBOOT_SUBMISSION_ID (else derived_id, when not NULL), and Ray's token (rayauth.h; RAY_USE_TLS
 * refused). -1 with a message naming the variable
 * (a configuration error). submit_config_free is needed either way. */
int submit_config_load(struct submit_config *c, const char *const *envp, const char *derived_id, struct errbuf *err);
void submit_config_free(struct submit_config *c);

/* Waits for the dashboard, finds the job under c->id or submits it, follows it to its end.
 * Returns the exit code (docs/configuration.md, "Exit codes": 0, 1 FAILED, 3 STOPPED, 75, ...). */
int submit_job(const struct submit_config *c);

#endif
