/* The supervisor: rayboot as PID 1 (or subreaper) once Ray runs. It reaps every child, forwards
 * signals, turns the end of the command or of Ray into the pod's exit code, drains the node on
 * SIGTERM, and on workers follows the head: leaves when its job is done, rejoins a new head.
 * After start-up it never exits because of an error it can log (catatonit's rule). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "drain.h"
#include "exitcode.h"
#include "log.h"
#include "proc.h"
#include "run.h"
#include "wait.h"

/* Ray's own SIGTERM handling stops its daemons within a few seconds. */
#define RAY_STOP_TIMEOUT_MS 15000
/* How long the user's command gets between SIGTERM and SIGKILL when Ray dies under it. */
#define COMMAND_STOP_TIMEOUT_MS 10000
/* Workers look at the head this often: cheap (one DNS query and two small RPCs). */
#define WORKER_MONITOR_INTERVAL_MS 2000
/* After its command ends, the head keeps its GCS up until no worker is ALIVE or this long, so
 * that every worker reads the "finished" key on its next look (WORKER_MONITOR_INTERVAL_MS) and
 * leaves by itself. */
#define HEAD_LINGER_MS 8000
#define HEAD_LINGER_POLL_MS 250
#define FINISHED_KEY "finished"
#define PROBER_CALL_TIMEOUT_MS 15000

static void reap(struct run *r)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        if (pid == r->ray_pid) {
            r->ray_status = status;
            r->ray_exited = true;
            r->ray_pid = 0;
            log_info("ray start exited (%d)", proc_exit_code(status));
        } else if (pid == r->cmd_pid) {
            r->cmd_status = status;
            r->cmd_exited = true;
            r->cmd_pid = 0;
            log_info("the command exited (%d)", proc_exit_code(status));
            if (r->cmd_stopped) /* SIGTERM stopped it: how it ended is the pod's exit code */
                r->exit_code = proc_exit_code(status);
        } else if (pid == r->prober.pid) {
            struct errbuf err;
            r->prober.pid = -1;
            prober_end_reason(pid, status, &err);
            log_warn("%s; the head is no longer watched", err.msg);
        }
    }
}

/* Signals other than SIGTERM and SIGCHLD go to the command's process group when it runs (it is
 * what a user talks to), else to ray start. */
static void forward(struct run *r, int sig)
{
    if (r->cmd_pid > 0)
        proc_signal_group(r->cmd_pid, sig);
    else if (r->ray_pid > 0)
        kill(r->ray_pid, sig);
}

void supervise_signals(struct run *r)
{
    struct signalfd_siginfo si;
    while (read(r->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        int sig = (int)si.ssi_signo;
        if (sig == SIGCHLD) {
            reap(r);
        } else if (sig == SIGTERM) {
            if (r->term_requested)
                log_info("SIGTERM again: already stopping");
            else
                log_info("SIGTERM: %s", r->ray_pid > 0 ? "draining this node and stopping" : "stopping");
            r->term_requested = true;
        } else {
            forward(r, sig);
        }
    }
    reap(r); /* SIGCHLD coalesces: look once more */
}

static int call(struct run *r, int op, const char *name, const char *text, struct prober_reply *reply)
{
    struct prober_request req;
    struct errbuf err;
    memset(reply, 0, sizeof(*reply));
    memset(&req, 0, sizeof(req));
    req.op = op;
    req.port = r->plan.head_port;
    snprintf(req.addr, sizeof(req.addr), "%s", r->gcs_addr);
    if (name)
        snprintf(req.name, sizeof(req.name), "%s", name);
    if (text)
        snprintf(req.text, sizeof(req.text), "%s", text);
    if (r->prober.pid <= 0)
        return -1;
    if (prober_call(&r->prober, &req, reply, PROBER_CALL_TIMEOUT_MS, &err) < 0) {
        log_warn("%s", err.msg);
        return -1;
    }
    return reply->ok ? 0 : -1;
}

static void stop_ray(struct run *r, long timeout_ms)
{
    if (r->ray_pid > 0)
        kill(r->ray_pid, SIGTERM);
    r->kill_at_ms = wait_now_ms() + timeout_ms;
}

void supervise_stop_ray(struct run *r, int exit_code, long timeout_ms)
{
    r->stopping = true;
    r->exit_code = exit_code;
    stop_ray(r, timeout_ms);
}

/* Drives the drain with blocking prober calls, reading signals between looks. Stops early when
 * ray start is gone: its raylet exits by itself once the drain is through. */
static void drive_drain(struct run *r, struct drain *d)
{
    struct prober_request req;
    struct prober_reply reply;
    struct errbuf err;
    long wake_ms;
    int step;
    while (r->ray_pid > 0 && (step = drain_step(d, wait_now_ms(), &req, &wake_ms)) >= 0) {
        if (step == 0) {
            if (wait_sleep(wake_ms - wait_now_ms(), r->sigfd) < 0)
                supervise_signals(r);
            continue;
        }
        if (r->prober.pid <= 0 || prober_call(&r->prober, &req, &reply, PROBER_CALL_TIMEOUT_MS, &err) < 0) {
            log_warn("%s", r->prober.pid <= 0 ? "the prober is not running" : err.msg);
            drain_reply(d, wait_now_ms(), NULL);
        } else {
            bool requesting = d->state == DRAIN_REQUESTING;
            drain_reply(d, wait_now_ms(), &reply);
            if (requesting && d->state == DRAIN_WATCHING)
                log_info("drain of node %s accepted; waiting for it to leave", d->node_ip);
        }
    }
}

int supervise_sigterm_exit_code(const struct run *r)
{
    if (r->plan.role != PLAN_ROLE_HEAD || r->plan.command.len == 0)
        return r->settings.eviction_exit_code;
    if (r->cmd_exited)
        return proc_exit_code(r->cmd_status);
    return EXIT_SIGNAL_BASE + SIGTERM; /* it never ran; if it runs now, reap() puts its own code */
}

/* What SIGTERM did to the head's command, for the termination message. */
static const char *command_fate(const struct run *r)
{
    if (r->plan.role != PLAN_ROLE_HEAD || r->plan.command.len == 0 || r->cmd_exited)
        return "";
    return r->cmd_pid > 0 ? "the command was stopped before it finished; " : "the command never ran; ";
}

/* SIGTERM: drain through the GCS, wait (bounded) for the node to leave, then stop. */
static void shut_down(struct run *r)
{
    long started = wait_now_ms();
    long budget = r->settings.grace_period_ms - SETTINGS_GRACE_MARGIN_MS;
    const char *fate = command_fate(r);
    struct drain d;
    char reason[256];

    r->stopping = true;
    r->exit_code = supervise_sigterm_exit_code(r);
    if (r->cmd_pid > 0) {
        r->cmd_stopped = true;
        proc_signal_group(r->cmd_pid, SIGTERM);
    }
    if (r->ray_pid > 0 && r->plan.pod_ip[0] && r->gcs_addr[0]) {
        snprintf(reason, sizeof(reason), "rayboot: pod %.200s is being terminated (SIGTERM)", r->plan.pod_name);
        /* Half the budget for the drain, the rest for Ray to stop. */
        drain_begin(&d, r->gcs_addr, r->plan.head_port, r->plan.pod_ip, reason, budget / 2, started);
        log_info("draining node %s (up to %.1f s)", r->plan.pod_ip, (double)budget / 2000.0);
        drive_drain(r, &d);
        if (d.state == DRAIN_DONE && d.outcome == DRAIN_FAILED) {
            log_warn("could not drain node %s: %s; stopping without a drain", r->plan.pod_ip, d.detail);
        } else if (d.state == DRAIN_DONE && d.outcome == DRAIN_DEADLINE) {
            log_warn("node %s was still in the cluster after %.1f s of draining; stopping it", r->plan.pod_ip,
                     (double)drain_elapsed_ms(&d, wait_now_ms()) / 1000.0);
        } else if (d.state == DRAIN_DONE && d.earlier) {
            /* The usual case beside rayboot-sidecar: its preStop drain ran before this SIGTERM. */
            r->drained = true;
            log_info("%s before SIGTERM (by the pod's preStop hook, or the sidecar)", d.detail);
        } else {
            /* Left the GCS, or its raylet exited by itself once drained (ray start is gone). */
            r->drained = true;
            log_info("node %s left the cluster after %.2f s of draining", r->plan.pod_ip,
                     (double)drain_elapsed_ms(&d, wait_now_ms()) / 1000.0);
        }
    } else if (r->ray_pid > 0) {
        log_warn("this pod's IP is unknown (set RAYBOOT_POD_IP from status.podIP): stopping without a drain");
    }
    run_end_reason(r, "SIGTERM: %s%s; Ray stopped", fate, r->drained ? "node drained" : "stopped without a drain");
    stop_ray(r, started + budget - wait_now_ms());
    log_info("stopping Ray; everything left is killed in %.1f s", (double)(r->kill_at_ms - wait_now_ms()) / 1000.0);
}

/* Waits (bounded) until no worker is ALIVE: they leave once they read the "finished" key. The
 * expected count does not matter; an Indexed Job does not even know it. */
static void wait_workers_gone(struct run *r)
{
    long deadline = wait_now_ms() + HEAD_LINGER_MS;
    struct prober_reply nodes;
    while (wait_now_ms() < deadline && r->ray_pid > 0 && !r->term_requested) {
        if (call(r, PROBE_COUNT_NODES, NULL, NULL, &nodes) == 0 && nodes.alive_workers == 0)
            return;
        if (wait_sleep(HEAD_LINGER_POLL_MS, r->sigfd) < 0)
            supervise_signals(r);
    }
}

/* The head's command ended: tell the workers, let them leave, stop Ray. */
static void command_done(struct run *r)
{
    struct prober_reply reply;
    char code[16];
    r->exit_code = proc_exit_code(r->cmd_status);
    run_end_reason(r, "the command exited with %d", r->exit_code);
    r->job_finished = true;
    r->stopping = true;
    snprintf(code, sizeof(code), "%d", r->exit_code);
    if (r->ray_pid > 0 && call(r, PROBE_KV_PUT, FINISHED_KEY, code, &reply) == 0) {
        log_info("the command is done (exit %d); waiting for the workers to leave before Ray stops", r->exit_code);
        wait_workers_gone(r);
    }
    stop_ray(r, RAY_STOP_TIMEOUT_MS);
}

/* A worker's Ray ended on its own. A lost or new head is waited for and joined again; anything
 * else ends the pod with Ray's code. */
static void worker_ray_ended(struct run *r)
{
    struct errbuf err;
    struct wait_gcs w = {r->plan.head_fqdn, r->plan.head_port, r->settings.head_loss_timeout_ms, r->sigfd};
    enum wait_result res;

    if (r->job_finished) {
        r->stopping = true;
        r->exit_code = 0;
        return;
    }
    if (!r->restarting_ray) {
        struct prober_reply reply;
        if (call(r, PROBE_CLUSTER_ID, NULL, NULL, &reply) == 0 && strcmp(reply.value, r->cluster_id) == 0) {
            r->stopping = true;
            r->exit_code = proc_exit_code(r->ray_status);
            if (r->exit_code == 0)
                r->exit_code = 1; /* ray start --block only returns when something went wrong */
            log_error("Ray exited (%d) while its head is up; ending the pod", proc_exit_code(r->ray_status));
            run_end_reason(r, "Ray exited (%d) while its head was up", proc_exit_code(r->ray_status));
            return;
        }
        log_info("Ray exited and the head is gone or new; waiting up to %.0f s to join it again",
                 (double)r->settings.head_loss_timeout_ms / 1000.0);
    }
    r->restarting_ray = false;
    for (;;) {
        res = wait_for_gcs(&r->prober, &w, r->gcs_addr, &err);
        if (res != WAIT_STOPPED)
            break;
        supervise_signals(r);
        if (r->term_requested) {
            r->stopping = true;
            r->exit_code = r->settings.eviction_exit_code;
            return;
        }
    }
    if (res != WAIT_READY) {
        log_error("the head did not come back: %s", err.msg);
        run_end_reason(r, "the head did not come back: %s", err.msg);
        r->stopping = true;
        r->exit_code = 1;
        return;
    }
    {
        struct prober_reply reply;
        if (call(r, PROBE_CLUSTER_ID, NULL, NULL, &reply) == 0)
            snprintf(r->cluster_id, sizeof(r->cluster_id), "%s", reply.value);
    }
    r->head_lost_since_ms = 0;
    log_info("joining the head again at %s", r->gcs_addr);
    if (run_start_ray(r) < 0)
        r->stopping = true;
}

/* A worker's periodic look at its head: finished? replaced? gone? */
static void monitor_head(struct run *r)
{
    struct prober_reply reply;
    if (r->plan.role != PLAN_ROLE_WORKER || r->stopping || r->ray_pid == 0 || wait_now_ms() < r->next_monitor_ms)
        return;
    r->next_monitor_ms = wait_now_ms() + WORKER_MONITOR_INTERVAL_MS;
    if (call(r, PROBE_RESOLVE, r->plan.head_fqdn, NULL, &reply) == 0)
        snprintf(r->gcs_addr, sizeof(r->gcs_addr), "%s", reply.addr);
    if (call(r, PROBE_CLUSTER_ID, NULL, NULL, &reply) < 0) {
        if (r->head_lost_since_ms == 0) {
            r->head_lost_since_ms = wait_now_ms();
            log_warn("lost the head %s:%d: %s", r->plan.head_fqdn, r->plan.head_port, reply.reason);
        }
        return;
    }
    if (r->head_lost_since_ms)
        log_info("the head answers again");
    r->head_lost_since_ms = 0;
    if (r->cluster_id[0] && strcmp(reply.value, r->cluster_id) != 0) {
        /* Said once; the SIGTERM is repeated at each look until ray start has gone. */
        if (!r->restarting_ray)
            log_info("the head is a new cluster (id %.12s..., was %.12s...): leaving the old one to join it",
                     reply.value, r->cluster_id);
        r->restarting_ray = true;
        kill(r->ray_pid, SIGTERM);
        return;
    }
    if (call(r, PROBE_KV_GET, FINISHED_KEY, NULL, &reply) == 0) {
        log_info("the head's command finished (exit %s): stopping Ray", reply.value);
        run_end_reason(r, "the head's command finished (exit %s)", reply.value);
        r->job_finished = true;
        r->stopping = true;
        r->exit_code = 0;
        stop_ray(r, RAY_STOP_TIMEOUT_MS);
    }
}

/* Reacts to what changed since the last turn of the loop. */
static void decide(struct run *r)
{
    if (r->term_requested && !r->stopping) {
        shut_down(r);
    } else if (r->cmd_exited && !r->stopping) {
        command_done(r);
    } else if (r->ray_exited && !r->stopping) {
        r->ray_exited = false;
        if (r->cmd_pid > 0) {
            r->exit_code = proc_exit_code(r->ray_status) ? proc_exit_code(r->ray_status) : 1;
            log_error("Ray died under the command (ray start exited %d); stopping the command",
                      proc_exit_code(r->ray_status));
            run_end_reason(r, "Ray died under the command (ray start exited %d)", proc_exit_code(r->ray_status));
            r->stopping = true;
            proc_signal_group(r->cmd_pid, SIGTERM);
            r->kill_at_ms = wait_now_ms() + COMMAND_STOP_TIMEOUT_MS;
        } else if (r->plan.role == PLAN_ROLE_WORKER) {
            worker_ray_ended(r);
        } else {
            r->stopping = true;
            r->exit_code = proc_exit_code(r->ray_status);
            run_end_reason(r, "ray start exited with %d", r->exit_code);
        }
    }
}

static bool children_left(void)
{
    siginfo_t info;
    memset(&info, 0, sizeof(info));
    /* WNOWAIT: only look; reap() collects the status. */
    return waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) == 0;
}

static void kill_everything(struct run *r)
{
    int n = 0;
    if (r->ray_pid > 0)
        proc_signal_group(r->ray_pid, SIGKILL);
    if (r->cmd_pid > 0)
        proc_signal_group(r->cmd_pid, SIGKILL);
    /* As PID 1, kill(-1) reaches every process of the pod, including daemons in sessions of
     * their own and processes a /proc of another namespace would hide. As a subreaper, what is
     * left are our direct children (orphans are re-parented to us). */
    if (getpid() == 1) {
        if (kill(-1, SIGKILL) == 0)
            log_warn("deadline passed: killed every process left in the pod");
    } else {
        n = proc_signal_children(SIGKILL);
        log_warn("deadline passed: killed what was left (%d more processes)", n);
    }
    r->kill_at_ms = 0;
}

int supervise(struct run *r)
{
    for (;;) {
        struct pollfd pfd = {r->sigfd, POLLIN, 0};
        long timeout = WORKER_MONITOR_INTERVAL_MS, now;

        decide(r);
        monitor_head(r);
        if (r->stopping && r->ray_pid == 0 && r->cmd_pid == 0) {
            /* The prober is ours, not something to wait for. */
            if (r->prober.pid > 0)
                prober_stop(&r->prober);
            if (!children_left())
                return r->exit_code;
            if (r->kill_at_ms == 0)
                r->kill_at_ms = wait_now_ms() + r->settings.grace_period_ms - SETTINGS_GRACE_MARGIN_MS;
        }
        now = wait_now_ms();
        if (r->kill_at_ms && now >= r->kill_at_ms) {
            kill_everything(r);
            continue;
        }
        if (r->kill_at_ms && r->kill_at_ms - now < timeout)
            timeout = r->kill_at_ms - now;
        if (r->plan.role == PLAN_ROLE_WORKER && !r->stopping && r->next_monitor_ms - now < timeout)
            timeout = r->next_monitor_ms > now ? r->next_monitor_ms - now : 0;
        if (poll(&pfd, 1, (int)timeout) > 0)
            supervise_signals(r);
        else
            reap(r);
    }
}
