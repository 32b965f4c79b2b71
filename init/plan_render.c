/* Rendering a plan; deciding it is plan.c's job. JSON goes through cJSON so every string is
 * escaped correctly whatever the environment held. */
#include "plan_render.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "json.h"
#include "raystart.h"
#include "redact.h"

static cJSON *string_or_null(const char *s)
{
    return s[0] ? json_text(s) : cJSON_CreateNull();
}

static cJSON *number_or_null(long n)
{
    return n >= 0 ? cJSON_CreateNumber((double)n) : cJSON_CreateNull();
}

/* Every list the plan shows goes through here: users paste `rayboot plan` into bug reports, so a
 * secret's value (Redis' --redis-password, a URL's password) is shown as REDACT_MARKER; the argv
 * that is exec'd is the plan's own, untouched. Out of memory: nothing is shown. */
static void shown(const struct strv *v, struct strv *out)
{
    strv_init(out);
    if (redact_strv(v, out) < 0)
        strv_free(out);
}

static cJSON *string_array(const struct strv *v)
{
    struct strv s;
    cJSON *arr = cJSON_CreateArray();
    shown(v, &s);
    for (size_t i = 0; arr && i < s.len; i++)
        cJSON_AddItemToArray(arr, json_text(s.items[i]));
    strv_free(&s);
    return arr;
}

/* KEY=VALUE strings as an object. */
static cJSON *env_object(const struct strv *v)
{
    struct strv s;
    cJSON *obj = cJSON_CreateObject();
    shown(v, &s);
    for (size_t i = 0; obj && i < s.len; i++) {
        const char *eq = strchr(s.items[i], '=');
        char key[256];
        if (!eq || (size_t)(eq - s.items[i]) >= sizeof(key))
            continue;
        memcpy(key, s.items[i], (size_t)(eq - s.items[i]));
        key[eq - s.items[i]] = '\0';
        cJSON_AddItemToObject(obj, key, json_text(eq + 1));
    }
    strv_free(&s);
    return obj;
}

/* What LeaderWorkerSet's variables said (lib/plan/lws.c). */
static cJSON *lws_object(const struct lws_pod *l)
{
    cJSON *obj = cJSON_CreateObject();
    cJSON_AddItemToObject(obj, "name", json_text(l->name));
    cJSON_AddItemToObject(obj, "group", json_text(l->group));
    cJSON_AddItemToObject(obj, "group_index", cJSON_CreateNumber((double)l->group_index));
    cJSON_AddItemToObject(obj, "group_size", cJSON_CreateNumber((double)l->size));
    cJSON_AddItemToObject(obj, "worker_index", cJSON_CreateNumber((double)l->worker_index));
    cJSON_AddItemToObject(obj, "leader", json_text(l->leader_host));
    cJSON_AddItemToObject(obj, "namespace", json_text(l->namespace_));
    return obj;
}

/* What the JobSet labels and the Job controller said (lib/plan/jobset.c), and the two numbers
 * workers_expected multiplies. */
static cJSON *jobset_object(const struct jobset_pod *j)
{
    cJSON *obj = cJSON_CreateObject();
    cJSON_AddItemToObject(obj, "name", json_text(j->name));
    cJSON_AddItemToObject(obj, "replicated_job", json_text(j->replicated_job));
    cJSON_AddItemToObject(obj, "job_index", cJSON_CreateNumber((double)j->job_index));
    cJSON_AddItemToObject(obj, "pod_index", cJSON_CreateNumber((double)j->pod_index));
    cJSON_AddItemToObject(obj, "replicated_job_replicas", cJSON_CreateNumber((double)j->replicated_job_replicas));
    cJSON_AddItemToObject(obj, "global_replicas", cJSON_CreateNumber((double)j->global_replicas));
    cJSON_AddItemToObject(obj, "restart_attempt", number_or_null(j->restart_attempt));
    cJSON_AddItemToObject(obj, "head_replicated_job", json_text(j->head_job));
    cJSON_AddItemToObject(obj, "subdomain", string_or_null(j->subdomain));
    cJSON_AddItemToObject(obj, "worker_jobs", cJSON_CreateNumber((double)j->worker_jobs));
    cJSON_AddItemToObject(obj, "pods_per_job", cJSON_CreateNumber((double)j->pods_per_job));
    cJSON_AddItemToObject(obj, "pods_per_job_from", json_text(j->pods_per_job_from));
    return obj;
}

/* Why the plan is what it is: what decided the role and named the head, where workers_expected
 * came from, each Volcano task with its hosts and whether it was counted, and what
 * LeaderWorkerSet or JobSet said. */
static cJSON *evidence_object(const struct plan *p)
{
    cJSON *obj = cJSON_CreateObject(), *tasks = cJSON_CreateArray();
    if (!obj || !tasks) {
        cJSON_Delete(obj);
        cJSON_Delete(tasks);
        return NULL;
    }
    cJSON_AddItemToObject(obj, "role_from", string_or_null(p->role_from));
    cJSON_AddItemToObject(obj, "head_from", string_or_null(p->head_from));
    cJSON_AddItemToObject(obj, "workers_from",
                          p->workers_from ? cJSON_CreateString(p->workers_from) : cJSON_CreateNull());
    for (size_t i = 0; i < p->ntasks; i++) {
        const struct plan_task *t = &p->tasks[i];
        cJSON *task = cJSON_CreateObject();
        if (!task)
            break;
        cJSON_AddItemToObject(task, "task", json_text(t->name));
        cJSON_AddItemToObject(task, "hosts", cJSON_CreateNumber((double)t->hosts));
        cJSON_AddItemToObject(task, "as", cJSON_CreateString(plan_task_kind_name(t->kind)));
        cJSON_AddItemToObject(task, "counted", cJSON_CreateBool(t->kind == PLAN_TASK_WORKER));
        cJSON_AddItemToObject(task, "shared_hostname", cJSON_CreateBool(t->shared_hostname));
        cJSON_AddItemToArray(tasks, task);
    }
    cJSON_AddItemToObject(obj, "tasks", tasks);
    if (p->lws.found)
        cJSON_AddItemToObject(obj, "lws", lws_object(&p->lws));
    if (p->jobset.found)
        cJSON_AddItemToObject(obj, "jobset", jobset_object(&p->jobset));
    return obj;
}

/* The node labels, whether ray start gets them, and the Ray version that decided
 * (lib/plan/raylabels.c). */
static cJSON *labels_object(const struct plan_labels *l)
{
    cJSON *obj = cJSON_CreateObject();
    cJSON_AddItemToObject(obj, "labels", env_object(&l->labels));
    cJSON_AddItemToObject(obj, "passed", cJSON_CreateBool(l->passed));
    cJSON_AddItemToObject(obj, "ray_version", string_or_null(l->ray.version));
    cJSON_AddItemToObject(obj, "ray_version_from", string_or_null(l->ray.from));
    cJSON_AddItemToObject(obj, "ray_version_unknown_why", string_or_null(l->ray.why));
    cJSON_AddItemToObject(obj, "notes", string_array(&l->notes));
    return obj;
}

char *plan_render_json(const struct plan *p)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *head = cJSON_CreateObject();
    char *out;

    cJSON_AddItemToObject(root, "role", cJSON_CreateString(plan_role_name(p->role)));
    cJSON_AddItemToObject(root, "source", cJSON_CreateString(plan_source_name(p->source)));
    cJSON_AddItemToObject(root, "job", string_or_null(p->job));
    cJSON_AddItemToObject(root, "namespace", string_or_null(p->namespace_));
    cJSON_AddItemToObject(root, "task", string_or_null(p->task));
    cJSON_AddItemToObject(root, "index", number_or_null(p->index));
    cJSON_AddItemToObject(root, "pod", string_or_null(p->pod_name));
    cJSON_AddItemToObject(root, "pod_ip", string_or_null(p->pod_ip));
    cJSON_AddItemToObject(root, "node_name", string_or_null(p->node_name));
    cJSON_AddItemToObject(head, "host", string_or_null(p->head_host));
    cJSON_AddItemToObject(head, "fqdn", string_or_null(p->head_fqdn));
    cJSON_AddItemToObject(head, "port", cJSON_CreateNumber(p->head_port));
    cJSON_AddItemToObject(head, "dashboard_port", cJSON_CreateNumber(p->dashboard_port));
    cJSON_AddItemToObject(head, "client_port", cJSON_CreateNumber(p->client_port));
    cJSON_AddItemToObject(root, "head", head);
    cJSON_AddItemToObject(root, "workers_expected", number_or_null(p->workers_expected));
    cJSON_AddItemToObject(root, "evidence", evidence_object(p));
    if (p->role == PLAN_ROLE_SUBMITTER) {
        char url[ADDRESS_HOST_MAX_BYTES + 32];
        snprintf(url, sizeof(url), "http://%s:%d", p->head_fqdn, p->dashboard_port);
        cJSON_AddItemToObject(root, "dashboard", json_text(url));
    }
    if (p->role != PLAN_ROLE_SUBMITTER)
        cJSON_AddItemToObject(root, "nofile", cJSON_CreateNumber((double)p->nofile));
    cJSON_AddItemToObject(root, "ray_start", string_array(&p->ray_start));
    if (p->role != PLAN_ROLE_SUBMITTER)
        cJSON_AddItemToObject(root, "node_labels", labels_object(&p->labels));
    cJSON_AddItemToObject(root, "command", string_array(&p->command));
    cJSON_AddItemToObject(root, "env", env_object(&p->ray_env));
    cJSON_AddItemToObject(root, "command_env", env_object(&p->command_env));
    cJSON_AddItemToObject(root, "warnings", string_array(&p->warnings));
    out = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return out;
}

/* Appends to a growing buffer; on failure the buffer is freed and *buf set to NULL. */
static void append(char **buf, size_t *len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char **buf, size_t *len, const char *fmt, ...)
{
    va_list ap;
    char *piece = NULL, *grown;
    int n;
    if (!*buf)
        return;
    va_start(ap, fmt);
    n = vasprintf(&piece, fmt, ap);
    va_end(ap);
    grown = n < 0 ? NULL : realloc(*buf, *len + (size_t)n + 1);
    if (!grown) {
        free(piece);
        free(*buf);
        *buf = NULL;
        return;
    }
    memcpy(grown + *len, piece, (size_t)n + 1);
    *len += (size_t)n;
    *buf = grown;
    free(piece);
}

static void append_list(char **buf, size_t *len, const char *label, const struct strv *v)
{
    struct strv s;
    shown(v, &s);
    append(buf, len, "%-17s", label);
    if (s.len == 0)
        append(buf, len, " (none)");
    for (size_t i = 0; i < s.len; i++)
        append(buf, len, " %s", s.items[i]);
    append(buf, len, "\n");
    strv_free(&s);
}

/* The node labels, then the Ray version that gated them and where it was read. */
static void append_labels(char **buf, size_t *len, const struct plan_labels *l)
{
    append_list(buf, len, l->passed ? "node labels:" : "node labels (not passed):", &l->labels);
    if (l->ray.version[0])
        append(buf, len, "ray version:      %s (from %s)\n", l->ray.version, l->ray.from);
    else
        append(buf, len, "ray version:      unknown (%s)\n", l->ray.why);
    for (size_t i = 0; i < l->notes.len; i++)
        append(buf, len, "note:             %s\n", l->notes.items[i]);
}

static void workers_from_text(const struct plan *p, char *out, size_t cap)
{
    const char *from = p->workers_from;
    const struct jobset_pod *j = &p->jobset;
    if (!from)
        snprintf(out, cap, "source unknown");
    else if (strcmp(from, "volcano") == 0)
        snprintf(out, cap, "every Volcano task but the head and the submitter");
    else if (strcmp(from, "--worker") == 0)
        snprintf(out, cap, "the tasks --worker names");
    else if (strcmp(from, "LWS_GROUP_SIZE") == 0)
        snprintf(out, cap, "LWS_GROUP_SIZE=%ld, less the leader", p->lws.size);
    else if (strcmp(from, "jobset") == 0)
        snprintf(out, cap, "(global-replicas %ld - the head's 1 Job) x %ld pod%s per Job (%s)", j->global_replicas,
                 j->pods_per_job, j->pods_per_job == 1 ? "" : "s",
                 strcmp(j->pods_per_job_from, "default") == 0 ? "the default; RAYBOOT_WORKER_PARALLELISM sets it"
                                                              : j->pods_per_job_from);
    else
        snprintf(out, cap, "%s", from);
}

/* The port Ray exports its metrics at: ours, or the user's --metrics-export-port. */
static const char *metrics_port(const struct plan *p)
{
    const char *port = raystart_flag_value(&p->ray_start, "--metrics-export-port");
    return port ? port : "chosen by Ray";
}

char *plan_render_text(const struct plan *p)
{
    size_t len = 0;
    char *buf = calloc(1, 1), from[512];
    struct strv warnings;

    append(&buf, &len, "role:             %s (from %s%s%s)\n", plan_role_name(p->role), plan_source_name(p->source),
           p->role_from[0] ? ": " : "", p->role_from);
    append(&buf, &len, "pod:              %s in namespace %s\n", p->pod_name[0] ? p->pod_name : "?",
           p->namespace_[0] ? p->namespace_ : "?");
    if (p->role != PLAN_ROLE_SUBMITTER)
        append(&buf, &len, "ray node name:    %s\n", p->node_name[0] ? p->node_name : "? (Ray names it by its IP)");
    if (p->job[0])
        append(&buf, &len, "job:              %s, task %s, index %ld\n", p->job, p->task[0] ? p->task : "?", p->index);
    append(&buf, &len, "head:             %s:%d (dashboard %d, client %d)\n", p->head_fqdn, p->head_port,
           p->dashboard_port, p->client_port);
    if (p->head_from[0])
        append(&buf, &len, "head from:        %s\n", p->head_from);
    if (p->lws.found)
        append(&buf, &len,
               "lws:              group %s (index %ld) of LeaderWorkerSet %s, size %ld; this pod is %s %ld\n",
               p->lws.group, p->lws.group_index, p->lws.name, p->lws.size,
               p->lws.worker_index == 0 ? "the leader, index" : "worker", p->lws.worker_index);
    if (p->jobset.found)
        append(&buf, &len,
               "jobset:           %s, replicated job %s (%ld Job%s), Job %ld, pod %ld; %ld Jobs in all; head: "
               "replicated job %s\n",
               p->jobset.name, p->jobset.replicated_job, p->jobset.replicated_job_replicas,
               p->jobset.replicated_job_replicas == 1 ? "" : "s", p->jobset.job_index, p->jobset.pod_index,
               p->jobset.global_replicas, p->jobset.head_job);
    workers_from_text(p, from, sizeof(from));
    if (p->workers_expected >= 0)
        append(&buf, &len, "workers expected: %ld (%s)\n", p->workers_expected, from);
    else
        append(&buf, &len, "workers expected: unknown\n");
    for (size_t i = 0; i < p->ntasks; i++) {
        const struct plan_task *t = &p->tasks[i];
        static const char *const what[] = {[PLAN_TASK_HEAD] = "the head, not counted",
                                           [PLAN_TASK_SUBMITTER] = "the submitter, not counted",
                                           [PLAN_TASK_WORKER] = "a worker group, counted",
                                           [PLAN_TASK_OTHER] = "not named by --worker, not counted"};
        append(&buf, &len, "%-17s %s: %ld host%s, %s%s\n", i == 0 ? "volcano tasks:" : "", t->name, t->hosts,
               t->hosts == 1 ? "" : "s", what[t->kind], t->shared_hostname ? " (one hostname shared by its pods)" : "");
    }
    if (p->role == PLAN_ROLE_SUBMITTER)
        append(&buf, &len, "submits to:       http://%s:%d (the Ray Jobs API)\n", p->head_fqdn, p->dashboard_port);
    if (p->role != PLAN_ROLE_SUBMITTER && p->nofile > 0)
        append(&buf, &len, "open files:       soft limit raised to %ld before ray start (at most the hard limit)\n",
               p->nofile);
    else if (p->role != PLAN_ROLE_SUBMITTER)
        append(&buf, &len, "open files:       limit kept as it is (RAYBOOT_NOFILE=keep)\n");
    if (p->role != PLAN_ROLE_SUBMITTER)
        append(&buf, &len, "metrics:          port %s (Prometheus: http://%s:%s/metrics)\n", metrics_port(p),
               p->pod_ip[0] ? p->pod_ip : "POD_IP", metrics_port(p));
    append_list(&buf, &len, "ray start:", &p->ray_start);
    if (p->role != PLAN_ROLE_SUBMITTER)
        append_labels(&buf, &len, &p->labels);
    append_list(&buf, &len, p->role == PLAN_ROLE_SUBMITTER ? "entrypoint:" : "command:", &p->command);
    append_list(&buf, &len, "env for ray:", &p->ray_env);
    append_list(&buf, &len, "env for command:", &p->command_env);
    shown(&p->warnings, &warnings);
    for (size_t i = 0; i < warnings.len; i++)
        append(&buf, &len, "warning:          %s\n", warnings.items[i]);
    strv_free(&warnings);
    return buf;
}
