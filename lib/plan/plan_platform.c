/* LeaderWorkerSet and JobSet as plan sources: every group of a LeaderWorkerSet is a Ray cluster
 * with its leader the head; a JobSet is one, its head pod 0 of Job 0 of the replicated job --head
 * names. Parsing is lib/plan/lws.c's and lib/plan/jobset.c's; qualifying the head's name, explicit settings
 * and ray start are lib/plan/plan.c's. Also the order in which sources win, for the warning when two
 * describe one pod. */
#include "plan_platform.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "env.h"
#include "podlabels.h"

static int pushed(int rc, struct errbuf *err)
{
    return rc < 0 ? errbuf_set(err, "out of memory") : 0;
}

static int from_lws(struct plan *p, enum plan_role *role, char head_host[ADDRESS_HOST_MAX_BYTES], struct errbuf *err)
{
    const struct lws_pod *l = &p->lws;
    p->source = PLAN_SOURCE_LWS;
    *role = l->worker_index == 0 ? PLAN_ROLE_HEAD : PLAN_ROLE_WORKER;
    snprintf(head_host, ADDRESS_HOST_MAX_BYTES, "%s", l->leader_host);
    snprintf(p->job, sizeof(p->job), "%s", l->group);
    p->index = l->worker_index;
    p->workers_expected = l->size - 1;
    p->workers_from = "LWS_GROUP_SIZE";
    plan_evidence(p->role_from, "LWS_WORKER_INDEX=%ld", l->worker_index);
    plan_evidence(p->head_from, "LWS_LEADER_ADDRESS=%s.%s", l->leader_host, l->namespace_);
    /* LeaderWorkerSet makes every object in its own namespace, the pod's: the two never differ
     * but by hand. */
    if (!p->namespace_[0])
        snprintf(p->namespace_, sizeof(p->namespace_), "%s", l->namespace_);
    else if (strcmp(p->namespace_, l->namespace_) != 0)
        return pushed(strv_pushf(&p->warnings,
                                 "LWS_LEADER_ADDRESS names namespace %s, but this pod is in %s; "
                                 "looking the leader up in %s",
                                 l->namespace_, p->namespace_, p->namespace_),
                      err);
    return 0;
}

static void from_jobset(struct plan *p, enum plan_role *role, char head_host[ADDRESS_HOST_MAX_BYTES])
{
    const struct jobset_pod *j = &p->jobset;
    p->source = PLAN_SOURCE_JOBSET;
    *role = j->head ? PLAN_ROLE_HEAD : PLAN_ROLE_WORKER;
    snprintf(head_host, ADDRESS_HOST_MAX_BYTES, "%s", j->head_host);
    snprintf(p->job, sizeof(p->job), "%s", j->name);
    snprintf(p->task, sizeof(p->task), "%s", j->replicated_job);
    p->index = j->pod_index;
    p->workers_expected = j->worker_jobs * j->pods_per_job;
    p->workers_from = "jobset";
    plan_evidence(p->role_from, "%s (replicatedjob-name=%s, job-index=%ld) and JOB_COMPLETION_INDEX=%ld",
                  PODLABELS_FILE, j->replicated_job, j->job_index, j->pod_index);
    if (j->head_host[0])
        plan_evidence(p->head_from, "%s (jobset-name=%s) and /etc/hosts (subdomain %s)", PODLABELS_FILE, j->name,
                      j->subdomain);
}

int plan_platform_detect(const struct plan_input *in, const char *root, const char *hostname, const char *fqdn,
                         bool role_given, bool address_given, struct plan *p, enum plan_role *role,
                         char head_host[ADDRESS_HOST_MAX_BYTES], struct errbuf *err)
{
    struct jobset_input js = {NULL, in->envp, hostname, fqdn, in->plugin->head_task, role_given, address_given};
    int found = lws_parse(in->envp, hostname, &p->lws, &p->warnings, err);
    if (found > 0)
        return from_lws(p, role, head_host, err) < 0 ? -1 : 1;
    if (found < 0)
        return -1;
    found = jobset_load(root, &js, &p->jobset, &p->warnings, err);
    if (found > 0)
        from_jobset(p, role, head_host);
    return found;
}

/* The detection order; explicit settings come before all of them. */
static const enum plan_source source_order[] = {PLAN_SOURCE_VOLCANO, PLAN_SOURCE_LWS, PLAN_SOURCE_JOBSET,
                                                PLAN_SOURCE_INDEXED_JOB};
#define SOURCES (sizeof(source_order) / sizeof(source_order[0]))

int plan_platform_warn_others(const struct plan_input *in, const char *root, const char *volcano_origin,
                              const char *index_text, struct plan *p, struct errbuf *err)
{
    static const char *const lws_vars[] = {"LWS_WORKER_INDEX", "LWS_LEADER_ADDRESS", "LWS_GROUP_SIZE"};
    char shown[SOURCES][PLAN_EVIDENCE_MAX_BYTES] = {"", "", "", ""};
    size_t decided = SOURCES;

    if (volcano_origin)
        plan_evidence(shown[0], "%s", volcano_origin);
    for (size_t v = 0; v < 3 && !shown[1][0]; v++) {
        const char *value = env_lookup(in->envp, lws_vars[v]);
        if (value)
            plan_evidence(shown[1], "%s=%.60s", lws_vars[v], value);
    }
    if (p->source == PLAN_SOURCE_JOBSET || jobset_present(root))
        plan_evidence(shown[2], "%s", PODLABELS_FILE);
    if (index_text && p->source != PLAN_SOURCE_JOBSET)
        plan_evidence(shown[3], "JOB_COMPLETION_INDEX=%.40s", index_text);
    for (size_t k = 0; k < SOURCES; k++) {
        if (source_order[k] == p->source)
            decided = k;
    }
    for (size_t k = 0; decided < SOURCES && k < SOURCES; k++) {
        if (k == decided || !shown[k][0])
            continue;
        if (pushed(strv_pushf(&p->warnings,
                              "both %s (%s) and %s (%s) describe this pod; %s comes first in rayboot's order "
                              "(RAYBOOT_ROLE and RAYBOOT_HEAD_ADDRESS, then volcano, lws, jobset, indexed-job), so "
                              "%s is ignored",
                              plan_source_name(source_order[decided]), shown[decided],
                              plan_source_name(source_order[k]), shown[k], plan_source_name(source_order[decided]),
                              shown[k]),
                   err) < 0)
            return -1;
    }
    return 0;
}
