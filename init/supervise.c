/* The supervisor: rayboot as PID 1 (or subreaper) once Ray runs. It reaps every child, forwards
 * signals, turns the end of the command or of Ray into the pod's exit code, drains the node on
 * SIGTERM, and on workers follows the head: leaves when its job is done, rejoins a new head.
 * After start-up it never exits because of an error it can log (catatonit's rule). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "drain.h"
#include "env.h"
#include "exitcode.h"
#include "log.h"
#include "monotime.h"
#include "proc.h"
#include "pod.h"
#include "rayrestart.h"
#include "storeclean.h"
#include "supervise.h"
#include "wait.h"

/* Ray's own SIGTERM handling stops its daemons within a few seconds. */
#define RAY_STOP_TIMEOUT_MS 15000
/* How long `ray start` gets after SIGTERM once its node has left the cluster. A drained node
 * has nothing left to hand over, and Ray 2.60's `ray start --block` sometimes never exits on
 * SIGTERM once its drained raylet is gone: its main thread sleeping, SIGTERM caught and not
 * pending (/proc on the real node, bench/node/evict.py: 1 or 2 rounds of 2). It exits within
 * 0.3 s when it does, so 1 s is enough; at 5 s such a pod took 6.5 s to go. */
#define DRAINED_RAY_STOP_TIMEOUT_MS 1000
/* The same for a head whose command is still ending, whose GCS ends with its pod and whose
 * controller re-creates it only once it has ended (Ray took 2-3.5 s to stop there on the real
 * node): a second longer, for the command's driver, SIGTERMed first, to end before its GCS is
 * killed under it. */
#define HEAD_RAY_STOP_TIMEOUT_MS 2000
/* Ray's node is its raylet and, on the head, its GCS. `ray start`, SIGTERMed, stops them first
 * (the raylet, then the GCS), then its agents, dashboard and monitors one after another, giving
 * each up to 1 s. Once the node's daemons have ended, nothing left in its group has anything to
 * hand over, and what is left is killed at once (on the node, a deleted GCS FT head whose command
 * was still ending: 1.05 s after ray start's SIGTERM, not at the 2 s bound); until then it is
 * looked at this often. The GCS is waited for only while the head's command runs, for its driver
 * to end before it: otherwise its own stop only flushes its events to the dashboard agent, gone
 * with the raylet (it took past ray start's 1 s on the node, a deleted GCS FT head whose raylet
 * had left as soon as it was drained), and its state is in Redis under fault tolerance or ends
 * with the pod without it. */
#define RAY_NODE_ENDED_POLL_MS 50
static const char *const RAY_NODE_DAEMONS[] = {"raylet", "gcs_server"}; /* the GCS last: it may go unwaited */
#define RAY_NODE_DAEMONS_N (sizeof(RAY_NODE_DAEMONS) / sizeof(RAY_NODE_DAEMONS[0]))
/* How long the user's command gets between SIGTERM and SIGKILL when Ray dies under it. */
#define COMMAND_STOP_TIMEOUT_MS 10000
/* Workers look at the head this often: cheap (one DNS query and two small RPCs). */
#define WORKER_MONITOR_INTERVAL_MS 2000
/* While the head does not answer, this often: its successor's GCS is seen within half a second
 * of serving (at 2 s a worker noticed it a second late on average). */
#define WORKER_LOST_INTERVAL_MS 500
/* What the old Ray left is given this long to end on SIGTERM before Ray starts again: it is a
 * cluster's that is over (a raylet whose GCS is gone may sit out its own unregistering, and
 * Ray's agents poll for their raylet), and each second here is one the new cluster waits. */
#define OLD_RAY_GONE_MS 1000
/* How long ray start and its daemons get after SIGTERM when a worker leaves a head that is gone or
 * new: its cluster is over, nothing of it is handed over. */
#define LEFT_RAY_STOP_TIMEOUT_MS 1000
/* While a worker's watch holds the head's rendezvous, its end is told at once: the looks are only
 * a safety net (a head whose node vanished sends no FIN; a replaced head says nothing). */
#define WORKER_WATCHED_INTERVAL_MS 15000
/* A watch that was lost (no rendezvous, or it went away) is tried again after this long. */
#define WORKER_WATCH_RETRY_MS 30000
/* What Ray and the command leave behind once both have ended (a raylet's orphaned workers, a
 * command's daemon) is told SIGTERM and given this long, then killed: the pod's work is over, and
 * waiting for them to the grace period's end held an evicted head's pod 24 s. */
#define LEFTOVERS_GONE_MS 2000
/* After its command ends, the head keeps its GCS up until no worker is ALIVE or this long, so
 * that every worker without a watch reads the "finished" key on its next look
 * (WORKER_MONITOR_INTERVAL_MS) and leaves by itself. */
#define HEAD_LINGER_MS 8000
#define HEAD_LINGER_POLL_MS 250
#define FINISHED_KEY "finished"
/* A whole cluster deleted at once (Kueue's preemption suspends the Job, a JobSet or an LWS group is
 * deleted): the workers drain through the head's GCS at the moment the head is told to stop. The
 * head keeps its GCS up while a worker's drain is under way, and this long after its SIGTERM for a
 * first one to begin: a head deleted alone sees none and stops after it. */
#define HEAD_DRAIN_SETTLE_MS 600
/* Once one worker's drain was seen, the cluster is going: the others' SIGTERMs may come this long
 * after the last drain seen begin or end (the kubelet's skew between pods deleted together reached
 * 0.69 s on a loaded 2-core node, past the first window). */
#define HEAD_DRAIN_STRAGGLER_MS 1000
#define HEAD_DRAIN_POLL_MS 50
/* After the last worker left, each draining worker's next look (DRAIN_POLL_MS) must still find the
 * GCS, to see its node gone. */
#define HEAD_DRAIN_SEEN_MS (DRAIN_POLL_MS + 150)
/* Ray's cleanup starts Python and imports ray (a few seconds), then deletes the keys. */
#define STORE_CLEAN_TIMEOUT_MS 30000

/* Drives the drain with blocking prober calls, reading signals between looks. Stops early when
 * ray start is gone: its raylet exits by itself once the drain is through; with ACCEPTED_ENOUGH,
 * as soon as the GCS has accepted it. */
static void drive_drain(struct pod *pod, struct drain *d, bool accepted_enough)
{
    struct prober_request req;
    struct prober_reply reply;
    struct wait_stop wake = pod_waiter(pod, POD_WAKE_ON_SIGNAL);
    long wake_ms;
    enum drain_next step;
    while (pod->ray_pid > 0 && (step = drain_step(d, monotime_ms(), &req, &wake_ms)) != DRAIN_NEXT_DONE) {
        if (step == DRAIN_NEXT_SLEEP) {
            wait_sleep(wake_ms - monotime_ms(), &wake);
            continue;
        }
        if (pod_ask(pod, req, &reply) == PROBER_DIED) {
            if (pod->prober.pid <= 0)
                log_warn("%s", reply.reason);
            drain_reply(d, monotime_ms(), NULL);
        } else {
            bool requesting = d->state == DRAIN_REQUESTING;
            drain_reply(d, monotime_ms(), &reply);
            if (requesting && d->state == DRAIN_WATCHING && accepted_enough) {
                log_info("drain of node %s accepted; the head does not wait for it to leave", d->node_name);
                return;
            }
            if (requesting && d->state == DRAIN_WATCHING)
                log_info("drain of node %s accepted; waiting for it to leave", d->node_name);
        }
    }
}

/* What SIGTERM did to the head's command, for the termination message. */
/* How long the drain has run, for a log line. */
static double drain_seconds(const struct drain *d)
{
    long ms = drain_elapsed_ms(d, monotime_ms());
    return (double)ms / 1000.0;
}

static const char *command_fate(const struct pod *pod)
{
    if (pod->plan.role != PLAN_ROLE_HEAD || pod->plan.command.len == 0 || pod->cmd_exited)
        return "";
    return pod->cmd_pid > 0 ? "the command was stopped before it finished; " : "the command never ran; ";
}

/* The head, told to stop, keeps its GCS up (bounded by UNTIL) while its workers drain through it:
 * as long as one reports DRAINING, HEAD_DRAIN_SETTLE_MS past SIGTERM, and HEAD_DRAIN_STRAGGLER_MS
 * past the last change seen while any is ALIVE. Without this a whole cluster deleted at once lost
 * its GCS before the workers' drains were through (seen under Kueue's preemption): they ended
 * "stopped without a drain". */
static void wait_workers_drains(struct pod *pod, long started, long until)
{
    struct wait_stop wake = pod_waiter(pod, POD_WAKE_ON_SIGNAL);
    struct prober_reply nodes;
    long settle_end = started + HEAD_DRAIN_SETTLE_MS, now, last_alive = -1, first_alive = -1;
    bool seen = false;
    while (pod->ray_pid > 0 && (now = monotime_ms()) < until) {
        if (pod_ask(pod, prober_req_nodes(pod->gcs_addr, pod->plan.head_port, until - now), &nodes) != PROBER_OK)
            return; /* no GCS to keep up */
        if (first_alive < 0)
            first_alive = nodes.alive_workers;
        if (nodes.draining_workers > 0 || (last_alive >= 0 && nodes.alive_workers != last_alive)) {
            seen = true;
            settle_end = monotime_ms() + HEAD_DRAIN_STRAGGLER_MS;
        }
        last_alive = nodes.alive_workers;
        if (nodes.draining_workers == 0 && (nodes.alive_workers == 0 || monotime_ms() >= settle_end))
            break;
        wait_sleep(HEAD_DRAIN_POLL_MS, &wake);
    }
    /* None ALIVE at the first look: they may all have drained in the instant before it. */
    if (seen)
        log_info("the workers' drains are through (%ld of %ld workers left, %ld still ALIVE) %.2f s after SIGTERM; "
                 "keeping the GCS up %.2f s more for their last looks",
                 first_alive - last_alive, first_alive, last_alive, (double)(monotime_ms() - started) / 1000.0,
                 (double)HEAD_DRAIN_SEEN_MS / 1000.0);
    else if (first_alive == 0)
        log_info("no worker is ALIVE: keeping the GCS up %.2f s for any that has just drained to see its node gone",
                 (double)HEAD_DRAIN_SEEN_MS / 1000.0);
    else
        return;
    /* Slept to the end: a signal (the command's SIGCHLD, as it ends on its own SIGTERM) wakes it. */
    if (until - monotime_ms() > HEAD_DRAIN_SEEN_MS)
        for (long seen_until = monotime_ms() + HEAD_DRAIN_SEEN_MS, left; (left = seen_until - monotime_ms()) > 0;)
            wait_sleep(left, &wake);
}

/* The head's command still runs: its driver needs the GCS until it has ended. */
static bool driver_may_run(const struct pod *pod)
{
    return pod->plan.role == PLAN_ROLE_HEAD && pod->cmd_pid > 0;
}

/* Looked at before ray start is SIGTERMed (its daemons may end within the instant after): only a
 * node seen running can be seen ended. */
static void note_ray_node(struct pod *pod)
{
    pod->ray_node_seen = proc_group_has(pod->ray_pid, RAY_NODE_DAEMONS, RAY_NODE_DAEMONS_N);
}

/* ray start, SIGTERMed with nothing left to hand over, whose node's daemons have ended (its GCS
 * too while the head's command runs): what is left of its group (agents, dashboard, monitors, a
 * GCS flushing its events) would only be stopped one by one. */
static bool ray_node_ended(const struct pod *pod)
{
    size_t waited = driver_may_run(pod) ? RAY_NODE_DAEMONS_N : RAY_NODE_DAEMONS_N - 1;
    return pod->ray_node_seen && pod->ray_pid > 0 && !proc_group_has(pod->ray_pid, RAY_NODE_DAEMONS, waited);
}

/* SIGTERM: drain through the GCS, wait (bounded) for the node to leave, then stop. The head does
 * not wait for its own node: the cluster's GCS ends with its pod, so nothing can leave its node
 * for another, and every second it lingers is a second before its controller re-creates it
 * (Volcano's RestartTask and the Job controller wait for the old pod); it waits only for workers
 * draining at the same time (wait_workers_drains). */
static void shut_down(struct pod *pod)
{
    long started = monotime_ms();
    long budget = pod->settings.grace_period_ms - SETTINGS_GRACE_MARGIN_MS;
    const char *fate = command_fate(pod), *how = NULL;
    long stop_after;
    struct drain d;
    char reason[256];

    pod->stopping = true;
    pod->exit_code = pod_stop_exit_code(pod);
    if (pod->cmd_pid > 0) {
        pod->cmd_stopped = true;
        proc_signal_group(pod->cmd_pid, SIGTERM);
    }
    if (pod->ray_pid > 0 && pod->plan.node_name[0] && pod->gcs_addr[0]) {
        snprintf(reason, sizeof(reason), "rayboot: pod %.200s is being terminated (SIGTERM)", pod->plan.pod_name);
        /* Half the budget for the drain, the rest for Ray to stop. */
        drain_begin(&d, pod->gcs_addr, pod->plan.head_port, pod->plan.node_name, reason, budget / 2, started);
        log_info("draining node %s (up to %.1f s)", pod->plan.node_name, (double)budget / 2000.0);
        drive_drain(pod, &d, pod->plan.role == PLAN_ROLE_HEAD);
        if (d.state == DRAIN_WATCHING) {
            pod->drained = true; /* accepted: the GCS draws no new work to it */
        } else if (d.state == DRAIN_DONE && d.outcome == DRAIN_FAILED) {
            log_warn("could not drain node %s: %s; stopping without a drain", pod->plan.node_name, d.detail);
        } else if (d.state == DRAIN_DONE && d.outcome == DRAIN_GCS_LOST) {
            pod->drained = true; /* accepted: what it says, no more */
            how = "node drain accepted, its GCS gone before the node was seen leaving";
            log_warn("drain of node %s accepted, then its GCS stopped answering (%s): not seen leaving",
                     pod->plan.node_name, d.detail);
        } else if (d.state == DRAIN_DONE && d.outcome == DRAIN_DEADLINE) {
            log_warn("node %s was still in the cluster after %.1f s of draining; stopping it", pod->plan.node_name,
                     drain_seconds(&d));
        } else if (d.state == DRAIN_DONE && d.earlier) {
            /* The usual case beside rayboot-sidecar: its preStop drain ran before this SIGTERM. */
            pod->drained = true;
            log_info("%s before SIGTERM (by the pod's preStop hook, or the sidecar)", d.detail);
        } else {
            /* Left the GCS, or its raylet exited by itself once drained (ray start is gone). */
            pod->drained = true;
            log_info("node %s left the cluster after %.2f s of draining", pod->plan.node_name, drain_seconds(&d));
        }
    } else if (pod->ray_pid > 0) {
        log_warn("this pod's Ray node name is unknown (no hostname; set RAYBOOT_POD_NAME): stopping without a drain");
    }
    if (pod->plan.role == PLAN_ROLE_HEAD && pod->ray_pid > 0 && pod->gcs_addr[0])
        wait_workers_drains(pod, started, started + budget / 2);
    if (!how)
        how = pod->drained ? "node drained" : "stopped without a drain";
    /* The termination message says how long Ray took to stop, where it is this reason's. */
    if (!pod->end_reason[0] && pod->ray_pid > 0)
        pod->ray_stop_ms = monotime_ms();
    pod_end_reason(pod, "SIGTERM: %s%s; Ray stopped", fate, how);
    note_ray_node(pod);
    pod_stop_ray(pod, started + budget - monotime_ms());
    /* ray start alone, which stops its daemons in its own order: a worker's pod went in 1.3 s
     * so, and in 6.5 s with the whole group SIGTERMed at once (ray start then sat in its loop until
     * its 5 s SIGKILL: bench/node/evict.py, 2 of 2 rounds); the head's GCS goes last, so that a
     * command's driver still running ends by itself rather than abort on a GCS gone under it. A
     * head whose command has ended has no such driver: it gets a drained worker's bound (its
     * ray start sat out the 2 s after its drain on the node, bench/node/headlost.py, and its
     * controller makes the next head only once this pod has gone). */
    stop_after = driver_may_run(pod) ? HEAD_RAY_STOP_TIMEOUT_MS : DRAINED_RAY_STOP_TIMEOUT_MS;
    if (pod->drained && pod->ray_pid > 0 && pod->kill_at_ms - monotime_ms() > stop_after)
        pod->ray_kill_at_ms = monotime_ms() + stop_after;
    log_info("stopping Ray; everything left is killed in %.1f s", (double)(pod->kill_at_ms - monotime_ms()) / 1000.0);
}

/* ray start, SIGTERMed with nothing left to hand over (its node drained, or its cluster gone), has
 * not exited in time, or its node's daemons have ended (NODE_ENDED): only it and what is left of
 * its group are killed; the command (a head's) keeps the rest of its grace period. */
static void kill_stopping_ray(struct pod *pod, bool node_ended)
{
    pod->ray_kill_at_ms = 0;
    if (pod->ray_pid <= 0)
        return;
    if (node_ended)
        log_info("%s: killing what is left of ray start's",
                 pod->plan.role != PLAN_ROLE_HEAD ? "Ray's raylet has ended"
                 : driver_may_run(pod)            ? "Ray's raylet and GCS have ended"
                                       : "Ray's raylet and the command have ended (its GCS goes with the rest)");
    else
        log_warn("ray start did not exit in time after SIGTERM although %s: killing it",
                 pod->restarting_ray ? "its cluster is gone" : "its node was drained");
    proc_signal_group(pod->ray_pid, SIGKILL);
}

/* A worker leaves a head that is gone or new: ray start and its daemons get SIGTERM together
 * (repeated at each look until they have gone) and LEFT_RAY_STOP_TIMEOUT_MS, then SIGKILL. */
static void leave_old_ray(struct pod *pod)
{
    pod->restarting_ray = true;
    if (!pod->ray_kill_at_ms)
        note_ray_node(pod);
    pod_stop_ray_at_once(pod);
    if (!pod->ray_kill_at_ms)
        pod->ray_kill_at_ms = monotime_ms() + LEFT_RAY_STOP_TIMEOUT_MS;
}

/* Waits (bounded) until no worker is ALIVE: they leave once they read the "finished" key. The
 * expected count does not matter; an Indexed Job does not even know it. */
static void wait_workers_gone(struct pod *pod)
{
    long deadline = monotime_ms() + HEAD_LINGER_MS;
    struct wait_stop stop = pod_waiter(pod, POD_WAKE_ON_STOP);
    struct prober_reply nodes;
    while (monotime_ms() < deadline && pod->ray_pid > 0 && !pod->term_requested) {
        if (pod_ask(pod, prober_req_nodes(pod->gcs_addr, pod->plan.head_port, 0), &nodes) == PROBER_OK &&
            nodes.alive_workers == 0)
            return;
        wait_sleep(HEAD_LINGER_POLL_MS, &stop);
    }
}

/* The head's command ended: tell the workers, let them leave, stop Ray. */
static void command_done(struct pod *pod)
{
    struct prober_reply reply;
    char code[16];
    pod->exit_code = proc_exit_code(pod->cmd_status);
    pod_end_reason(pod, "the command exited with %d", pod->exit_code);
    pod->job_finished = true;
    pod->stopping = true;
    snprintf(code, sizeof(code), "%d", pod->exit_code);
    /* The key first: it is for the workers that hold no rendezvous, and what those without Ray's
     * token check the rendezvous' FINISHED against. Then the workers holding it leave at once. */
    bool put =
        pod->ray_pid > 0 &&
        pod_ask(pod, prober_req_kv_put(pod->gcs_addr, pod->plan.head_port, FINISHED_KEY, code, 0), &reply) == PROBER_OK;
    rendezvous_finished(&pod->rendezvous);
    if (put) {
        log_info("the command is done (exit %d); waiting for the workers to leave before Ray stops", pod->exit_code);
        wait_workers_gone(pod);
    }
    pod_stop_ray(pod, RAY_STOP_TIMEOUT_MS);
}

/* Before Ray starts again in this pod, what the old one left must be gone: its raylet, agents and
 * workers (orphans, ours as PID 1 or subreaper) hold its fixed ports (the metrics port) and would
 * make the new raylet fail to start. SIGTERM, OLD_RAY_GONE_MS to go, then SIGKILL; our own
 * helpers (the prober) stay. */
static void clear_old_ray(struct pod *pod)
{
    const pid_t keep[] = {pod->prober.pid, pod->rendezvous.pid, pod->watch.pid};
    long until = monotime_ms() + OLD_RAY_GONE_MS;
    struct timespec tick = {0, 50 * 1000 * 1000};
    int n = proc_signal_children_except(SIGTERM, keep, sizeof(keep) / sizeof(keep[0]));
    if (n == 0)
        return;
    log_info("waiting for %d processes of the old Ray to end before Ray starts again", n);
    for (;;) {
        pod_reap(pod);
        if (proc_signal_children_except(0, keep, sizeof(keep) / sizeof(keep[0])) == 0)
            return;
        if (monotime_ms() >= until)
            break;
        nanosleep(&tick, NULL);
    }
    n = proc_signal_children_except(SIGKILL, keep, sizeof(keep) / sizeof(keep[0]));
    log_warn("killed %d processes of the old Ray still running after %.0f s", n, OLD_RAY_GONE_MS / 1000.0);
    for (int i = 0; i < 20 && proc_signal_children_except(0, keep, sizeof(keep) / sizeof(keep[0])) > 0; i++) {
        nanosleep(&tick, NULL);
        pod_reap(pod);
    }
}

/* Whether this Ray's node left by a drain (the GCS's word, since this Ray started). */
static bool ray_was_drained(struct pod *pod, enum gcs_departure *how)
{
    struct prober_reply reply;
    struct timespec now;
    long long started_unix_ms;
    if (pod_ask(pod, prober_req_departure(pod->gcs_addr, pod->plan.head_port, pod->plan.node_name, 0), &reply) !=
        PROBER_OK)
        return false;
    clock_gettime(CLOCK_REALTIME, &now);
    started_unix_ms = (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000 - (monotime_ms() - pod->ray_started_ms);
    *how = reply.departure;
    return rayrestart_was_drained(reply.departure, reply.departed_ms, started_unix_ms);
}

/* Ray left because its node was drained (the sidecar's preStop drain, or anyone's): the pod is
 * most likely being deleted, and the kubelet's SIGTERM comes within the grace period of the drain's
 * start, which was before. It is waited for that long; when none comes no deletion followed the
 * drain, and Ray starts again without counting toward RAYRESTART_MAX: before, a process of the pod
 * that asked for a drain once per grace period ended the pod as a failure on the fourth. */
static void restart_after_drain(struct pod *pod, enum gcs_departure how)
{
    struct wait_stop stop = pod_waiter(pod, POD_WAKE_ON_STOP);
    pod->drained_seen_ms = 0;
    log_info("Ray left: its node was drained (the GCS says %s); waiting up to %.0f s (RAYBOOT_GRACE_PERIOD) for "
             "this pod's deletion before starting it again (a drain does not count toward the restart limit)",
             gcs_departure_name(how), (double)pod->settings.grace_period_ms / 1000.0);
    if (wait_sleep(pod->settings.grace_period_ms, &stop) < 0 || pod->term_requested) {
        pod->stopping = true;
        pod->exit_code = pod->settings.eviction_exit_code;
        return;
    }
    log_warn("no deletion of this pod followed the drain of its node within %.0f s: starting Ray again to join the "
             "head at %s (not counted toward the restart limit)",
             (double)pod->settings.grace_period_ms / 1000.0, pod->gcs_addr);
    clear_old_ray(pod);
    if (pod_join_head(pod) < 0)
        pod->stopping = true;
}

/* A worker's Ray died while its head is up under the same cluster (an OOM kill, a crash): the
 * node's actors are gone, but the pod can still serve the cluster, so Ray starts again after a
 * delay, RAYRESTART_MAX times in a row at most (rayrestart.h); after that the pod ends with Ray's
 * code, for the controller to see. A Ray whose node was drained is not a death (restart_after_drain). */
static void restart_ray_under_head(struct pod *pod)
{
    int code = proc_exit_code(pod->ray_status);
    enum gcs_departure how = GCS_DEPARTURE_UNKNOWN;
    struct wait_stop stop = pod_waiter(pod, POD_WAKE_ON_STOP);
    long delay;
    if (ray_was_drained(pod, &how)) {
        restart_after_drain(pod, how);
        return;
    }
    delay = rayrestart_next_ms(&pod->ray_restarts, pod->ray_started_ms, monotime_ms());
    if (delay < 0) {
        pod->stopping = true;
        pod->exit_code = code ? code : 1; /* ray start --block only returns when something went wrong */
        log_error("Ray exited (%d) while its head is up, after %d starts again in a row: ending the pod", code,
                  RAYRESTART_MAX);
        pod_end_reason(pod, "Ray exited (%d) while its head was up, %d times in a row", code, RAYRESTART_MAX + 1);
        return;
    }
    log_warn("Ray exited (%d) while its head is up (same cluster): starting it again in %.0f s (%d of at most %d in "
             "a row)",
             code, (double)delay / 1000.0, pod->ray_restarts.count, RAYRESTART_MAX);
    if (wait_sleep(delay, &stop) < 0 || pod->term_requested) {
        pod->stopping = true;
        pod->exit_code = pod->settings.eviction_exit_code;
        return;
    }
    clear_old_ray(pod);
    log_info("starting Ray again to join the head at %s", pod->gcs_addr);
    if (pod_join_head(pod) < 0)
        pod->stopping = true;
}

/* A worker's Ray ended on its own. Under a head that is up as the same cluster it is started
 * again; a lost or new head is waited for and joined again. */
static void worker_ray_ended(struct pod *pod)
{
    struct errbuf err;
    enum wait_result res;

    rdvwatch_stop(&pod->watch); /* it watched the head Ray left; a new one follows the new Ray */
    pod->watch_ended = false;
    pod->ray_kill_at_ms = 0; /* it was for the Ray that has ended, not the next one */
    if (pod->job_finished) {
        pod->stopping = true;
        pod->exit_code = 0;
        return;
    }
    if (!pod->restarting_ray) {
        struct prober_reply reply;
        if (pod_ask(pod, prober_req_cluster_id(pod->gcs_addr, pod->plan.head_port, 0), &reply) == PROBER_OK &&
            strcmp(reply.value, pod->cluster_id) == 0) {
            restart_ray_under_head(pod);
            return;
        }
        log_info("Ray exited and the head is gone or new; waiting up to %.0f s to join it again",
                 (double)pod->settings.head_loss_timeout_ms / 1000.0);
    }
    pod->restarting_ray = false;
    /* Confirmed by a Health/Check: a head whose word is wrong (its GCS gone again, a rendezvous
     * that lies) then starts this Ray once, not once per round of this loop. */
    res = pod_wait_gcs(pod, pod->plan.head_fqdn, pod->settings.head_loss_timeout_ms, true, &err);
    if (res == WAIT_STOPPED) {
        pod->stopping = true;
        pod->exit_code = pod->settings.eviction_exit_code;
        return;
    }
    if (res != WAIT_READY) {
        log_error("the head did not come back: %s", err.msg);
        pod_end_reason(pod, "the head did not come back: %s", err.msg);
        pod->stopping = true;
        pod->exit_code = 1;
        return;
    }
    pod->head_lost_since_ms = 0;
    clear_old_ray(pod);
    log_info("joining the head again at %s", pod->gcs_addr);
    if (pod_join_head(pod) < 0)
        pod->stopping = true;
}

/* The head's command finished: the worker stops Ray and ends 0, whoever told it. */
static void head_finished(struct pod *pod, const char *how)
{
    log_info("the head's command finished (%s): stopping Ray", how);
    pod_end_reason(pod, "the head's command finished (%s)", how);
    pod->job_finished = true;
    pod->stopping = true;
    pod->exit_code = 0;
    pod_stop_ray(pod, RAY_STOP_TIMEOUT_MS);
}

/* A joined worker holds the head's rendezvous through a watch child (init/rdvwatch.c): started
 * once Ray runs and the head answered, again WORKER_WATCH_RETRY_MS after one was lost. Off with
 * RAYBOOT_RENDEZVOUS_PORT=0. */
static void watch_head(struct pod *pod)
{
    struct errbuf err;
    long now = monotime_ms();
    if (pod->plan.role != PLAN_ROLE_WORKER || pod->stopping || pod->ray_pid == 0 || pod->restarting_ray ||
        pod->settings.rendezvous_port == 0 || pod->watch.pid > 0 || !pod->gcs_addr[0] || pod->head_lost_since_ms ||
        now < pod->watch_retry_ms)
        return;
    if (rdvwatch_start(&pod->watch, pod->gcs_addr, pod->settings.rendezvous_port, pod->rdv_keyed ? &pod->rdv_key : NULL,
                       pod->cluster_id, &err) < 0) {
        log_warn("cannot watch the head's rendezvous (%s): looking at the head every %d s", err.msg,
                 WORKER_MONITOR_INTERVAL_MS / 1000);
        pod->watch_retry_ms = now + WORKER_WATCH_RETRY_MS;
        return;
    }
    if (!pod->watch_quiet)
        log_info("watching the head's rendezvous at %s port %d (pid %d): leaving when its command ends; looking at "
                 "the head every %d s meanwhile",
                 pod->gcs_addr, pod->settings.rendezvous_port, (int)pod->watch.pid, WORKER_WATCHED_INTERVAL_MS / 1000);
    pod->next_monitor_ms = now + WORKER_WATCHED_INTERVAL_MS;
}

/* Without Ray's token nothing tells the head's rendezvous from a process that took its port
 * first: its FINISHED counts only when the head's GCS has the "finished" key, which the head writes
 * before it. */
static bool finished_confirmed(struct pod *pod)
{
    struct prober_reply reply;
    if (pod_ask(pod, prober_req_kv_get(pod->gcs_addr, pod->plan.head_port, FINISHED_KEY, 0), &reply) != PROBER_OK)
        return false;
    log_info("the rendezvous' FINISHED is confirmed by the head's GCS (its \"%s\" key: exit %s)", FINISHED_KEY,
             reply.value);
    return true;
}

/* The watch has ended: FINISHED (the head's, by its tag or its GCS) takes the path the "finished" key takes; anything
 * else makes the worker look at its head at once and every WORKER_MONITOR_INTERVAL_MS, as without a rendezvous. */
static void watch_ended(struct pod *pod)
{
    struct errbuf err;
    enum rdvwatch_outcome outcome;
    if (!pod->watch_ended)
        return;
    pod->watch_ended = false;
    outcome = rdvwatch_outcome(pod->watch_status, &err);
    if (pod->stopping || pod->plan.role != PLAN_ROLE_WORKER)
        return;
    if (outcome == RDVWATCH_FINISHED && (pod->rdv_keyed || finished_confirmed(pod))) {
        head_finished(pod, "told by its rendezvous");
        return;
    }
    if (outcome == RDVWATCH_FINISHED)
        errbuf_set(&err, "it said FINISHED, and the head's GCS has no \"%s\" key: not the head's word, ignored",
                   FINISHED_KEY);
    /* A head without a rendezvous (an older rayboot, or it is off there) is as the wait for it says
     * it, once and no warning; one that was held and went away, every time. */
    if (outcome == RDVWATCH_UNREACHABLE && !pod->watch_quiet)
        log_info("no rendezvous to watch at %s port %d (%s): looking at the head every %d s, watching again in %d s",
                 pod->gcs_addr, pod->settings.rendezvous_port, err.msg, WORKER_MONITOR_INTERVAL_MS / 1000,
                 WORKER_WATCH_RETRY_MS / 1000);
    else if (outcome != RDVWATCH_UNREACHABLE)
        log_warn("the watch on the head's rendezvous ended: %s; looking at the head every %d s, watching again in "
                 "%d s",
                 err.msg, WORKER_MONITOR_INTERVAL_MS / 1000, WORKER_WATCH_RETRY_MS / 1000);
    pod->watch_quiet = outcome == RDVWATCH_UNREACHABLE;
    pod->watch_retry_ms = monotime_ms() + WORKER_WATCH_RETRY_MS;
    pod->next_monitor_ms = monotime_ms();
}

/* The head has not answered for RAY_gcs_rpc_server_reconnect_timeout_s: the time Ray's raylet
 * itself keeps trying a lost GCS before it exits. A raylet still up by then would stay Running
 * and useless for as long as the pod lives (ray#64349: workers left Running, un-Ready, after a
 * head restart); its Ray is stopped, then waited for and joined again as when Ray ends with its
 * head gone (RAYBOOT_HEAD_LOSS_TIMEOUT). The SIGTERM is repeated at each look until it is gone. */
static void give_up_on_gcs(struct pod *pod)
{
    if (!rayrestart_reconnect_expired(pod->head_lost_since_ms, monotime_ms(), pod->settings.gcs_reconnect_timeout_ms))
        return;
    if (!pod->restarting_ray)
        log_warn("the head %s:%d has not answered for %.0f s (RAY_gcs_rpc_server_reconnect_timeout_s=%ld): this "
                 "node cannot reach any GCS; stopping Ray to wait for the head and join it again",
                 pod->plan.head_fqdn, pod->plan.head_port, (double)(monotime_ms() - pod->head_lost_since_ms) / 1000.0,
                 pod->settings.gcs_reconnect_timeout_ms / 1000);
    leave_old_ray(pod);
}

/* A drained node whose `ray start --block` stays: Ray 2.60's raylet leaves with exit 0 once its
 * node is drained, which `ray start --block` takes for a graceful exit and keeps blocking, so the
 * pod would hold no node for as long as it lives (seen on real Ray: e2e/test_sidecar_drain.py).
 * Seen at the periodic look (the GCS's record of a drain since this Ray started); when no SIGTERM
 * came within RAYBOOT_GRACE_PERIOD (no deletion followed the drain), the Ray left without a node is
 * stopped and joined again, as after a head loss: not counted toward the restart limit. */
static void drained_under_ray(struct pod *pod)
{
    enum gcs_departure how = GCS_DEPARTURE_UNKNOWN;
    long now = monotime_ms(), due;
    if (pod->restarting_ray)
        return;
    if (!pod->drained_seen_ms) {
        if (!ray_was_drained(pod, &how))
            return;
        pod->drained_seen_ms = now;
        log_info("this node was drained (the GCS says %s) and its raylet has left while `ray start` runs on: "
                 "waiting up to %.0f s (RAYBOOT_GRACE_PERIOD) for this pod's deletion",
                 gcs_departure_name(how), (double)pod->settings.grace_period_ms / 1000.0);
    }
    due = pod->drained_seen_ms + pod->settings.grace_period_ms;
    if (now < due) {
        if (due < pod->next_monitor_ms)
            pod->next_monitor_ms = due;
        return;
    }
    log_warn("no deletion of this pod followed the drain of its node within %.0f s: stopping the Ray left without a "
             "node, to join the head again (not counted toward the restart limit)",
             (double)pod->settings.grace_period_ms / 1000.0);
    pod->drained_seen_ms = 0;
    pod->restarting_ray = true;
    kill(pod->ray_pid, SIGTERM);
}

/* A worker's periodic look at its head: finished? replaced? gone? And its own node: drained? */
static void monitor_head(struct pod *pod)
{
    struct prober_reply reply;
    bool same;
    if (pod->plan.role != PLAN_ROLE_WORKER || pod->stopping || pod->ray_pid == 0 ||
        monotime_ms() < pod->next_monitor_ms)
        return;
    pod->next_monitor_ms =
        monotime_ms() + (pod->watch.pid > 0 ? WORKER_WATCHED_INTERVAL_MS : WORKER_MONITOR_INTERVAL_MS);
    if (pod_ask(pod, prober_req_resolve(pod->plan.head_fqdn, 0), &reply) == PROBER_OK)
        snprintf(pod->gcs_addr, sizeof(pod->gcs_addr), "%s", reply.addr);
    if (pod_ask(pod, prober_req_cluster_id(pod->gcs_addr, pod->plan.head_port, 0), &reply) != PROBER_OK) {
        if (pod->head_lost_since_ms == 0) {
            pod->head_lost_since_ms = monotime_ms();
            log_warn("lost the head %s:%d: %s", pod->plan.head_fqdn, pod->plan.head_port, reply.reason);
        }
        /* A watch still held on a head that does not answer (its node gone, no FIN) only slows the
         * looks down: let it go; it is started again once the head answers. */
        if (pod->watch.pid > 0)
            rdvwatch_stop(&pod->watch);
        pod->next_monitor_ms = monotime_ms() + WORKER_LOST_INTERVAL_MS;
        give_up_on_gcs(pod);
        return;
    }
    same = !pod->cluster_id[0] || strcmp(reply.value, pod->cluster_id) == 0;
    if (pod->head_lost_since_ms && same)
        log_info("the head answers again after %.1f s, as the same cluster: Ray keeps running",
                 (double)(monotime_ms() - pod->head_lost_since_ms) / 1000.0);
    else if (pod->head_lost_since_ms)
        log_info("the head answers again");
    pod->head_lost_since_ms = 0;
    if (!same) {
        /* Said once; the SIGTERM is repeated at each look until ray start has gone. */
        if (!pod->restarting_ray)
            log_info("the head is a new cluster (id %.12s..., was %.12s...): leaving the old one to join it",
                     reply.value, pod->cluster_id);
        leave_old_ray(pod);
        return;
    }
    if (pod_ask(pod, prober_req_kv_get(pod->gcs_addr, pod->plan.head_port, FINISHED_KEY, 0), &reply) == PROBER_OK) {
        char how[sizeof(reply.value) + 8];
        snprintf(how, sizeof(how), "exit %s", reply.value);
        head_finished(pod, how);
        return;
    }
    drained_under_ray(pod);
}

/* Reacts to what changed since the last turn of the loop. */
static void decide(struct pod *pod)
{
    if (pod->term_requested && !pod->stopping) {
        shut_down(pod);
    } else if (pod->cmd_exited && !pod->stopping) {
        command_done(pod);
    } else if (pod->ray_exited && !pod->stopping) {
        pod->ray_exited = false;
        if (pod->cmd_pid > 0) {
            pod->exit_code = proc_exit_code(pod->ray_status) ? proc_exit_code(pod->ray_status) : 1;
            log_error("Ray died under the command (ray start exited %d); stopping the command",
                      proc_exit_code(pod->ray_status));
            pod_end_reason(pod, "Ray died under the command (ray start exited %d)", proc_exit_code(pod->ray_status));
            pod->stopping = true;
            proc_signal_group(pod->cmd_pid, SIGTERM);
            pod->kill_at_ms = monotime_ms() + COMMAND_STOP_TIMEOUT_MS;
        } else if (pod->plan.role == PLAN_ROLE_WORKER) {
            worker_ray_ended(pod);
        } else {
            pod->stopping = true;
            pod->exit_code = proc_exit_code(pod->ray_status);
            pod_end_reason(pod, "ray start exited with %d", pod->exit_code);
        }
    }
}

/* The head's command ended by itself and its Ray has stopped: under GCS fault tolerance the job's
 * state in Redis (nodes, actors, the "finished" key) is deleted, so that nothing is left behind
 * (storeclean.c). Never after a SIGTERM that came first: a head evicted mid-job is re-created and
 * must find it. Under a SIGTERM after the command, the grace period still bounds it. */
static void clean_store(struct pod *pod)
{
    const char *const *env = (const char *const *)pod->ray_env.items;
    const char *ns = env_lookup_nonempty(env, "RAY_external_storage_namespace");
    struct errbuf err;
    if (pod->store_cleaning || pod->plan.role != PLAN_ROLE_HEAD || !pod->job_finished || !storeclean_wanted(env))
        return;
    pod->store_cleaning = true;
    if (storeclean_start(env_lookup_nonempty(env, "RAYBOOT_ROOT"), pod->ray_env.items, pod->plan.ray_start.items[0],
                         &pod->store_pid, &err) < 0) {
        log_warn("cannot delete the GCS's storage namespace %s from Redis: %s; delete its keys (RAY%s@*) by hand", ns,
                 err.msg, ns);
        return;
    }
    log_info("deleting the GCS's storage namespace %s from Redis (pid %d)", ns, (int)pod->store_pid);
    if (!pod->term_requested && pod->kill_at_ms < monotime_ms() + STORE_CLEAN_TIMEOUT_MS)
        pod->kill_at_ms = monotime_ms() + STORE_CLEAN_TIMEOUT_MS;
}

/* Ray and the command have ended and processes are left: SIGTERM, then SIGKILL within
 * LEFTOVERS_GONE_MS. Not while the head deletes its GCS state from Redis (its own bound). */
static void stop_leftovers(struct pod *pod)
{
    long until = monotime_ms() + LEFTOVERS_GONE_MS;
    int n;
    if (pod->leftovers_told || pod->store_pid > 0)
        return;
    pod->leftovers_told = true;
    n = proc_signal_children(SIGTERM);
    if (n > 0)
        log_info("Ray and the command have ended; %d processes they left get SIGTERM, and SIGKILL in %.0f s", n,
                 LEFTOVERS_GONE_MS / 1000.0);
    if (pod->kill_at_ms == 0 || pod->kill_at_ms > until)
        pod->kill_at_ms = until;
}

static bool children_left(void)
{
    siginfo_t info;
    memset(&info, 0, sizeof(info));
    /* WNOWAIT: only look; pod_reap() collects the status. */
    return waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) == 0;
}

static void kill_everything(struct pod *pod)
{
    int n = 0;
    if (pod->ray_pid > 0)
        proc_signal_group(pod->ray_pid, SIGKILL);
    if (pod->cmd_pid > 0)
        proc_signal_group(pod->cmd_pid, SIGKILL);
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
    pod->kill_at_ms = 0;
}

int supervise(struct pod *pod)
{
    struct wait_stop wake = pod_waiter(pod, POD_WAKE_ON_SIGNAL);
    for (;;) {
        long timeout = WORKER_MONITOR_INTERVAL_MS, now;

        decide(pod);
        watch_ended(pod);
        monitor_head(pod);
        watch_head(pod);
        if (pod->stopping && pod->ray_pid == 0 && pod->cmd_pid == 0) {
            clean_store(pod);
            /* The prober, the rendezvous and the watch are ours, not something to wait for (the rendezvous
             * left running held the head's pod until the deadline's SIGKILL). */
            if (pod->prober.pid > 0)
                prober_stop(&pod->prober);
            if (pod->rendezvous.pid > 0)
                rendezvous_stop(&pod->rendezvous);
            if (pod->watch.pid > 0)
                rdvwatch_stop(&pod->watch);
            if (!children_left())
                return pod->exit_code;
            if (pod->kill_at_ms == 0)
                pod->kill_at_ms = monotime_ms() + pod->settings.grace_period_ms - SETTINGS_GRACE_MARGIN_MS;
            stop_leftovers(pod);
        }
        now = monotime_ms();
        if (pod->kill_at_ms && now >= pod->kill_at_ms) {
            kill_everything(pod);
            continue;
        }
        if (pod->ray_kill_at_ms && (now >= pod->ray_kill_at_ms || ray_node_ended(pod))) {
            kill_stopping_ray(pod, now < pod->ray_kill_at_ms);
            continue;
        }
        if (pod->ray_kill_at_ms && pod->ray_kill_at_ms - now < timeout)
            timeout = pod->ray_kill_at_ms - now;
        if (pod->ray_kill_at_ms && RAY_NODE_ENDED_POLL_MS < timeout)
            timeout = RAY_NODE_ENDED_POLL_MS;
        if (pod->kill_at_ms && pod->kill_at_ms - now < timeout)
            timeout = pod->kill_at_ms - now;
        if (pod->plan.role == PLAN_ROLE_WORKER && !pod->stopping && pod->next_monitor_ms - now < timeout)
            timeout = pod->next_monitor_ms > now ? pod->next_monitor_ms - now : 0;
        if (wait_sleep(timeout, &wake) == 0)
            pod_reap(pod);
    }
}
