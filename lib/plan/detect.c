/* Source detection: reading a Volcano Job's or an Indexed Job's topology into the plan. The
 * files are read elsewhere (volcano.c, podview.c); what wins over what is plan.c's. */
#include "detect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "jobset.h"
#include "podlabels.h"
#include "text.h"

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

int detect_volcano(const struct plan_input *in, const struct pod_view *pod, const struct volcano_tasks *vt,
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

int detect_indexed_job(const struct pod_view *pod, const char *index_text, bool explicit_head, struct plan *p,
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
