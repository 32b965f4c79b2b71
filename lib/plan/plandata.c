/* The plan's data: set-up, release, names and warnings; no decision is made here. */
#include "plandata.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void plan_evidence(char dst[PLAN_EVIDENCE_MAX_BYTES], const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, PLAN_EVIDENCE_MAX_BYTES, fmt, ap);
    va_end(ap);
}

const char *plan_role_name(enum plan_role role)
{
    switch (role) {
    case PLAN_ROLE_HEAD:
        return "head";
    case PLAN_ROLE_WORKER:
        return "worker";
    case PLAN_ROLE_SUBMITTER:
        return "submitter";
    }
    return "?";
}

void plan_cluster_name(const struct plan *p, char out[PLAN_CLUSTER_NAME_MAX_BYTES])
{
    out[0] = '\0';
    if (p->namespace_[0] && p->job[0])
        snprintf(out, PLAN_CLUSTER_NAME_MAX_BYTES, "%s/%s", p->namespace_, p->job);
}

const char *plan_source_name(enum plan_source source)
{
    switch (source) {
    case PLAN_SOURCE_VOLCANO:
        return "volcano";
    case PLAN_SOURCE_INDEXED_JOB:
        return "indexed-job";
    case PLAN_SOURCE_EXPLICIT:
        return "explicit";
    case PLAN_SOURCE_LWS:
        return "lws";
    case PLAN_SOURCE_JOBSET:
        return "jobset";
    }
    return "?";
}

const char *plan_task_kind_name(enum plan_task_kind kind)
{
    switch (kind) {
    case PLAN_TASK_HEAD:
        return "head";
    case PLAN_TASK_SUBMITTER:
        return "submitter";
    case PLAN_TASK_WORKER:
        return "worker";
    case PLAN_TASK_OTHER:
        return "other";
    }
    return "?";
}

int plan_warn(struct plan *p, struct errbuf *err, const char *fmt, ...)
{
    char msg[ERRBUF_MAX_BYTES];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return strv_push(&p->warnings, msg) < 0 ? errbuf_set(err, "out of memory") : 0;
}

void plan_init(struct plan *p)
{
    memset(p, 0, sizeof(*p));
    p->index = -1;
    p->workers_expected = -1;
    strv_init(&p->ray_start);
    strv_init(&p->command);
    strv_init(&p->ray_env);
    strv_init(&p->command_env);
    strv_init(&p->warnings);
    strv_init(&p->labels.labels);
    strv_init(&p->labels.notes);
}

void plan_free(struct plan *p)
{
    free(p->tasks);
    p->tasks = NULL;
    p->ntasks = 0;
    strv_free(&p->ray_start);
    strv_free(&p->command);
    strv_free(&p->ray_env);
    strv_free(&p->command_env);
    strv_free(&p->warnings);
    strv_free(&p->labels.labels);
    strv_free(&p->labels.notes);
}
