/* The planner's decision: explicit settings (RAYBOOT_ROLE, RAYBOOT_HEAD_ADDRESS, the plugin's flags)
 * over what detection found (detect.c) about the pod (podview.c), then the head's name, the
 * environment and `ray start`. Waiting for the head and running Ray belong to others; nothing
 * here touches the network or spawns anything. */
#include "plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "detect.h"
#include "env.h"
#include "fsroot.h"
#include "nofile.h"
#include "podview.h"
#include "raylabels.h"
#include "raystart.h"
#include "resolvconf.h"
#include "shm.h"
#include "text.h"

static int copy_str(char *dst, size_t cap, const char *src)
{
    int n = snprintf(dst, cap, "%s", src);
    return (n < 0 || (size_t)n >= cap) ? -1 : 0;
}

/* host ("J-head-0.J") qualified as host.NS.svc.<domain>. */
static int qualify(const struct plan *p, const char *host, char *out, size_t cap)
{
    int n;
    if (!p->namespace_[0])
        n = snprintf(out, cap, "%s", host);
    else
        n = text_format(out, cap, "%s.%s.svc.%s", host, p->namespace_, p->cluster_domain);
    return (n < 0 || (size_t)n >= cap) ? -1 : 0;
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

/* The head's address: RAYBOOT_HEAD_ADDRESS (host, port) over the detected head, else the detected
 * head qualified, else a head's own name. */
static int choose_head(const struct plan_input *in, const struct pod_view *pod, const char *address, const char *host,
                       int port, const char *role_text, const struct detection *d, struct plan *p, struct errbuf *err)
{
    p->head_port = port;
    if (address) {
        if (d->head_host[0] && strcmp(d->head_host, host) != 0 &&
            plan_warn(p, err, "RAYBOOT_HEAD_ADDRESS=%s overrides the detected head %s", address, d->head_host) < 0)
            return -1;
        if (in->plugin->port_given && in->plugin->port != port &&
            plan_warn(p, err, "RAYBOOT_HEAD_ADDRESS port %d overrides --port=%d", port, in->plugin->port) < 0)
            return -1;
        copy_str(p->head_host, sizeof(p->head_host), host);
        copy_str(p->head_fqdn, sizeof(p->head_fqdn), host);
        plan_evidence(p->head_from, "RAYBOOT_HEAD_ADDRESS=%s", address);
        if (!d->found && !role_text)
            p->source = PLAN_SOURCE_EXPLICIT;
        return 0;
    }
    if (d->head_host[0]) {
        copy_str(p->head_host, sizeof(p->head_host), d->head_host);
        if (qualify(p, d->head_host, p->head_fqdn, sizeof(p->head_fqdn)) < 0)
            return errbuf_set(err, "head name %s.%s.svc.%s is too long", d->head_host, p->namespace_,
                              p->cluster_domain);
        return 0;
    }
    if (p->role != PLAN_ROLE_HEAD)
        return errbuf_set(err,
                          "RAYBOOT_ROLE=%s needs RAYBOOT_HEAD_ADDRESS=host:port: nothing else here "
                          "names the head",
                          plan_role_name(p->role));
    /* A head that found no name for itself is known by its own. */
    plan_evidence(p->head_from, "HOSTNAME=%s (this pod, the head)", pod->hostname);
    copy_str(p->head_host, sizeof(p->head_host), pod->hostname);
    copy_str(p->head_fqdn, sizeof(p->head_fqdn), pod->fqdn[0] ? pod->fqdn : pod->hostname);
    return 0;
}

/* Decides role, source and head, with explicit settings winning over detection. */
static int decide(const struct plan_input *in, const struct pod_view *pod, struct plan *p, struct errbuf *err)
{
    const char *role_text = env_lookup_nonempty(in->envp, "RAYBOOT_ROLE");
    const char *address = env_lookup_nonempty(in->envp, "RAYBOOT_HEAD_ADDRESS");
    struct detection d = {0};
    enum plan_role explicit_role = PLAN_ROLE_WORKER;
    char host[ADDRESS_HOST_MAX_BYTES];
    int port = in->plugin->port;

    if (role_text && parse_role(role_text, &explicit_role, err) < 0)
        return -1;
    if (address && address_parse(address, host, &port, err) < 0)
        return errbuf_prefix(err, "RAYBOOT_HEAD_ADDRESS=%.80s", address);
    if (detect_source(in, pod, role_text != NULL, address != NULL, p, &d, err) < 0)
        return -1;

    p->role = d.role;
    if (role_text) {
        if (d.found && d.role != explicit_role &&
            plan_warn(p, err, "RAYBOOT_ROLE=%s, but %s says this pod is a %s; keeping RAYBOOT_ROLE", role_text,
                      plan_source_name(p->source), plan_role_name(d.role)) < 0)
            return -1;
        p->role = explicit_role;
        p->source = PLAN_SOURCE_EXPLICIT;
        plan_evidence(p->role_from, "RAYBOOT_ROLE=%s", role_text);
    }
    return choose_head(in, pod, address, host, port, role_text, &d, p, err);
}

/* --num-cpus, --memory from cgroup v1 or v2 (lib/plan/cgroup.c); --num-gpus from
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

/* The user's --node-name (RAYBOOT_RAY_START_ARGS) is the one Ray registers: the drain must look
 * for that one. */
static int own_node_name(struct plan *p, struct errbuf *err)
{
    const char *given = raystart_flag_value(&p->ray_start, "--node-name");
    if (!given || strcmp(given, p->node_name) == 0)
        return 0;
    if (!given[0] || copy_str(p->node_name, sizeof(p->node_name), given) < 0)
        return errbuf_set(err, "RAYBOOT_RAY_START_ARGS: --node-name=%.80s: not a node name (1 to %d bytes)", given,
                          DNS_NAME_MAX_BYTES);
    return 0;
}

int plan_build(const struct plan_input *in, struct plan *p, struct errbuf *err)
{
    struct pod_view pod;
    struct resolvconf rc;
    struct raystart_input rs = {0};
    const char *workers = env_lookup_nonempty(in->envp, "RAYBOOT_WORKERS_EXPECTED");
    char *text;

    plan_init(p);
    if (podview_read(&pod, env_lookup_nonempty(in->envp, "RAYBOOT_ROOT"), in->envp, in->hostname, err) < 0)
        return -1;
    memset(&rc, 0, sizeof(rc));
    if (fsroot_read(pod.root, "/etc/resolv.conf", RESOLVCONF_FILE_MAX_BYTES, &text, NULL, err) == 0) {
        resolvconf_parse(text, &rc);
        free(text);
    }
    if (podview_namespace(&pod, in->envp, &rc, p->namespace_, err) < 0 ||
        podview_cluster_domain(&pod, in->envp, &rc, p->cluster_domain, err) < 0)
        return -1;
    if (podview_pod_name(&pod, in->envp, p->pod_name, err) < 0 || podview_pod_ip(&pod, in->envp, p->pod_ip, err) < 0 ||
        podview_node_name(&pod, in->envp, p->node_name, err) < 0)
        return -1;
    p->dashboard_port = in->plugin->dashboard_port;
    p->client_port = in->plugin->client_port;
    if (decide(in, &pod, p, err) < 0)
        return -1;
    if (workers && env_parse_count(workers, PLAN_COUNT_MAX, &p->workers_expected) < 0)
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
    if (nofile_parse(in->envp, &p->nofile, err) < 0)
        return -1;
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
    rs.metrics_export_port = RAYSTART_METRICS_EXPORT_PORT;
    rs.node_name = p->node_name;
    rs.user_args = env_lookup_nonempty(in->envp, "RAYBOOT_RAY_START_ARGS");
    if (raystart_build(&rs, &p->ray_start, &p->warnings, err) < 0 || own_node_name(p, err) < 0)
        return -1;
    if (raylabels_plan(in->envp, pod.root, rs.ray, p, err) < 0)
        return -1;
    if (in->check_shm && shm_check(pod.root, rs.memory_bytes, &p->ray_start, &p->warnings) < 0)
        return errbuf_set(err, "out of memory");
    return 0;
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
        return errbuf_set(err,
                          "this pod is the submitter (%s): give the job's entrypoint after -- (rayboot -- "
                          "python job.py)",
                          why);
    if (p->role == PLAN_ROLE_WORKER && p->command.len > 0 && p->source != PLAN_SOURCE_INDEXED_JOB &&
        p->source != PLAN_SOURCE_LWS)
        return errbuf_set(err, "a command was given, but this pod is a worker (%s): commands run on the head", why);
    return 0;
}
