/* The planner: reads what the pod was given (explicit settings, Volcano's host lists, an Indexed
 * Job's index, the kubelet's files) and decides role, head and `ray start`. Waiting for the head
 * and running Ray belong to others; nothing here touches the network or spawns anything. */
#include "plan.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "env.h"
#include "fsroot.h"
#include "hosts.h"
#include "plan_platform.h"
#include "podlabels.h"
#include "raystart.h"
#include "resolvconf.h"
#include "volcano.h"

#define SA_NAMESPACE_FILE "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
#define SA_NAMESPACE_MAX_BYTES 256
#define DEFAULT_CLUSTER_DOMAIN "cluster.local"
/* A count or index beyond this is garbage, not a cluster (Volcano's largest jobs are ~10^4). */
#define PLAN_COUNT_MAX 1000000L

/* What the pod knows about itself, gathered before any decision. */
struct pod_view {
    const char *root;
    char hostname[DNS_NAME_MAX_BYTES + 1];
    char fqdn[DNS_NAME_MAX_BYTES + 1];   /* from /etc/hosts; empty when there is none */
    char ip[ADDRESS_HOST_MAX_BYTES];     /* the address on that line; empty when there is none */
};

/* A detected (or explicit) topology, before ray start is built. */
struct detection {
    bool found;
    enum plan_role role;
    char head_host[ADDRESS_HOST_MAX_BYTES];
};

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

static int copy_str(char *dst, size_t cap, const char *src)
{
    int n = snprintf(dst, cap, "%s", src);
    return (n < 0 || (size_t)n >= cap) ? -1 : 0;
}

/* A whole decimal number in 0..PLAN_COUNT_MAX, surrounding whitespace allowed. */
static int parse_count(const char *text, long *out)
{
    char *end;
    long v;
    while (isspace((unsigned char)*text))
        text++;
    if (!isdigit((unsigned char)*text))
        return -1;
    errno = 0;
    v = strtol(text, &end, 10);
    while (isspace((unsigned char)*end))
        end++;
    if (errno || *end || v > PLAN_COUNT_MAX)
        return -1;
    *out = v;
    return 0;
}

static int warn(struct plan *p, struct errbuf *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int warn(struct plan *p, struct errbuf *err, const char *fmt, ...)
{
    char msg[ERRBUF_MAX_BYTES];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return strv_push(&p->warnings, msg) < 0 ? errbuf_set(err, "out of memory") : 0;
}

/* The n-th dot-separated label of name (0-based) into out; -1 when there is none. */
static int label_at(const char *name, int n, char *out, size_t cap)
{
    const char *start = name;
    for (int i = 0; i < n; i++) {
        start = strchr(start, '.');
        if (!start)
            return -1;
        start++;
    }
    size_t len = strcspn(start, ".");
    if (len == 0 || len >= cap)
        return -1;
    memcpy(out, start, len);
    out[len] = '\0';
    return 0;
}

static int read_pod_view(const struct plan_input *in, struct pod_view *pod, struct errbuf *err)
{
    const char *hostname = env_lookup_nonempty(in->envp, "HOSTNAME");
    char *text;
    if (!hostname)
        hostname = in->hostname ? in->hostname : "";
    if (copy_str(pod->hostname, sizeof(pod->hostname), hostname) < 0 ||
        (hostname[0] && !dnsname_valid(hostname, strlen(hostname))))
        return errbuf_set(err, "HOSTNAME=%.80s: not a valid host name", hostname);
    pod->fqdn[0] = '\0';
    if (pod->hostname[0] &&
        fsroot_read(pod->root, "/etc/hosts", HOSTS_FILE_MAX_BYTES, &text, NULL, err) == 0) {
        if (hosts_find_fqdn(text, pod->hostname, pod->fqdn) < 0)
            pod->fqdn[0] = '\0';
        if (hosts_lookup_addr(text, pod->hostname, pod->ip, sizeof(pod->ip)) < 0)
            pod->ip[0] = '\0';
        free(text);
    } else if (pod->hostname[0] && errno != ENOENT) {
        return -1;
    }
    return 0;
}

/* Namespace: the downward API's RAYBOOT_POD_NAMESPACE, else the service-account file, else the
 * pod's FQDN (host.sub.NS.svc...), else the first search domain (NS.svc.<domain>). */
static int find_namespace(const struct plan_input *in, const struct pod_view *pod,
                          const struct resolvconf *rc, struct plan *p, struct errbuf *err)
{
    const char *given = env_lookup_nonempty(in->envp, "RAYBOOT_POD_NAMESPACE");
    char *text = NULL;
    char label[DNS_LABEL_MAX_BYTES + 1];

    if (given) {
        if (!dnsname_label_valid(given, strlen(given)))
            return errbuf_set(err, "RAYBOOT_POD_NAMESPACE=%.80s: not a valid namespace name", given);
        return copy_str(p->namespace_, sizeof(p->namespace_), given);
    }
    if (fsroot_read(pod->root, SA_NAMESPACE_FILE, SA_NAMESPACE_MAX_BYTES, &text, NULL, err) == 0) {
        size_t len = strlen(text);
        while (len > 0 && isspace((unsigned char)text[len - 1]))
            text[--len] = '\0';
        if (!dnsname_label_valid(text, len)) {
            free(text);
            return errbuf_set(err, "%s: not a valid namespace name", SA_NAMESPACE_FILE);
        }
        copy_str(p->namespace_, sizeof(p->namespace_), text);
        free(text);
        return 0;
    }
    if (pod->fqdn[0] && strstr(pod->fqdn, ".svc.") && label_at(pod->fqdn, 2, label, sizeof(label)) == 0 &&
        dnsname_label_valid(label, strlen(label)))
        return copy_str(p->namespace_, sizeof(p->namespace_), label);
    if (rc->nsearch > 0 && label_at(rc->search[0], 1, label, sizeof(label)) == 0 &&
        strcmp(label, "svc") == 0 && label_at(rc->search[0], 0, label, sizeof(label)) == 0)
        return copy_str(p->namespace_, sizeof(p->namespace_), label);
    return 0;
}

/* Cluster domain: RAYBOOT_CLUSTER_DOMAIN, else what follows ".NS.svc." in the pod's FQDN, else
 * the resolv.conf search path, else cluster.local. */
static int find_cluster_domain(const struct plan_input *in, const struct pod_view *pod,
                               const struct resolvconf *rc, struct plan *p, struct errbuf *err)
{
    const char *given = env_lookup_nonempty(in->envp, "RAYBOOT_CLUSTER_DOMAIN");
    const char *svc = pod->fqdn[0] ? strstr(pod->fqdn, ".svc.") : NULL;
    const char *domain = DEFAULT_CLUSTER_DOMAIN;
    if (given) {
        size_t len = strlen(given);
        if (len > 0 && given[len - 1] == '.')
            len--;
        if (!dnsname_valid(given, len))
            return errbuf_set(err, "RAYBOOT_CLUSTER_DOMAIN=%.80s: not a valid domain", given);
        snprintf(p->cluster_domain, sizeof(p->cluster_domain), "%.*s", (int)len, given);
        return 0;
    }
    if (svc && svc[5])
        domain = svc + 5;
    else if (resolvconf_cluster_domain(rc))
        domain = resolvconf_cluster_domain(rc);
    return copy_str(p->cluster_domain, sizeof(p->cluster_domain), domain);
}

/* This pod's IP: the downward API's RAYBOOT_POD_IP, else the kubelet's /etc/hosts line. Ray is
 * given it, because Ray's own guess falls back to 127.0.0.1 when DNS is slow at start-up, and a
 * node the GCS cannot reach is soon declared dead. */
static int find_pod_ip(const struct plan_input *in, const struct pod_view *pod, struct plan *p, struct errbuf *err)
{
    const char *given = env_lookup_nonempty(in->envp, "RAYBOOT_POD_IP");
    unsigned char buf[16];
    if (!given) {
        copy_str(p->pod_ip, sizeof(p->pod_ip), pod->ip);
        return 0;
    }
    if (inet_pton(AF_INET, given, buf) != 1 && inet_pton(AF_INET6, given, buf) != 1)
        return errbuf_set(err, "RAYBOOT_POD_IP=%.60s: not an IP address", given);
    return copy_str(p->pod_ip, sizeof(p->pod_ip), given);
}

/* host ("J-head-0.J") qualified as host.NS.svc.<domain>. */
static int qualify(const struct plan *p, const char *host, char *out, size_t cap)
{
    int n;
    if (!p->namespace_[0])
        n = snprintf(out, cap, "%s", host);
    else
        n = snprintf(out, cap, "%s.%s.svc.%s", host, p->namespace_, p->cluster_domain);
    return (n < 0 || (size_t)n >= cap) ? -1 : 0;
}

static void list_tasks(const struct volcano_tasks *vt, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < vt->ntasks && used < cap; i++) {
        int n = snprintf(out + used, cap - used, "%s%s", i ? ", " : "", vt->tasks[i].key);
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
        if (parse_count(v, &idx) < 0)
            return errbuf_set(err, "%s=%.40s: not a task index (expected a number)", names[i], v);
        if (shared) {
            p->index = idx;
            shared = false;
            continue;
        }
        if (idx != p->index && warn(p, err, "%s=%ld, but HOSTNAME=%s is entry %ld of task %s; using the host list",
                                    names[i], idx, p->pod_name, p->index, p->task) < 0)
            return -1;
    }
    return 0;
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
                              const struct volcano_task *head, const struct volcano_task *submitter,
                              const char *tasks, struct errbuf *err)
{
    const char *list = in->plugin->worker_tasks;
    if (!in->plugin->worker_given)
        return 0;
    for (const char *w = list; *w;) {
        char name[DNS_LABEL_MAX_BYTES + 1];
        size_t n = strcspn(w, ",");
        const struct volcano_task *t;
        snprintf(name, sizeof(name), "%.*s", (int)n, w);
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
static int count_workers(const struct plan_input *in, const struct volcano_tasks *vt,
                         const struct volcano_task *head, const struct volcano_task *submitter,
                         struct plan *p, struct errbuf *err)
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
            warn(p, err, "task %s: VC_*_NUM says %ld but its list has %zu hosts; using the list", task->key,
                 task->declared, task->nhosts) < 0)
            return -1;
        if (pt->shared_hostname && !count_given &&
            warn(p, err, "task %s: its template sets hostname %.*s, so all its pods share that one DNS name and "
                         "Volcano lists it once whatever the replicas; it counts as 1 worker (set "
                         "RAYBOOT_WORKERS_EXPECTED to the real count)",
                 pt->name, (int)strcspn(task->hosts[0], "."), task->hosts[0]) < 0)
            return -1;
    }
    return 0;
}

/* The head task must have a pod: a task scaled to replicas: 0 is no head. Without a head task,
 * only RAYBOOT_HEAD_ADDRESS can say where the head is. */
static int check_head_task(const struct plan_input *in, const struct volcano_tasks *vt,
                           const struct volcano_task *head, const char *tasks, struct plan *p, struct errbuf *err)
{
    bool address = env_lookup_nonempty(in->envp, "RAYBOOT_HEAD_ADDRESS") != NULL;
    if (head && head->nhosts > 0)
        return 0;
    p->workers_expected = -1;
    p->workers_from = NULL;
    if (head && !address)
        return errbuf_set(err, "task %s has no replicas (%s is empty), so the job has no Ray head: set its "
                               "replicas to 1, or name the head task with --head=TASK",
                          in->plugin->head_task, head->list_name);
    if (head)
        return warn(p, err, "task %s has no replicas; the head comes from RAYBOOT_HEAD_ADDRESS", in->plugin->head_task);
    if (!address)
        return errbuf_set(err, "no Volcano task named '%s' in %s (tasks: %s): name the head task "
                               "with --head=TASK (on the command line or in RAYBOOT_PLUGIN_ARGS)",
                          in->plugin->head_task, vt->origin, tasks);
    return warn(p, err, "no Volcano task named '%s' (tasks: %s); the head comes from RAYBOOT_HEAD_ADDRESS",
                in->plugin->head_task, tasks);
}

static int detect_volcano(const struct plan_input *in, const struct pod_view *pod,
                          const struct volcano_tasks *vt, bool role_given, struct plan *p,
                          struct detection *d, struct errbuf *err)
{
    const struct volcano_task *head = volcano_find_task(vt, in->plugin->head_task);
    const char *submitter_name = env_lookup_nonempty(in->envp, "RAYBOOT_SUBMITTER_TASK");
    const struct volcano_task *submitter = volcano_find_task(vt, submitter_name ? submitter_name : "submitter");
    char tasks[512];
    size_t t, i;

    if (submitter_name && !dnsname_label_valid(submitter_name, strlen(submitter_name)))
        return errbuf_set(err, "RAYBOOT_SUBMITTER_TASK=%.80s: not a valid task name (lower-case letters, digits "
                               "and '-', at most 63)", submitter_name);
    list_tasks(vt, tasks, sizeof(tasks));
    if (submitter == head)
        submitter = NULL; /* a head is a head, whatever the submitter task is called */
    if (check_worker_names(in, vt, head, submitter, tasks, err) < 0 ||
        count_workers(in, vt, head, submitter, p, err) < 0 || check_head_task(in, vt, head, tasks, p, err) < 0)
        return -1;
    if (head && head->nhosts > 0) {
        copy_str(d->head_host, sizeof(d->head_host), head->hosts[0]);
        label_at(head->hosts[0], 1, p->job, sizeof(p->job));
        plan_evidence(p->head_from, "%s", head->list_name);
    }
    if (volcano_find_host(vt, pod->hostname, &t, &i) < 0) {
        if (!role_given)
            return errbuf_set(err, "HOSTNAME=%s is in no Volcano task host list in %s (tasks: %s): "
                                   "set RAYBOOT_ROLE=head|worker, or check the pod's hostname",
                              pod->hostname, vt->origin, tasks);
        return warn(p, err, "HOSTNAME=%s is in no Volcano task host list (tasks: %s); using RAYBOOT_ROLE",
                    pod->hostname, tasks);
    }
    task_name(vt->tasks[t].key, p->task, sizeof(p->task));
    p->index = (long)i;
    plan_evidence(p->role_from, "%s (entry %zu)", vt->tasks[t].list_name, i);
    label_at(vt->tasks[t].hosts[i], 1, p->job, sizeof(p->job));
    d->found = true;
    if (cross_check_index(in, p->tasks[t].shared_hostname, p, err) < 0)
        return -1;
    if (&vt->tasks[t] == head) {
        if (p->index != 0 && !role_given)
            return errbuf_set(err, "this pod (HOSTNAME=%s) is replica %ld of task %s, but a Ray cluster has one "
                                   "head: set the head task's replicas to 1",
                              pod->hostname, p->index, p->task);
        d->role = PLAN_ROLE_HEAD;
    } else {
        d->role = &vt->tasks[t] == submitter ? PLAN_ROLE_SUBMITTER : PLAN_ROLE_WORKER;
    }
    return 0;
}

static int detect_indexed_job(const struct plan_input *in, const struct pod_view *pod,
                              const char *index_text, bool explicit_head, struct plan *p,
                              struct detection *d, struct errbuf *err)
{
    char suffix[32], subdomain[DNS_LABEL_MAX_BYTES + 1];
    size_t host_len = strlen(pod->hostname), suffix_len;
    (void)in;

    if (parse_count(index_text, &p->index) < 0)
        return errbuf_set(err, "JOB_COMPLETION_INDEX=%.40s: not an index (expected a number)", index_text);
    suffix_len = (size_t)snprintf(suffix, sizeof(suffix), "-%ld", p->index);
    if (host_len <= suffix_len || strcmp(pod->hostname + host_len - suffix_len, suffix) != 0 ||
        host_len - suffix_len > DNS_LABEL_MAX_BYTES)
        return errbuf_set(err, "HOSTNAME=%s does not end in %s (JOB_COMPLETION_INDEX=%ld): an Indexed "
                               "Job's hostname is <job>-<index>",
                          pod->hostname, suffix, p->index);
    memcpy(p->job, pod->hostname, host_len - suffix_len);
    p->job[host_len - suffix_len] = '\0';
    d->found = true;
    plan_evidence(p->role_from, "JOB_COMPLETION_INDEX=%ld", p->index);
    d->role = p->index == 0 ? PLAN_ROLE_HEAD : PLAN_ROLE_WORKER;
    if (!pod->fqdn[0] || label_at(pod->fqdn, 1, subdomain, sizeof(subdomain)) < 0) {
        if (explicit_head || d->role == PLAN_ROLE_HEAD)
            return 0;
        return errbuf_set(err, "/etc/hosts has no fully qualified name for HOSTNAME=%s, so the head's "
                               "name is unknown: give the Indexed Job's pods a subdomain (a headless "
                               "Service), or set RAYBOOT_HEAD_ADDRESS=host:port",
                          pod->hostname);
    }
    if (snprintf(d->head_host, sizeof(d->head_host), "%s-0.%s", p->job, subdomain) >= (int)sizeof(d->head_host))
        return errbuf_set(err, "HOSTNAME=%s: head name too long", pod->hostname);
    plan_evidence(p->head_from, "/etc/hosts (subdomain %s)", subdomain);
    if (jobset_hostname_pattern(pod->hostname, subdomain))
        return warn(p, err, "HOSTNAME=%s looks like a JobSet pod's (<jobset>-<replicated job>-<job>-<index>, subdomain "
                            "%s), but %s is missing: rayboot sees an Indexed Job, and every Job becomes a Ray cluster "
                            "of its own; mount the downward API's metadata.labels there",
                    pod->hostname, subdomain, PODLABELS_FILE);
    return 0;
}

static int parse_role(const char *text, enum plan_role *role, struct errbuf *err)
{
    if (strcmp(text, "head") == 0)
        *role = PLAN_ROLE_HEAD;
    else if (strcmp(text, "worker") == 0)
        *role = PLAN_ROLE_WORKER;
    else if (strcmp(text, "submitter") == 0)
        *role = PLAN_ROLE_SUBMITTER;
    else
        return errbuf_set(err, "RAYBOOT_ROLE=%.40s: expected head, worker or submitter", text);
    return 0;
}

/* Decides role, source and head, with explicit settings winning over detection. */
static int decide(const struct plan_input *in, const struct pod_view *pod, struct plan *p,
                  struct errbuf *err)
{
    const char *role_text = env_lookup_nonempty(in->envp, "RAYBOOT_ROLE");
    const char *address = env_lookup_nonempty(in->envp, "RAYBOOT_HEAD_ADDRESS");
    const char *index_text = env_lookup_nonempty(in->envp, "JOB_COMPLETION_INDEX");
    struct volcano_tasks vt;
    const char *volcano_origin = NULL;
    struct detection d = {0};
    enum plan_role explicit_role = PLAN_ROLE_WORKER;
    char host[ADDRESS_HOST_MAX_BYTES];
    int port = in->plugin->port, found;

    if (role_text && parse_role(role_text, &explicit_role, err) < 0)
        return -1;
    if (address && address_parse(address, host, &port, err) < 0)
        return errbuf_prefix(err, "RAYBOOT_HEAD_ADDRESS=%.80s", address);

    found = volcano_load(pod->root, in->envp, &vt, err);
    if (found < 0)
        return -1;
    if (found > 0) {
        p->source = PLAN_SOURCE_VOLCANO;
        volcano_origin = vt.origin;
        int rc = detect_volcano(in, pod, &vt, role_text != NULL, p, &d, err);
        volcano_tasks_free(&vt);
        if (rc < 0)
            return -1;
    } else if ((found = plan_platform_detect(in, pod->root, pod->hostname, pod->fqdn, role_text != NULL,
                                             address != NULL, p, &d.role, d.head_host, err)) != 0) {
        if (found < 0)
            return -1;
        d.found = true;
    } else if (index_text) {
        p->source = PLAN_SOURCE_INDEXED_JOB;
        if (detect_indexed_job(in, pod, index_text, address != NULL, p, &d, err) < 0)
            return -1;
    } else if (!role_text) {
        return errbuf_set(err, "cannot tell whether this pod is the Ray head or a worker: set "
                               "RAYBOOT_ROLE=head or RAYBOOT_ROLE=worker (with RAYBOOT_HEAD_ADDRESS=host:port), "
                               "or run it in a Volcano Job with the svc plugin, a LeaderWorkerSet (LWS_*), a "
                               "JobSet (its labels at %s) or an Indexed Job (JOB_COMPLETION_INDEX)",
                               PODLABELS_FILE);
    }
    if (d.found && plan_platform_warn_others(in, pod->root, volcano_origin, index_text, p, err) < 0)
        return -1;

    p->role = d.role;
    if (role_text) {
        if (d.found && d.role != explicit_role &&
            warn(p, err, "RAYBOOT_ROLE=%s, but %s says this pod is a %s; keeping RAYBOOT_ROLE", role_text,
                 plan_source_name(p->source), plan_role_name(d.role)) < 0)
            return -1;
        p->role = explicit_role;
        p->source = PLAN_SOURCE_EXPLICIT;
        plan_evidence(p->role_from, "RAYBOOT_ROLE=%s", role_text);
    }

    p->head_port = port;
    if (address) {
        if (d.head_host[0] && strcmp(d.head_host, host) != 0 &&
            warn(p, err, "RAYBOOT_HEAD_ADDRESS=%s overrides the detected head %s", address, d.head_host) < 0)
            return -1;
        if (in->plugin->port_given && in->plugin->port != port &&
            warn(p, err, "RAYBOOT_HEAD_ADDRESS port %d overrides --port=%d", port, in->plugin->port) < 0)
            return -1;
        copy_str(p->head_host, sizeof(p->head_host), host);
        copy_str(p->head_fqdn, sizeof(p->head_fqdn), host);
        plan_evidence(p->head_from, "RAYBOOT_HEAD_ADDRESS=%s", address);
        if (!d.found && !role_text)
            p->source = PLAN_SOURCE_EXPLICIT;
        return 0;
    }
    if (d.head_host[0]) {
        copy_str(p->head_host, sizeof(p->head_host), d.head_host);
        if (qualify(p, d.head_host, p->head_fqdn, sizeof(p->head_fqdn)) < 0)
            return errbuf_set(err, "head name %s.%s.svc.%s is too long", d.head_host, p->namespace_,
                              p->cluster_domain);
        return 0;
    }
    if (p->role != PLAN_ROLE_HEAD)
        return errbuf_set(err, "RAYBOOT_ROLE=%s needs RAYBOOT_HEAD_ADDRESS=host:port: nothing else here "
                               "names the head", plan_role_name(p->role));
    /* A head that found no name for itself is known by its own. */
    plan_evidence(p->head_from, "HOSTNAME=%s (this pod, the head)", pod->hostname);
    copy_str(p->head_host, sizeof(p->head_host), pod->hostname);
    copy_str(p->head_fqdn, sizeof(p->head_fqdn), pod->fqdn[0] ? pod->fqdn : pod->hostname);
    return 0;
}

/* --num-cpus, --memory from cgroup v1 or v2 (lib/cgroup.c); --num-gpus from
 * NVIDIA_VISIBLE_DEVICES. Missing files (the root cgroup, no limit) leave the choice to Ray;
 * unreadable or odd ones too, with a warning naming the file: they are the kernel's, not the
 * user's. */
static int read_resources(const struct plan_input *in, const struct pod_view *pod, struct plan *p,
                          struct raystart_input *rs, struct errbuf *err)
{
    const char *gpus = env_lookup(in->envp, "NVIDIA_VISIBLE_DEVICES");
    struct cgroup_limits limits;

    if (cgroup_read_limits(pod->root, &limits, &p->warnings) < 0)
        return errbuf_set(err, "out of memory");
    rs->num_cpus = limits.cpus;
    rs->memory_bytes = limits.memory_bytes;
    rs->num_gpus = -1;
    /* A device list ("0,1" or GPU UUIDs) says how many; "all", "none" and "void" leave Ray's own
     * detection to count what is really there. */
    if (gpus && *gpus && strcmp(gpus, "all") != 0 && strcmp(gpus, "none") != 0 && strcmp(gpus, "void") != 0) {
        rs->num_gpus = 1;
        for (const char *c = gpus; *c; c++)
            rs->num_gpus += *c == ',';
    }
    return 0;
}

static int build_env(const struct plan_input *in, struct plan *p)
{
    int rc = 0;
    const char *node_type = p->task[0] ? p->task : plan_role_name(p->role);
    /* What the user set themselves wins: only missing variables are added. */
    if (!env_lookup(in->envp, "RAY_CLOUD_INSTANCE_ID"))
        rc |= strv_pushf(&p->ray_env, "RAY_CLOUD_INSTANCE_ID=%s", p->pod_name);
    if (!env_lookup(in->envp, "RAY_NODE_TYPE_NAME"))
        rc |= strv_pushf(&p->ray_env, "RAY_NODE_TYPE_NAME=%s", node_type);
    if (!env_lookup(in->envp, "RAY_ADDRESS")) {
        if (p->role == PLAN_ROLE_HEAD)
            rc |= strv_pushf(&p->command_env, "RAY_ADDRESS=127.0.0.1:%d", p->head_port);
        else
            rc |= strv_pushf(&p->command_env, "RAY_ADDRESS=%s:%d", p->head_fqdn, p->head_port);
    }
    return rc ? -1 : 0;
}

int plan_plugin_args(const char *const *envp, struct plugin_args *pa, struct errbuf *err)
{
    const char *list = env_lookup(envp, "RAYBOOT_PLUGIN_ARGS");
    plugin_args_init(pa);
    if (list && plugin_args_parse_list(pa, list, err) < 0)
        return errbuf_prefix(err, "RAYBOOT_PLUGIN_ARGS");
    return 0;
}

static void plan_init(struct plan *p)
{
    memset(p, 0, sizeof(*p));
    p->index = -1;
    p->workers_expected = -1;
    strv_init(&p->ray_start);
    strv_init(&p->command);
    strv_init(&p->ray_env);
    strv_init(&p->command_env);
    strv_init(&p->warnings);
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
}

int plan_build(const struct plan_input *in, struct plan *p, struct errbuf *err)
{
    struct pod_view pod = {0};
    struct resolvconf rc;
    struct raystart_input rs = {0};
    const char *workers = env_lookup_nonempty(in->envp, "RAYBOOT_WORKERS_EXPECTED");
    const char *pod_name = env_lookup_nonempty(in->envp, "RAYBOOT_POD_NAME");
    char *text;

    plan_init(p);
    pod.root = env_lookup_nonempty(in->envp, "RAYBOOT_ROOT");
    if (read_pod_view(in, &pod, err) < 0)
        return -1;
    memset(&rc, 0, sizeof(rc));
    if (fsroot_read(pod.root, "/etc/resolv.conf", RESOLVCONF_FILE_MAX_BYTES, &text, NULL, err) == 0) {
        resolvconf_parse(text, &rc);
        free(text);
    }
    if (find_namespace(in, &pod, &rc, p, err) < 0 || find_cluster_domain(in, &pod, &rc, p, err) < 0)
        return -1;
    /* A pod name is an RFC 1123 name; the sidecar puts it in an API URL path, Ray in an id. */
    if (pod_name && !dnsname_valid(pod_name, strlen(pod_name)))
        return errbuf_set(err, "RAYBOOT_POD_NAME=%.80s: not a valid pod name (the downward API's metadata.name)",
                          pod_name);
    copy_str(p->pod_name, sizeof(p->pod_name), pod_name ? pod_name : pod.hostname);
    if (find_pod_ip(in, &pod, p, err) < 0)
        return -1;
    p->dashboard_port = in->plugin->dashboard_port;
    p->client_port = in->plugin->client_port;
    if (decide(in, &pod, p, err) < 0)
        return -1;
    if (workers && parse_count(workers, &p->workers_expected) < 0)
        return errbuf_set(err, "RAYBOOT_WORKERS_EXPECTED=%.40s: not a count (expected a number)", workers);
    if (workers)
        p->workers_from = "RAYBOOT_WORKERS_EXPECTED";

    for (int i = 0; i < in->command_argc; i++) {
        if (strv_push(&p->command, in->command[i]) < 0)
            return errbuf_set(err, "out of memory");
    }
    if (build_env(in, p) < 0)
        return errbuf_set(err, "out of memory");
    if (p->role == PLAN_ROLE_SUBMITTER)
        return 0;
    if (read_resources(in, &pod, p, &rs, err) < 0)
        return -1;
    rs.ray = env_lookup_nonempty(in->envp, "RAYBOOT_RAY");
    if (!rs.ray)
        rs.ray = "ray";
    rs.head = p->role == PLAN_ROLE_HEAD;
    rs.head_fqdn = p->head_fqdn;
    rs.node_ip = p->pod_ip[0] ? p->pod_ip : NULL;
    rs.port = p->head_port;
    rs.dashboard_port = p->dashboard_port;
    rs.client_port = p->client_port;
    rs.user_args = env_lookup_nonempty(in->envp, "RAYBOOT_RAY_START_ARGS");
    return raystart_build(&rs, &p->ray_start, &p->warnings, err);
}

/* An Indexed Job has one pod template for every index, and a LeaderWorkerSet without a
 * leaderTemplate makes its leaders from the workerTemplate, so there a worker is given the head's
 * command and leaves it to the head (the run drops it). The message says what made the role. */
int plan_check_command(const struct plan *p, struct errbuf *err)
{
    char why[DNS_LABEL_MAX_BYTES + 96];
    if (p->source == PLAN_SOURCE_EXPLICIT)
        snprintf(why, sizeof(why), "RAYBOOT_ROLE=%s", plan_role_name(p->role));
    else if (p->role == PLAN_ROLE_SUBMITTER)
        snprintf(why, sizeof(why), "task %s, the one RAYBOOT_SUBMITTER_TASK names (default submitter)", p->task);
    else
        snprintf(why, sizeof(why), "task %s; the head task is the one --head names", p->task);
    if (p->role == PLAN_ROLE_SUBMITTER && p->command.len == 0)
        return errbuf_set(err, "this pod is the submitter (%s): give the job's entrypoint after -- (rayboot -- "
                               "python job.py)", why);
    if (p->role == PLAN_ROLE_WORKER && p->command.len > 0 && p->source != PLAN_SOURCE_INDEXED_JOB &&
        p->source != PLAN_SOURCE_LWS)
        return errbuf_set(err, "a command was given, but this pod is a worker (%s): commands run on the head", why);
    return 0;
}
