/* The life of a Ray pod, start to end, in one place: plan, signals, prober; then by role the
 * head (Ray, its GCS, the workers, the command), a worker (the head, then Ray) or the submitter
 * (the cluster, then the job); then supervise.c until the last child is gone; then the
 * termination log. What each phase does to the pod's processes is pod.c's. */
#include "run.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "env.h"
#include "exitcode.h"
#include "log.h"
#include "nofile.h"
#include "pod.h"
#include "proc.h"
#include "rayauth.h"
#include "raytls.h"
#include "rdvauth.h"
#include "submit.h"
#include "storeclean.h"
#include "supervise.h"
#include "termlog.h"
#include "tlsfiles.h"

/* The head's own GCS: on loopback, it answers within seconds of ray start or never. */
#define OWN_GCS_ADDR "127.0.0.1"

/* A wait that failed, as the pod's exit code: a refused token is the pod's configuration. */
static int wait_exit_code(enum wait_result res)
{
    if (res == WAIT_DEADLINE)
        return EXIT_WAIT_DEADLINE;
    return res == WAIT_UNAUTHENTICATED ? EXIT_CONFIG : EXIT_SOFTWARE;
}

/* A worker: wait for the head, then join it (pod_join_head: Ray, and the version read around it). */
static int start_worker(struct pod *pod)
{
    struct errbuf err;
    enum wait_result res = pod_wait_gcs(pod, pod->plan.head_fqdn, pod->settings.wait_timeout_ms, false, &err);
    if (res == WAIT_DEADLINE || res == WAIT_UNAUTHENTICATED) {
        log_error("%s", err.msg);
        pod_end_reason(pod, "%s", err.msg);
        pod->exit_code = res == WAIT_DEADLINE ? EXIT_WAIT_DEADLINE : EXIT_CONFIG;
        return -1;
    }
    if (res != WAIT_READY) {
        if (res == WAIT_PROBER_DIED) {
            log_error("%s", err.msg);
            pod_end_reason(pod, "%s", err.msg);
        } else {
            pod_end_reason(pod, "SIGTERM while waiting for the head");
        }
        pod->exit_code = res == WAIT_STOPPED ? pod->settings.eviction_exit_code : EXIT_SOFTWARE;
        return -1;
    }
    return pod_join_head(pod);
}

/* The head: start Ray, wait for its GCS and, when it will run a command, for the workers. */
static int start_head(struct pod *pod)
{
    struct errbuf err;
    enum wait_result res;
    /* Listening before Ray starts: workers that come early hold a connection, not a poll; a
     * port taken ends the pod before anything runs. */
    storeclean_check((const char *const *)pod->ray_env.items);
    if (pod_rendezvous_start(pod) < 0 || pod_start_ray(pod) < 0)
        return -1;
    res = pod_wait_gcs(pod, OWN_GCS_ADDR, pod->settings.wait_timeout_ms, false, &err);
    /* The workers first (its own Health/Check said SERVING), then its own version read: every
     * RPC made before the write is paid by every waiting worker's join. */
    if (res == WAIT_READY) {
        pod_rendezvous_serving(pod);
        res = pod_read_ray_version(pod, &err);
    }
    if (res == WAIT_READY) {
        pod_note_cluster_id(pod);
        rendezvous_cluster_id(&pod->rendezvous, pod->cluster_id); /* FINISHED's tag is over it */
        if (pod->plan.command.len > 0 && pod->plan.workers_expected > 0)
            pod_wait_workers(pod, OWN_GCS_ADDR);
        if (pod->plan.command.len > 0 && !pod->term_requested && !pod->ray_exited && pod_start_command(pod) < 0)
            pod_end(pod, pod->exit_code, pod->settings.grace_period_ms);
        return 0;
    }
    /* A dead Ray or a SIGTERM (WAIT_STOPPED) is the supervisor's to sort out. */
    if (res != WAIT_STOPPED) {
        log_error("%s", err.msg);
        pod_end_reason(pod, "%s", err.msg);
        pod_end(pod, wait_exit_code(res), pod->settings.grace_period_ms);
    }
    return 0;
}

/* The submitter: the job's settings first (a bad one exits 2 at once), then the cluster (the
 * head's GCS, the expected workers), then the job through the dashboard at the address that
 * answered. Returns the exit code. */
static int run_submitter(struct pod *pod, const char *const *envp)
{
    const struct plan *p = &pod->plan;
    struct submit_config c = {
        .argv = p->command.items, .argc = (int)p->command.len, .url_from = "the head's dashboard"};
    char url[ADDRESS_HOST_MAX_BYTES + 32], derived[JOBSAPI_ID_MAX_BYTES] = "", meta[3][320];
    const char *const keys[3] = {"rayboot.pod", "rayboot.job", "rayboot.namespace"};
    const char *const values[3] = {p->pod_name, p->job, p->namespace_};
    struct wait_stop stop = pod_waiter(pod, POD_WAKE_ON_STOP);
    struct errbuf err;
    enum wait_result res;
    size_t n = 0;
    int rc;

    if (submit_check_entrypoint(c.argv, c.argc, &err) < 0) {
        log_error("%s", err.msg);
        return EXIT_CONFIG;
    }
    /* One job per Volcano Job: its name (and namespace) is what stays the same when the pod restarts. */
    if (p->job[0])
        snprintf(derived, sizeof(derived), "rayboot-%.40s-%.60s", p->namespace_[0] ? p->namespace_ : "default", p->job);
    if (submit_config_load(&c, envp, p->job[0] ? derived : NULL, &err) < 0) {
        log_error("%s", err.msg);
        submit_config_free(&c);
        return EXIT_CONFIG;
    }
    for (size_t i = 0; i < 3; i++) {
        if (!values[i][0])
            continue;
        snprintf(meta[n], sizeof(meta[n]), "%s=%.256s", keys[i], values[i]);
        c.metadata[n] = meta[n];
        n++;
    }
    c.wait_timeout_ms = pod->settings.wait_timeout_ms;
    c.head_loss_timeout_ms = pod->settings.head_loss_timeout_ms;
    c.grace_period_ms = pod->settings.grace_period_ms;
    c.stop = &stop;

    res = pod_wait_gcs(pod, p->head_fqdn, pod->settings.wait_timeout_ms, false, &err);
    if (res == WAIT_READY)
        res = pod_read_ray_version(pod, &err);
    if (res != WAIT_READY) {
        if (res != WAIT_STOPPED)
            log_error("%s", err.msg);
        submit_config_free(&c);
        return res == WAIT_STOPPED ? EXIT_JOB_STOPPED : wait_exit_code(res);
    }
    if (p->workers_expected > 0)
        pod_wait_workers(pod, pod->gcs_addr);
    /* The address that answered, not the name: the same head, whatever DNS says next. */
    snprintf(url, sizeof(url), strchr(pod->gcs_addr, ':') ? "http://[%s]:%d" : "http://%s:%d", pod->gcs_addr,
             p->dashboard_port);
    c.url = url;
    rc = pod->term_requested ? EXIT_JOB_STOPPED : submit_job(&c);
    submit_config_free(&c);
    return rc;
}

/* Ray's node labels: which, or why ray start does not get them (lib/plan/raylabels.c). */
static void log_labels(const struct plan_labels *l)
{
    if (l->passed)
        log_info("Ray %s (%s) takes node labels: %zu passed to ray start", l->ray.version, l->ray.from, l->labels.len);
    for (size_t i = 0; i < l->notes.len; i++)
        log_info("%s", l->notes.items[i]);
}

static void log_plan(const struct plan *p)
{
    log_info("%s of %s%s (from %s%s%s); head %s:%d%s%s%s; %ld workers expected%s", plan_role_name(p->role),
             p->job[0] ? "job " : "", p->job[0] ? p->job : "a Ray cluster", plan_source_name(p->source),
             p->role_from[0] ? ": " : "", p->role_from, p->head_fqdn, p->head_port, p->head_from[0] ? " (" : "",
             p->head_from, p->head_from[0] ? ")" : "", p->workers_expected < 0 ? 0 : p->workers_expected,
             p->command.len ? "; will run the command" : "");
    for (size_t i = 0; i < p->warnings.len; i++)
        log_warn("%s", p->warnings.items[i]);
    log_labels(&p->labels);
}

/* Ray's own drain on SIGTERM (Ray 2.5x and later) would wait up to 30 s for an idle node, the
 * whole default grace period. rayboot drains the node itself, so Ray's is switched off. */
static int build_envs(struct pod *pod, const char *const *envp, const struct rayauth *auth)
{
    struct strv add;
    int rc = 0;
    strv_init(&add);
    for (size_t i = 0; i < pod->plan.ray_env.len; i++)
        rc |= strv_push(&add, pod->plan.ray_env.items[i]);
    if (!env_lookup(envp, "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S"))
        rc |= strv_push(&add, "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S=0");
    /* RAY_AUTH_MODE unset and a token found: `ray start --head` turns token mode on by itself,
     * a worker's `ray start` and a command's `ray.init(address=...)` would not; the pods agree. */
    if (auth->enable_for_ray)
        rc |= strv_push(&add, "RAY_AUTH_MODE=token");
    rc |= env_merge(envp, &add, &pod->ray_env);
    for (size_t i = 0; i < pod->plan.command_env.len; i++)
        rc |= strv_push(&add, pod->plan.command_env.items[i]);
    rc |= env_merge(envp, &add, &pod->cmd_env);
    strv_free(&add);
    return rc ? -1 : 0;
}

/* Ray needs far more descriptors than a runtime's default soft limit (containerd 2.x: 1,024),
 * and with no shell nothing runs `ulimit -n` (KubeRay does): rayboot raises its own soft limit,
 * which Ray and the command inherit. A hard limit below the target caps it, with a warning; a
 * failure is only a warning: Ray may still run. */
static void raise_nofile(long target)
{
    struct rlimit rl;
    unsigned long long soft;
    int clamped;
    if (target <= 0)
        return;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
        log_warn("getrlimit(RLIMIT_NOFILE): %s; the open files limit is left as it is", strerror(errno));
        return;
    }
    soft = nofile_choose(target, rl.rlim_cur, rl.rlim_max, &clamped);
    if (clamped)
        log_warn("open files: the hard limit is %llu, below RAYBOOT_NOFILE's %ld: the soft limit is raised to "
                 "%llu only (raise the container runtime's hard limit, or set RAYBOOT_NOFILE)",
                 (unsigned long long)rl.rlim_max, target, soft);
    if (soft == rl.rlim_cur)
        return;
    rl.rlim_cur = (rlim_t)soft;
    if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
        log_warn("setrlimit(RLIMIT_NOFILE, %llu): %s; the open files limit is left as it is", soft, strerror(errno));
    else
        log_info("open files: soft limit raised to %llu (hard %llu)", soft, (unsigned long long)rl.rlim_max);
}

/* Ray's TLS checked (the prober reads it again for itself), Ray's token found (or refused) before
 * anything starts, and token mode refused on a Ray too old to check the token (the plan read its
 * version; the submitter runs no Ray); says where the token and this pod's certificate came from,
 * never what they are. */
static int load_auth(const char *const *envp, const char *root, const struct plan *plan, struct rayauth *auth,
                     struct errbuf *err)
{
    const struct rayversion *ray = &plan->labels.ray;
    if (raytls_check(envp, err) < 0 || rayauth_load(envp, root, auth, err) < 0)
        return -1;
    if (plan->role != PLAN_ROLE_SUBMITTER) {
        int rc = rayauth_check_ray(auth, ray->version, ray->from, err);
        if (rc < 0) {
            rayauth_clear(auth);
            return -1;
        }
        if (rc > 0)
            log_warn("%s", err->msg);
    }
    if (auth->token_mode)
        log_info("Ray token authentication: the token from %s%s", auth->source,
                 auth->enable_for_ray ? " (RAY_AUTH_MODE is unset: ray start and the command get RAY_AUTH_MODE=token, "
                                        "as `ray start --head` would do; set RAY_AUTH_MODE=disabled to opt out)"
                                      : "");
    return 0;
}

/* The rendezvous' key: the token's, bound to the cluster's name (rdvauth.h). -1 without a token. */
static int rdv_key(struct pod *pod, const struct rayauth *auth)
{
    struct hmac_sha256_key token_key;
    if (rdvauth_key_from_header(&token_key, auth->header) < 0)
        return -1;
    rdvauth_key_for_cluster(&pod->rdv_key, &token_key, pod->cluster_name);
    explicit_bzero(&token_key, sizeof(token_key));
    return 0;
}

static int setup(struct pod *pod, const struct cli *cli, const char *const *envp, struct errbuf *err)
{
    char hostname[DNS_NAME_MAX_BYTES + 1] = "";
    struct plan_input in = {envp, &cli->plugin, hostname, cli->command, cli->command_argc, true};
    struct rayauth auth;
    sigset_t set;
    int rc;

    /* Signals are blocked before anything else: a SIGTERM that arrives while planning stays
     * pending instead of killing us (or, as PID 1, being dropped) and is acted on first. */
    proc_catchable_signals(&set);
    pod->sigfd = proc_signalfd_open(&set, err);
    if (pod->sigfd < 0)
        return EXIT_SOFTWARE;
    if (gethostname(hostname, sizeof(hostname) - 1) < 0)
        hostname[0] = '\0';
    if (plan_build(&in, &pod->plan, err) < 0 || plan_check_command(&pod->plan, err) < 0)
        return EXIT_CONFIG;
    if (settings_load(envp, &pod->settings, err) < 0)
        return EXIT_CONFIG;
    /* The submitter stops its job on SIGINT and SIGHUP as on SIGTERM (`rayboot submit` does too). */
    pod->interrupt_stops = pod->plan.role == PLAN_ROLE_SUBMITTER;
    if (pod->plan.role == PLAN_ROLE_WORKER && pod->plan.command.len > 0) {
        /* An Indexed Job has one pod template for every index: the command is the head's (the
         * plan refuses a command on any other worker). */
        log_info("the command runs on the head (index 0); this worker only runs Ray");
        strv_free(&pod->plan.command);
    }
    if (load_auth(envp, env_lookup_nonempty(envp, "RAYBOOT_ROOT"), &pod->plan, &auth, err) < 0)
        return EXIT_CONFIG;
    if (pod->plan.role != PLAN_ROLE_SUBMITTER &&
        tlsfiles_make(&pod->plan, envp, hostname, &pod->plan.ray_env, err) < 0) {
        rayauth_clear(&auth);
        return EXIT_CONFIG;
    }
    pod->token_mode = auth.token_mode;
    /* The rendezvous' key, bound to this cluster's name: kept as hash states, so the token itself
     * is cleared below. */
    plan_cluster_name(&pod->plan, pod->cluster_name);
    pod->rdv_keyed = auth.token_mode && rdv_key(pod, &auth) == 0;
    rc = build_envs(pod, envp, &auth);
    rayauth_clear(&auth); /* the prober reads the token again before it confines itself */
    if (rc < 0) {
        errbuf_set(err, "out of memory");
        return EXIT_SOFTWARE;
    }
    if (pod->plan.role != PLAN_ROLE_SUBMITTER)
        raise_nofile(pod->plan.nofile);
    if (proc_become_subreaper(err) < 0)
        return EXIT_SOFTWARE;
    if (prober_start(&pod->prober, env_lookup_nonempty(envp, "RAYBOOT_ROOT"), err) < 0)
        return EXIT_SOFTWARE;
    return 0;
}

/* After set-up: the role's start, then the supervisor while anything runs. */
static int live(struct pod *pod, const char *const *envp)
{
    log_plan(&pod->plan);
    pod_signals(pod);
    if (pod->term_requested) {
        pod_end_reason(pod, "SIGTERM before Ray was started");
        return pod_stop_exit_code(pod);
    }
    if (pod->plan.role == PLAN_ROLE_SUBMITTER)
        return run_submitter(pod, envp);
    if ((pod->plan.role == PLAN_ROLE_HEAD ? start_head(pod) : start_worker(pod)) < 0 && pod->ray_pid == 0 &&
        pod->cmd_pid == 0)
        return pod->exit_code;
    return supervise(pod);
}

int run_main(const struct cli *cli, const char *const *envp)
{
    struct pod pod;
    struct errbuf err;
    int rc;

    pod_init(&pod);
    rc = setup(&pod, cli, envp, &err);
    if (rc != 0) {
        log_error("%s", err.msg);
        pod_end_reason(&pod, "%s", err.msg);
    } else {
        rc = live(&pod, envp);
    }
    if (pod.ray_stopped_ms) /* the reason is shut_down's, which ends "Ray stopped" */
        termlog_write(envp, "rayboot: %s in %.2f s (exit %d)", pod.end_reason,
                      (double)(pod.ray_stopped_ms - pod.ray_stop_ms) / 1000.0, rc);
    else
        termlog_write(envp, "rayboot: %s (exit %d)", pod.end_reason[0] ? pod.end_reason : "ended", rc);
    pod_free(&pod);
    return rc;
}
