/* Platform detection, all of it: which source describes this pod (a Volcano Job's svc plugin
 * host lists, a LeaderWorkerSet's LWS_* variables, a JobSet's labels, an Indexed Job's index),
 * in one order (sources[] below), what each says (role, head, job, index, workers_expected and
 * the evidence), and the warning when another source shows in the same pod. The files are read by
 * volcano.c, lws.c, jobset.c and podview.c; explicit settings and the final decision are plan.c's. */
#include "detect.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "jobset.h"
#include "lws.h"
#include "podlabels.h"
#include "text.h"
#include "volcano.h"

static void list_tasks(const struct volcano_tasks *vt, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < vt->ntasks && used < cap; i++) {
        int n = text_format(out + used, cap - used, "%s%s", i ? ", " : "", vt->tasks[i].key);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    for (char *c = out; *c; c++)
        *c = (char)(*c == '_' ? '-' : *c);
}

/* VK_TASK_INDEX / VC_TASK_INDEX only cross-check what the host lists say, except in a task whose
 * replicas share one listed hostname: there the list cannot tell them apart, and the env plugin's
 * index is the pod's. */
static int cross_check_index(const struct plan_input *in, bool shared, struct plan *p, struct errbuf *err)
{
    static const char *const names[] = {"VC_TASK_INDEX", "VK_TASK_INDEX"};
    for (size_t i = 0; i < 2; i++) {
        const char *v = env_lookup(in->envp, names[i]);
        long idx;
        if (!v)
            continue;
        if (env_parse_count(v, PLAN_COUNT_MAX, &idx) < 0)
            return errbuf_set(err, "%s=%.40s: not a task index (expected a number)", names[i], v);
        if (shared) {
            p->index = idx;
            shared = false;
            continue;
        }
        if (idx != p->index && plan_warn(p, err, "%s=%ld, but HOSTNAME=%s is entry %ld of task %s; using the host list",
                                         names[i], idx, p->pod_name, p->index, p->task) < 0)
            return -1;
    }
    return 0;
}

/* A task key ("gpu_workers") as the task's name: task names are DNS labels, so '_' can only have
 * been '-'. */
static void task_name(const char *key, char *out, size_t cap)
{
    snprintf(out, cap, "%s", key);
    for (char *c = out; *c; c++)
        *c = (char)(*c == '_' ? '-' : *c);
}

/* Volcano lists pod J-T-i as "J-T-i.<subdomain>", unless the task's template sets hostname: then
 * the svc plugin lists "hostname.<subdomain>" once, whatever the replicas (GenerateHosts stops
 * after the first), VC_<K>_NUM says 1, and every replica has that one DNS name. A single entry
 * whose host does not end in "-T-0" is such a name. */
static bool shared_hostname(const struct volcano_task *t, const char *name)
{
    char suffix[DNS_LABEL_MAX_BYTES + 4];
    size_t host_len, suffix_len;
    if (t->nhosts != 1)
        return false;
    host_len = strcspn(t->hosts[0], ".");
    suffix_len = (size_t)snprintf(suffix, sizeof(suffix), "-%s-0", name);
    return host_len <= suffix_len || strncmp(t->hosts[0] + host_len - suffix_len, suffix, suffix_len) != 0;
}

/* Every task --worker names must be a task of the job, and neither the head nor the submitter: a
 * typo would otherwise count no workers, and the head would run its command at once. */
static int check_worker_names(const struct plan_input *in, const struct volcano_tasks *vt,
                              const struct volcano_task *head, const struct volcano_task *submitter, const char *tasks,
                              struct errbuf *err)
{
    const char *list = in->plugin->worker_tasks;
    if (!in->plugin->worker_given)
        return 0;
    for (const char *w = list; *w;) {
        char name[DNS_LABEL_MAX_BYTES + 1];
        size_t n = strcspn(w, ",");
        const struct volcano_task *t;
        text_copy(name, sizeof(name), w, n);
        t = volcano_find_task(vt, name);
        if (!t)
            return errbuf_set(err, "--worker=%.200s: no Volcano task named '%s' in %s (tasks: %s)", list, name,
                              vt->origin, tasks);
        if (t == head)
            return errbuf_set(err, "--worker=%.200s: '%s' is the head task (--head=%s)", list, name,
                              in->plugin->head_task);
        if (t == submitter)
            return errbuf_set(err, "--worker=%.200s: '%s' is the submitter task, which runs no Ray node", list, name);
        w += n + (w[n] == ',');
    }
    return 0;
}

/* gcc 12's -fanalyzer, following detect_source through sources[]'s function pointers, reports
 * p->tasks as leaked once it is stored (a false positive: plan_free frees it, and ASan's leak check
 * agrees in the planner's fuzz replays, fuzz/fuzz_env.c on Volcano pods). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif
/* The worker groups: the tasks --worker names when it is given (the ray plugin's own worker
 * task), else every task but the head and the submitter (which runs no Ray node). Every task goes
 * into p->tasks, the evidence `rayboot plan` shows for workers_expected. */
static int count_workers(const struct plan_input *in, const struct volcano_tasks *vt, const struct volcano_task *head,
                         const struct volcano_task *submitter, struct plan *p, struct errbuf *err)
{
    bool count_given = env_lookup_nonempty(in->envp, "RAYBOOT_WORKERS_EXPECTED") != NULL;

    p->tasks = calloc(vt->ntasks ? vt->ntasks : 1, sizeof(*p->tasks));
    if (!p->tasks)
        return errbuf_set(err, "out of memory");
    p->ntasks = vt->ntasks;
    p->workers_expected = 0;
    p->workers_from = in->plugin->worker_given ? "--worker" : "volcano";
    for (size_t k = 0; k < vt->ntasks; k++) {
        const struct volcano_task *task = &vt->tasks[k];
        struct plan_task *pt = &p->tasks[k];

        task_name(task->key, pt->name, sizeof(pt->name));
        pt->hosts = (long)task->nhosts;
        pt->shared_hostname = shared_hostname(task, pt->name);
        if (task == head)
            pt->kind = PLAN_TASK_HEAD;
        else if (task == submitter)
            pt->kind = PLAN_TASK_SUBMITTER;
        else if (in->plugin->worker_given && !plugin_args_names_worker(in->plugin, pt->name))
            pt->kind = PLAN_TASK_OTHER;
        else
            pt->kind = PLAN_TASK_WORKER;
        if (pt->kind != PLAN_TASK_WORKER)
            continue;
        p->workers_expected += pt->hosts;
        if (task->declared >= 0 && (size_t)task->declared != task->nhosts &&
            plan_warn(p, err, "task %s: VC_*_NUM says %ld but its list has %zu hosts; using the list", task->key,
                      task->declared, task->nhosts) < 0)
            return -1;
        if (pt->shared_hostname && !count_given &&
            plan_warn(p, err,
                      "task %s: its template sets hostname %.*s, so all its pods share that one DNS name and "
                      "Volcano lists it once whatever the replicas; it counts as 1 worker (set "
                      "RAYBOOT_WORKERS_EXPECTED to the real count)",
                      pt->name, (int)strcspn(task->hosts[0], "."), task->hosts[0]) < 0)
            return -1;
    }
    return 0;
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/* The head task must have a pod: a task scaled to replicas: 0 is no head. Without a head task,
 * only RAYBOOT_HEAD_ADDRESS can say where the head is. */
static int check_head_task(const struct plan_input *in, const struct volcano_tasks *vt, const struct volcano_task *head,
                           const char *tasks, struct plan *p, struct errbuf *err)
{
    bool address = env_lookup_nonempty(in->envp, "RAYBOOT_HEAD_ADDRESS") != NULL;
    if (head && head->nhosts > 0)
        return 0;
    p->workers_expected = -1;
    p->workers_from = NULL;
    if (head && !address)
        return errbuf_set(err,
                          "task %s has no replicas (%s is empty), so the job has no Ray head: set its "
                          "replicas to 1, or name the head task with --head=TASK",
                          in->plugin->head_task, head->list_name);
    if (head)
        return plan_warn(p, err, "task %s has no replicas; the head comes from RAYBOOT_HEAD_ADDRESS",
                         in->plugin->head_task);
    if (!address)
        return errbuf_set(err,
                          "no Volcano task named '%s' in %s (tasks: %s): name the head task "
                          "with --head=TASK (on the command line or in RAYBOOT_PLUGIN_ARGS)",
                          in->plugin->head_task, vt->origin, tasks);
    return plan_warn(p, err, "no Volcano task named '%s' (tasks: %s); the head comes from RAYBOOT_HEAD_ADDRESS",
                     in->plugin->head_task, tasks);
}

static int detect_volcano(const struct plan_input *in, const struct pod_view *pod, const struct volcano_tasks *vt,
                          bool role_given, struct plan *p, struct detection *d, struct errbuf *err)
{
    const struct volcano_task *head = volcano_find_task(vt, in->plugin->head_task);
    const char *submitter_name = env_lookup_nonempty(in->envp, "RAYBOOT_SUBMITTER_TASK");
    const struct volcano_task *submitter = volcano_find_task(vt, submitter_name ? submitter_name : "submitter");
    char tasks[512];
    size_t t, i;

    if (submitter_name && !dnsname_label_valid(submitter_name, strlen(submitter_name)))
        return errbuf_set(err,
                          "RAYBOOT_SUBMITTER_TASK=%.80s: not a valid task name (lower-case letters, digits "
                          "and '-', at most 63)",
                          submitter_name);
    list_tasks(vt, tasks, sizeof(tasks));
    if (submitter == head)
        submitter = NULL; /* a head is a head, whatever the submitter task is called */
    if (check_worker_names(in, vt, head, submitter, tasks, err) < 0 ||
        count_workers(in, vt, head, submitter, p, err) < 0 || check_head_task(in, vt, head, tasks, p, err) < 0)
        return -1;
    if (head && head->nhosts > 0) {
        snprintf(d->head_host, sizeof(d->head_host), "%s", head->hosts[0]);
        dnsname_label_at(head->hosts[0], 1, p->job, sizeof(p->job));
        plan_evidence(p->head_from, "%s", head->list_name);
    }
    if (volcano_find_host(vt, pod->hostname, &t, &i) < 0) {
        if (!role_given)
            return errbuf_set(err,
                              "HOSTNAME=%s is in no Volcano task host list in %s (tasks: %s): "
                              "set RAYBOOT_ROLE=head|worker, or check the pod's hostname",
                              pod->hostname, vt->origin, tasks);
        return plan_warn(p, err, "HOSTNAME=%s is in no Volcano task host list (tasks: %s); using RAYBOOT_ROLE",
                         pod->hostname, tasks);
    }
    task_name(vt->tasks[t].key, p->task, sizeof(p->task));
    p->index = (long)i;
    plan_evidence(p->role_from, "%s (entry %zu)", vt->tasks[t].list_name, i);
    dnsname_label_at(vt->tasks[t].hosts[i], 1, p->job, sizeof(p->job));
    d->found = true;
    if (cross_check_index(in, p->tasks[t].shared_hostname, p, err) < 0)
        return -1;
    if (&vt->tasks[t] == head) {
        if (p->index != 0 && !role_given)
            return errbuf_set(err,
                              "this pod (HOSTNAME=%s) is replica %ld of task %s, but a Ray cluster has one "
                              "head: set the head task's replicas to 1",
                              pod->hostname, p->index, p->task);
        d->role = PLAN_ROLE_HEAD;
    } else {
        d->role = &vt->tasks[t] == submitter ? PLAN_ROLE_SUBMITTER : PLAN_ROLE_WORKER;
    }
    return 0;
}

static int detect_indexed_job(const struct pod_view *pod, const char *index_text, bool explicit_head, struct plan *p,
                              struct detection *d, struct errbuf *err)
{
    char suffix[32], subdomain[DNS_LABEL_MAX_BYTES + 1];
    size_t host_len = strlen(pod->hostname), suffix_len;

    if (env_parse_count(index_text, PLAN_COUNT_MAX, &p->index) < 0)
        return errbuf_set(err, "JOB_COMPLETION_INDEX=%.40s: not an index (expected a number)", index_text);
    suffix_len = (size_t)snprintf(suffix, sizeof(suffix), "-%ld", p->index);
    if (host_len <= suffix_len || strcmp(pod->hostname + host_len - suffix_len, suffix) != 0 ||
        host_len - suffix_len > DNS_LABEL_MAX_BYTES)
        return errbuf_set(err,
                          "HOSTNAME=%s does not end in %s (JOB_COMPLETION_INDEX=%ld): an Indexed "
                          "Job's hostname is <job>-<index>",
                          pod->hostname, suffix, p->index);
    memcpy(p->job, pod->hostname, host_len - suffix_len);
    p->job[host_len - suffix_len] = '\0';
    d->found = true;
    plan_evidence(p->role_from, "JOB_COMPLETION_INDEX=%ld", p->index);
    d->role = p->index == 0 ? PLAN_ROLE_HEAD : PLAN_ROLE_WORKER;
    if (!pod->fqdn[0] || dnsname_label_at(pod->fqdn, 1, subdomain, sizeof(subdomain)) < 0) {
        if (explicit_head || d->role == PLAN_ROLE_HEAD)
            return 0;
        return errbuf_set(err,
                          "/etc/hosts has no fully qualified name for HOSTNAME=%s, so the head's "
                          "name is unknown: give the Indexed Job's pods a subdomain (a headless "
                          "Service), or set RAYBOOT_HEAD_ADDRESS=host:port",
                          pod->hostname);
    }
    if (snprintf(d->head_host, sizeof(d->head_host), "%s-0.%s", p->job, subdomain) >= (int)sizeof(d->head_host))
        return errbuf_set(err, "HOSTNAME=%s: head name too long", pod->hostname);
    plan_evidence(p->head_from, "/etc/hosts (subdomain %s)", subdomain);
    if (jobset_hostname_pattern(pod->hostname, subdomain))
        return plan_warn(p, err,
                         "HOSTNAME=%s looks like a JobSet pod's (<jobset>-<replicated job>-<job>-<index>, subdomain "
                         "%s), but %s is missing: rayboot sees an Indexed Job, and every Job becomes a Ray cluster "
                         "of its own; mount the downward API's metadata.labels there",
                         pod->hostname, subdomain, PODLABELS_FILE);
    return 0;
}

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

/* What detection works from: read once, before any source is looked at, so that every source's
 * evidence can be shown whichever of them decided. */
struct detect_ctx {
    const struct plan_input *in;
    const struct pod_view *pod;
    bool role_given;         /* RAYBOOT_ROLE is set */
    bool address_given;      /* RAYBOOT_HEAD_ADDRESS is set */
    const char *index_text;  /* JOB_COMPLETION_INDEX, or NULL */
    struct volcano_tasks vt; /* Volcano's host lists (ntasks 0: none) */
    struct plan *p;
    struct detection *d;
};

static int volcano_source(struct detect_ctx *c, struct errbuf *err)
{
    if (c->vt.ntasks == 0)
        return 0;
    c->p->source = PLAN_SOURCE_VOLCANO;
    return detect_volcano(c->in, c->pod, &c->vt, c->role_given, c->p, c->d, err) < 0 ? -1 : 1;
}

static void volcano_shown(const struct detect_ctx *c, char out[PLAN_EVIDENCE_MAX_BYTES])
{
    if (c->vt.ntasks > 0)
        plan_evidence(out, "%s", c->vt.origin);
}

static int lws_source(struct detect_ctx *c, struct errbuf *err)
{
    int found = lws_parse(c->in->envp, c->pod->hostname, &c->p->lws, &c->p->warnings, err);
    if (found <= 0)
        return found;
    if (from_lws(c->p, &c->d->role, c->d->head_host, err) < 0)
        return -1;
    c->d->found = true;
    return 1;
}

static void lws_shown(const struct detect_ctx *c, char out[PLAN_EVIDENCE_MAX_BYTES])
{
    static const char *const vars[] = {"LWS_WORKER_INDEX", "LWS_LEADER_ADDRESS", "LWS_GROUP_SIZE"};
    for (size_t v = 0; v < sizeof(vars) / sizeof(vars[0]); v++) {
        const char *value = env_lookup(c->in->envp, vars[v]);
        if (value) {
            plan_evidence(out, "%s=%.60s", vars[v], value);
            return;
        }
    }
}

static int jobset_source(struct detect_ctx *c, struct errbuf *err)
{
    const struct jobset_input js = {
        .labels = NULL,
        .envp = c->in->envp,
        .hostname = c->pod->hostname,
        .fqdn = c->pod->fqdn,
        .head_job = c->in->plugin->head_task,
        .role_given = c->role_given,
        .address_given = c->address_given,
    };
    int found = jobset_load(c->pod->root, &js, &c->p->jobset, &c->p->warnings, err);
    if (found <= 0)
        return found;
    from_jobset(c->p, &c->d->role, c->d->head_host);
    c->d->found = true;
    return 1;
}

static void jobset_shown(const struct detect_ctx *c, char out[PLAN_EVIDENCE_MAX_BYTES])
{
    if (c->p->source == PLAN_SOURCE_JOBSET || jobset_present(c->pod->root))
        plan_evidence(out, "%s", PODLABELS_FILE);
}

static int indexed_job_source(struct detect_ctx *c, struct errbuf *err)
{
    if (!c->index_text)
        return 0;
    c->p->source = PLAN_SOURCE_INDEXED_JOB;
    return detect_indexed_job(c->pod, c->index_text, c->address_given, c->p, c->d, err) < 0 ? -1 : 1;
}

/* A JobSet's JOB_COMPLETION_INDEX is its own, not another source. */
static void indexed_job_shown(const struct detect_ctx *c, char out[PLAN_EVIDENCE_MAX_BYTES])
{
    if (c->index_text && c->p->source != PLAN_SOURCE_JOBSET)
        plan_evidence(out, "JOB_COMPLETION_INDEX=%.40s", c->index_text);
}

/* The sources in rayboot's order: the first that describes the pod decides (explicit settings
 * come before all of them, in plan.c). Each brings its own evidence, so reordering them moves
 * both. */
static const struct source {
    enum plan_source source;
    /* 1: this source describes the pod (p and d filled), 0: it does not, -1: error in err. */
    int (*decide)(struct detect_ctx *c, struct errbuf *err);
    /* What of this source the pod shows ("" when nothing), for the warning when another decided. */
    void (*shown)(const struct detect_ctx *c, char out[PLAN_EVIDENCE_MAX_BYTES]);
} sources[] = {
    {.source = PLAN_SOURCE_VOLCANO, .decide = volcano_source, .shown = volcano_shown},
    {.source = PLAN_SOURCE_LWS, .decide = lws_source, .shown = lws_shown},
    {.source = PLAN_SOURCE_JOBSET, .decide = jobset_source, .shown = jobset_shown},
    {.source = PLAN_SOURCE_INDEXED_JOB, .decide = indexed_job_source, .shown = indexed_job_shown},
};
#define SOURCES (sizeof(sources) / sizeof(sources[0]))

/* "volcano, lws, jobset, indexed-job": the order, as the warning says it. */
static void order_text(char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t k = 0; k < SOURCES && used < cap; k++) {
        int n = text_format(out + used, cap - used, "%s%s", k ? ", " : "", plan_source_name(sources[k].source));
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

/* After sources[decided] described the pod: a warning for every other source it shows. */
static int warn_others(const struct detect_ctx *c, size_t decided, struct errbuf *err)
{
    char shown[SOURCES][PLAN_EVIDENCE_MAX_BYTES], order[128];
    for (size_t k = 0; k < SOURCES; k++) {
        shown[k][0] = '\0';
        sources[k].shown(c, shown[k]);
    }
    order_text(order, sizeof(order));
    for (size_t k = 0; k < SOURCES; k++) {
        const char *winner = plan_source_name(sources[decided].source);
        if (k == decided || !shown[k][0])
            continue;
        if (pushed(strv_pushf(&c->p->warnings,
                              "both %s (%s) and %s (%s) describe this pod; %s comes first in rayboot's order "
                              "(RAYBOOT_ROLE and RAYBOOT_HEAD_ADDRESS, then %s), so %s is ignored",
                              winner, shown[decided], plan_source_name(sources[k].source), shown[k], winner, order,
                              shown[k]),
                   err) < 0)
            return -1;
    }
    return 0;
}

static int decide_source(struct detect_ctx *c, struct errbuf *err)
{
    for (size_t k = 0; k < SOURCES; k++) {
        int rc = sources[k].decide(c, err);
        if (rc < 0)
            return -1;
        if (rc > 0)
            return c->d->found ? warn_others(c, k, err) : 0;
    }
    if (!c->role_given)
        return errbuf_set(err,
                          "cannot tell whether this pod is the Ray head or a worker: set "
                          "RAYBOOT_ROLE=head or RAYBOOT_ROLE=worker (with RAYBOOT_HEAD_ADDRESS=host:port), "
                          "or run it in a Volcano Job with the svc plugin, a LeaderWorkerSet (LWS_*), a "
                          "JobSet (its labels at %s) or an Indexed Job (JOB_COMPLETION_INDEX)",
                          PODLABELS_FILE);
    return 0;
}

int detect_source(const struct plan_input *in, const struct pod_view *pod, bool role_given, bool address_given,
                  struct plan *p, struct detection *d, struct errbuf *err)
{
    struct detect_ctx c = {
        .in = in,
        .pod = pod,
        .role_given = role_given,
        .address_given = address_given,
        .index_text = env_lookup_nonempty(in->envp, "JOB_COMPLETION_INDEX"),
        .p = p,
        .d = d,
    };
    int rc;
    if (volcano_load(pod->root, in->envp, &c.vt, err) < 0)
        return -1;
    rc = decide_source(&c, err);
    if (c.vt.ntasks > 0)
        volcano_tasks_free(&c.vt); /* the evidence pointed into it */
    return rc;
}
