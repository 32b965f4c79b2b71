/* The pod's shared state and what every phase of its life does to it: spawning Ray and the
 * command, reading signals (reap, forward, record SIGTERM), the waits for the head, and the end
 * reason. When to do which is run.c's (start-up) and supervise.c's (after it). */
#include "pod.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exitcode.h"
#include "log.h"
#include "monotime.h"
#include "proc.h"

/* The head's poll of its own GCS (pod_wait_gcs). */
#define HEAD_POLL_MIN_MS 2
#define HEAD_POLL_MAX_MS 4

void pod_init(struct pod *p)
{
    memset(p, 0, sizeof(*p));
    p->sigfd = -1;
    p->prober.pid = -1;
    p->prober.fd = -1;
    p->rendezvous.pid = -1;
    p->rendezvous.fd = -1;
    p->watch.pid = -1;
    rayrestart_init(&p->ray_restarts);
    strv_init(&p->ray_env);
    strv_init(&p->cmd_env);
}

void pod_free(struct pod *p)
{
    prober_stop(&p->prober);
    rendezvous_stop(&p->rendezvous);
    rdvwatch_stop(&p->watch);
    explicit_bzero(&p->rdv_key, sizeof(p->rdv_key));
    if (p->sigfd >= 0)
        close(p->sigfd);
    p->sigfd = -1;
    plan_free(&p->plan);
    strv_free(&p->ray_env);
    strv_free(&p->cmd_env);
}

void pod_end_reason(struct pod *p, const char *fmt, ...)
{
    va_list ap;
    if (p->end_reason[0])
        return;
    va_start(ap, fmt);
    vsnprintf(p->end_reason, sizeof(p->end_reason), fmt, ap);
    va_end(ap);
}

static int exec_failure_code(int exec_errno)
{
    return exec_errno == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC;
}

/* Spawns argv for `what` ("ray" or "the command"); on failure records the reason and the
 * 126/127 exit code. */
static int spawn(struct pod *p, const char *what, const struct strv *argv, const struct strv *env, pid_t *pid)
{
    struct errbuf err;
    int exec_errno;
    if (proc_spawn(argv->items, env->items, pid, &exec_errno, &err) < 0) {
        log_error("cannot start %s: %s", what, err.msg);
        pod_end_reason(p, "cannot start %s: %s", what, err.msg);
        *pid = 0;
        p->exit_code = exec_failure_code(exec_errno);
        return -1;
    }
    log_info("started %s (pid %d): %s", what, (int)*pid, argv->items[0]);
    return 0;
}

int pod_start_ray(struct pod *p)
{
    p->ray_exited = false;
    p->ray_started_ms = monotime_ms();
    if (spawn(p, "ray", &p->plan.ray_start, &p->ray_env, &p->ray_pid) == 0)
        return 0;
    log_info("set RAYBOOT_RAY to the ray executable if it is not `ray` on PATH");
    return -1;
}

int pod_start_command(struct pod *p)
{
    return spawn(p, "the command", &p->plan.command, &p->cmd_env, &p->cmd_pid);
}

int pod_stop_exit_code(const struct pod *p)
{
    if (p->plan.role != PLAN_ROLE_HEAD || p->plan.command.len == 0)
        return p->settings.eviction_exit_code;
    if (p->cmd_exited)
        return proc_exit_code(p->cmd_status);
    return EXIT_SIGNAL_BASE + SIGTERM; /* it never ran; if it runs now, pod_reap() puts its own code */
}

void pod_reap(struct pod *p)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        if (pid == p->ray_pid) {
            p->ray_status = status;
            p->ray_exited = true;
            p->ray_pid = 0;
            if (p->ray_stop_ms)
                p->ray_stopped_ms = monotime_ms();
            log_info("ray start exited (%d)", proc_exit_code(status));
        } else if (pid == p->cmd_pid) {
            p->cmd_status = status;
            p->cmd_exited = true;
            p->cmd_pid = 0;
            log_info("the command exited (%d)", proc_exit_code(status));
            if (p->cmd_stopped) /* SIGTERM stopped it: how it ended is the pod's exit code */
                p->exit_code = proc_exit_code(status);
        } else if (pid == p->rendezvous.pid) {
            p->rendezvous.pid = -1;
            if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS)
                log_warn("the rendezvous (pid %d) was killed by SIGSYS: it made a system call outside its seccomp "
                         "allowlist (a rayboot bug; please report it); the workers poll the GCS",
                         (int)pid);
            else
                log_warn("the rendezvous (pid %d) ended (%d); the workers poll the GCS", (int)pid,
                         proc_exit_code(status));
        } else if (pid == p->store_pid) {
            p->store_pid = 0;
            if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                log_info("the GCS's storage namespace is deleted from Redis");
            else
                log_warn("deleting the GCS's storage namespace from Redis failed (%d): delete its keys by hand "
                         "(redis-cli --scan --pattern 'RAY<RAY_external_storage_namespace>@*', then DEL them)",
                         proc_exit_code(status));
        } else if (pid == p->watch.pid) {
            /* Rayboot's own child, not the pod's: what it saw is the supervisor's to act on. */
            p->watch.pid = -1;
            p->watch_status = status;
            p->watch_ended = true;
        } else if (pid == p->prober.pid) {
            struct errbuf err;
            p->prober.pid = -1;
            prober_end_reason(pid, status, &err);
            log_warn("%s; the head is no longer watched", err.msg);
        }
    }
}

/* Signals other than SIGTERM and SIGCHLD go to the command's process group when it runs (it is
 * what a user talks to), else to ray start. */
static void forward(struct pod *p, int sig)
{
    if (p->cmd_pid > 0)
        proc_signal_group(p->cmd_pid, sig);
    else if (p->ray_pid > 0)
        kill(p->ray_pid, sig);
}

static const char *stop_signal_name(const struct pod *p, int sig)
{
    if (sig == SIGTERM)
        return "SIGTERM";
    if (p->interrupt_stops && sig == SIGINT)
        return "SIGINT";
    if (p->interrupt_stops && sig == SIGHUP)
        return "SIGHUP";
    return NULL;
}

void pod_signals(struct pod *p)
{
    struct signalfd_siginfo si;
    while (read(p->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        int sig = (int)si.ssi_signo;
        const char *stop = stop_signal_name(p, sig);
        if (sig == SIGCHLD) {
            pod_reap(p);
        } else if (stop) {
            if (p->term_requested)
                log_info("%s again: already stopping", stop);
            else
                log_info("%s: %s", stop, p->ray_pid > 0 ? "draining this node and stopping" : "stopping");
            p->term_requested = true;
        } else {
            forward(p, sig);
        }
    }
    pod_reap(p); /* SIGCHLD coalesces: look once more */
}

static bool wake_on_stop(void *ctx)
{
    struct pod *p = ctx;
    pod_signals(p);
    return p->term_requested || (p->ray_pid == 0 && p->ray_exited);
}

static bool wake_on_signal(void *ctx)
{
    pod_signals(ctx);
    return true;
}

struct wait_stop pod_waiter(struct pod *p, enum pod_wake wake)
{
    struct wait_stop w = {p->sigfd, wake == POD_WAKE_ON_STOP ? wake_on_stop : wake_on_signal, p};
    return w;
}

void pod_stop_ray(struct pod *p, long timeout_ms)
{
    if (p->ray_pid > 0)
        kill(p->ray_pid, SIGTERM);
    p->kill_at_ms = monotime_ms() + timeout_ms;
}

void pod_stop_ray_at_once(struct pod *p)
{
    /* Ray's daemons stay in ray start's process group (its core workers take groups of their
     * own, and go with their raylet). */
    proc_signal_group(p->ray_pid, SIGTERM);
}

void pod_end(struct pod *p, int exit_code, long timeout_ms)
{
    p->stopping = true;
    p->exit_code = exit_code;
    pod_stop_ray(p, timeout_ms);
}

enum wait_result pod_wait_gcs(struct pod *p, const char *name, long timeout_ms, bool confirm, struct errbuf *err)
{
    struct wait_stop stop = pod_waiter(p, POD_WAKE_ON_STOP);
    /* The head waits for its own GCS: no rendezvous to hold, and a quicker poll, on loopback (a
     * refused connect costs microseconds), for the second or two its GCS takes to start: its
     * workers learn SERVING when it does. */
    bool head = p->plan.role == PLAN_ROLE_HEAD;
    struct wait_gcs w = {name,
                         p->plan.head_port,
                         timeout_ms,
                         &stop,
                         head ? 0 : p->settings.rendezvous_port,
                         head ? HEAD_POLL_MIN_MS : 0,
                         head ? HEAD_POLL_MAX_MS : 0,
                         confirm,
                         p->cluster_name};
    return wait_for_gcs(&p->prober, &w, p->gcs_addr, err);
}

enum wait_result pod_read_ray_version(struct pod *p, struct errbuf *err)
{
    if (p->prober.pid <= 0) {
        errbuf_set(err, "the prober is not running");
        return WAIT_PROBER_DIED;
    }
    return wait_read_ray_version(&p->prober, p->gcs_addr, p->plan.head_port, err);
}

/* The version read failed for good (a refused token, a dead prober): said, and the pod's end. */
static int version_failed(struct pod *p, enum wait_result res, const char *msg)
{
    log_error("%s", msg);
    pod_end_reason(p, "%s", msg);
    p->exit_code = res == WAIT_UNAUTHENTICATED ? EXIT_CONFIG : EXIT_SOFTWARE;
    return -1;
}

void pod_note_cluster_id(struct pod *p)
{
    struct prober_reply reply;
    if (pod_ask(p, prober_req_cluster_id(p->gcs_addr, p->plan.head_port, 0), &reply) == PROBER_OK)
        snprintf(p->cluster_id, sizeof(p->cluster_id), "%s", reply.value);
}

int pod_join_head(struct pod *p)
{
    struct errbuf err;
    enum wait_result res;
    /* With a token, CheckAlive is the token's check: a wrong one must not start a Ray that Ray's
     * own GCS would refuse, and the pod exits 2 saying so. */
    if (p->token_mode && (res = pod_read_ray_version(p, &err)) != WAIT_READY)
        return version_failed(p, res, err.msg);
    if (pod_start_ray(p) < 0)
        return -1;
    if (!p->token_mode && (res = pod_read_ray_version(p, &err)) != WAIT_READY) {
        version_failed(p, res, err.msg);
        pod_end(p, p->exit_code, p->settings.grace_period_ms);
        return 0;
    }
    /* Ray first: the head's id is one more RPC, and nothing in `ray start` needs it. Read right
     * after, it is the head Ray joins: a head replaced in between would end that Ray, which the
     * supervisor handles. */
    pod_note_cluster_id(p);
    return 0;
}

int pod_rendezvous_start(struct pod *p)
{
    struct errbuf err;
    int rc;
    if (p->settings.rendezvous_port == 0)
        return 0;
    rc = rendezvous_start(&p->rendezvous, p->settings.rendezvous_port, p->rdv_keyed ? &p->rdv_key : NULL, &err);
    if (rc == RENDEZVOUS_NO_PORT) {
        /* Whoever holds the port would be the workers' rendezvous: they would take its word. */
        log_error("RAYBOOT_RENDEZVOUS_PORT=%d: the head's rendezvous cannot listen there (%s): another process holds "
                  "it, and the workers would trust what it says; free the port, or set RAYBOOT_RENDEZVOUS_PORT to a "
                  "free port on every pod of the job (0: no rendezvous)",
                  p->settings.rendezvous_port, err.msg);
        pod_end_reason(p, "RAYBOOT_RENDEZVOUS_PORT=%d: the port cannot be had (%s)", p->settings.rendezvous_port,
                       err.msg);
        p->exit_code = EXIT_CONFIG;
        return -1;
    }
    if (rc < 0) {
        log_error("cannot start the head's rendezvous: %s", err.msg);
        pod_end_reason(p, "cannot start the head's rendezvous: %s", err.msg);
        p->exit_code = EXIT_SOFTWARE;
        return -1;
    }
    log_info("rendezvous on port %d (pid %d): the workers waiting there are told when the GCS serves",
             p->settings.rendezvous_port, (int)p->rendezvous.pid);
    return 0;
}

void pod_rendezvous_serving(struct pod *p)
{
    rendezvous_serving(&p->rendezvous);
}

void pod_wait_workers(struct pod *p, const char *gcs_addr)
{
    struct wait_stop stop = pod_waiter(p, POD_WAKE_ON_STOP);
    struct errbuf err;
    long joined = 0;
    enum wait_result res = wait_for_workers(&p->prober, gcs_addr, p->plan.head_port, p->plan.workers_expected,
                                            p->settings.workers_timeout_ms, &stop, &joined, &err);
    if (res != WAIT_READY && res != WAIT_STOPPED)
        log_warn("%s", err.msg);
}

enum prober_status pod_ask(struct pod *p, struct prober_request req, struct prober_reply *reply)
{
    struct errbuf err;
    enum prober_status st;
    memset(reply, 0, sizeof(*reply));
    if (p->prober.pid <= 0) {
        reply->status = PROBER_DIED;
        snprintf(reply->reason, sizeof(reply->reason), "the prober is not running");
        return PROBER_DIED;
    }
    st = prober_ask(&p->prober, &req, reply, &err);
    if (st == PROBER_DIED) {
        log_warn("%s", err.msg);
        snprintf(reply->reason, sizeof(reply->reason), "%s", err.msg);
    }
    return st;
}
