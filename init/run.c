/* Start-up of a Ray pod: plan, signals, prober, the waits before and after `ray start`, and the
 * user's command. Once everything is started, supervise.c takes over. */
#include "run.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "env.h"
#include "exitcode.h"
#include "log.h"
#include "proc.h"
#include "submit.h"
#include "termlog.h"
#include "wait.h"

/* The head's own GCS: on loopback, it answers within seconds of ray start or never. */
#define OWN_GCS_ADDR "127.0.0.1"

void run_end_reason(struct run *r, const char *fmt, ...)
{
    va_list ap;
    if (r->end_reason[0])
        return;
    va_start(ap, fmt);
    vsnprintf(r->end_reason, sizeof(r->end_reason), fmt, ap);
    va_end(ap);
}

static int exec_failure_code(int exec_errno)
{
    return exec_errno == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC;
}

/* Spawns argv for `what` ("ray" or "the command"); on failure records the reason and the
 * 126/127 exit code. */
static int spawn(struct run *r, const char *what, const struct strv *argv, const struct strv *env, pid_t *pid)
{
    struct errbuf err;
    int exec_errno;
    if (proc_spawn(argv->items, env->items, pid, &exec_errno, &err) < 0) {
        log_error("cannot start %s: %s", what, err.msg);
        run_end_reason(r, "cannot start %s: %s", what, err.msg);
        *pid = 0;
        r->exit_code = exec_failure_code(exec_errno);
        return -1;
    }
    log_info("started %s (pid %d): %s", what, (int)*pid, argv->items[0]);
    return 0;
}

int run_start_ray(struct run *r)
{
    r->ray_exited = false;
    if (spawn(r, "ray", &r->plan.ray_start, &r->ray_env, &r->ray_pid) == 0)
        return 0;
    log_info("set RAYBOOT_RAY to the ray executable if it is not `ray` on PATH");
    return -1;
}

static int start_command(struct run *r)
{
    return spawn(r, "the command", &r->plan.command, &r->cmd_env, &r->cmd_pid);
}

/* wait_for_gcs, resumed after each signal until it is decided; a SIGTERM or the death of Ray
 * ends it with WAIT_STOPPED. */
enum wait_result run_wait_gcs(struct run *r, const char *name, long deadline_ms, struct errbuf *err)
{
    for (;;) {
        struct wait_gcs w = {name, r->plan.head_port, deadline_ms - wait_now_ms(), r->sigfd};
        enum wait_result res;
        if (w.timeout_ms < 0)
            w.timeout_ms = 0;
        res = wait_for_gcs(&r->prober, &w, r->gcs_addr, err);
        if (res != WAIT_STOPPED)
            return res;
        supervise_signals(r);
        if (r->term_requested || (r->ray_pid == 0 && r->ray_exited))
            return WAIT_STOPPED;
    }
}

void run_wait_workers(struct run *r, const char *gcs_addr)
{
    long deadline = wait_now_ms() + r->settings.workers_timeout_ms, joined = 0;
    struct errbuf err;
    for (;;) {
        enum wait_result res = wait_for_workers(&r->prober, gcs_addr, r->plan.head_port, r->plan.workers_expected,
                                                deadline - wait_now_ms(), r->sigfd, &joined, &err);
        if (res == WAIT_STOPPED) {
            supervise_signals(r);
            if (!r->term_requested && !r->ray_exited)
                continue;
            return;
        }
        if (res != WAIT_READY)
            log_warn("%s", err.msg);
        return;
    }
}

static void remember_cluster_id(struct run *r)
{
    struct prober_request req = {0};
    struct prober_reply reply;
    struct errbuf err;
    req.op = PROBE_CLUSTER_ID;
    req.port = r->plan.head_port;
    memcpy(req.addr, r->gcs_addr, sizeof(req.addr));
    if (prober_call(&r->prober, &req, &reply, 15000, &err) == 0 && reply.ok)
        snprintf(r->cluster_id, sizeof(r->cluster_id), "%s", reply.value);
}

/* A worker: wait for the head, then start Ray. */
static int start_worker(struct run *r)
{
    struct errbuf err;
    enum wait_result res = run_wait_gcs(r, r->plan.head_fqdn, wait_now_ms() + r->settings.wait_timeout_ms, &err);
    if (res == WAIT_DEADLINE) {
        log_error("%s", err.msg);
        run_end_reason(r, "%s", err.msg);
        r->exit_code = EXIT_WAIT_DEADLINE;
        return -1;
    }
    if (res != WAIT_READY) {
        if (res == WAIT_PROBER_DIED) {
            log_error("%s", err.msg);
            run_end_reason(r, "%s", err.msg);
        } else {
            run_end_reason(r, "SIGTERM while waiting for the head");
        }
        r->exit_code = res == WAIT_STOPPED ? r->settings.eviction_exit_code : EXIT_SOFTWARE;
        return -1;
    }
    remember_cluster_id(r);
    return run_start_ray(r);
}

/* The head: start Ray, wait for its GCS and, when it will run a command, for the workers. */
static int start_head(struct run *r)
{
    struct errbuf err;
    enum wait_result res;
    if (run_start_ray(r) < 0)
        return -1;
    res = run_wait_gcs(r, OWN_GCS_ADDR, wait_now_ms() + r->settings.wait_timeout_ms, &err);
    if (res == WAIT_READY) {
        remember_cluster_id(r);
        if (r->plan.command.len > 0 && r->plan.workers_expected > 0)
            run_wait_workers(r, OWN_GCS_ADDR);
        if (r->plan.command.len > 0 && !r->term_requested && !r->ray_exited && start_command(r) < 0)
            supervise_stop_ray(r, r->exit_code, r->settings.grace_period_ms);
        return 0;
    }
    /* A dead Ray or a SIGTERM (WAIT_STOPPED) is the supervisor's to sort out. */
    if (res != WAIT_STOPPED) {
        log_error("%s", err.msg);
        run_end_reason(r, "%s", err.msg);
        supervise_stop_ray(r, res == WAIT_DEADLINE ? EXIT_WAIT_DEADLINE : EXIT_SOFTWARE, r->settings.grace_period_ms);
    }
    return 0;
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
}

/* Ray's own drain on SIGTERM (Ray 2.5x and later) would wait up to 30 s for an idle node, the
 * whole default grace period. rayboot drains the node itself, so Ray's is switched off. */
static int build_envs(struct run *r, const char *const *envp)
{
    struct strv add;
    int rc = 0;
    strv_init(&add);
    for (size_t i = 0; i < r->plan.ray_env.len; i++)
        rc |= strv_push(&add, r->plan.ray_env.items[i]);
    if (!env_lookup(envp, "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S"))
        rc |= strv_push(&add, "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S=0");
    rc |= env_merge(envp, &add, &r->ray_env);
    for (size_t i = 0; i < r->plan.command_env.len; i++)
        rc |= strv_push(&add, r->plan.command_env.items[i]);
    rc |= env_merge(envp, &add, &r->cmd_env);
    strv_free(&add);
    return rc ? -1 : 0;
}

static int setup(struct run *r, const struct cli *cli, const char *const *envp, struct errbuf *err)
{
    char hostname[DNS_NAME_MAX_BYTES + 1] = "";
    struct plan_input in = {envp, &cli->plugin, hostname, cli->command, cli->command_argc};
    sigset_t set;

    /* Signals are blocked before anything else: a SIGTERM that arrives while planning stays
     * pending instead of killing us (or, as PID 1, being dropped) and is acted on first. */
    proc_catchable_signals(&set);
    r->sigfd = proc_signalfd_open(&set, err);
    if (r->sigfd < 0)
        return EXIT_SOFTWARE;
    if (gethostname(hostname, sizeof(hostname) - 1) < 0)
        hostname[0] = '\0';
    if (plan_build(&in, &r->plan, err) < 0 || plan_check_command(&r->plan, err) < 0)
        return EXIT_CONFIG;
    if (settings_load(envp, &r->settings, err) < 0)
        return EXIT_CONFIG;
    if (r->plan.role == PLAN_ROLE_WORKER && r->plan.command.len > 0) {
        /* An Indexed Job has one pod template for every index: the command is the head's (the
         * plan refuses a command on any other worker). */
        log_info("the command runs on the head (index 0); this worker only runs Ray");
        strv_free(&r->plan.command);
    }
    if (build_envs(r, envp) < 0) {
        errbuf_set(err, "out of memory");
        return EXIT_SOFTWARE;
    }
    if (proc_become_subreaper(err) < 0)
        return EXIT_SOFTWARE;
    if (prober_start(&r->prober, env_lookup_nonempty(envp, "RAYBOOT_ROOT"), err) < 0)
        return EXIT_SOFTWARE;
    return 0;
}

int run_main(const struct cli *cli, const char *const *envp)
{
    struct run r;
    struct errbuf err;
    int rc;

    memset(&r, 0, sizeof(r));
    r.sigfd = -1;
    r.prober.pid = -1;
    r.prober.fd = -1;
    strv_init(&r.ray_env);
    strv_init(&r.cmd_env);
    rc = setup(&r, cli, envp, &err);
    if (rc != 0) {
        log_error("%s", err.msg);
        run_end_reason(&r, "%s", err.msg);
    } else {
        log_plan(&r.plan);
        supervise_signals(&r);
        if (r.term_requested) {
            run_end_reason(&r, "SIGTERM before Ray was started");
            rc = r.settings.eviction_exit_code;
        } else if (r.plan.role == PLAN_ROLE_SUBMITTER)
            rc = submit_from_plan(&r, envp);
        else if ((r.plan.role == PLAN_ROLE_HEAD ? start_head(&r) : start_worker(&r)) < 0 && r.ray_pid == 0 &&
                 r.cmd_pid == 0)
            rc = r.exit_code;
        else
            rc = supervise(&r);
    }
    termlog_write(envp, "rayboot: %s (exit %d)", r.end_reason[0] ? r.end_reason : "ended", rc);
    prober_stop(&r.prober);
    if (r.sigfd >= 0)
        close(r.sigfd);
    plan_free(&r.plan);
    strv_free(&r.ray_env);
    strv_free(&r.cmd_env);
    return rc;
}
