/* `rayboot [-- COMMAND]`: the life of a Ray pod, from the plan to the last reaped child. */
#ifndef RAYBOOT_INIT_RUN_H
#define RAYBOOT_INIT_RUN_H

#include <stdbool.h>
#include <sys/types.h>

#include "cli.h"
#include "dns.h"
#include "plan.h"
#include "prober.h"
#include "settings.h"
#include "wait.h"
#include "strv.h"

/* Everything the start-up and the supervisor share about this pod's processes. */
struct run {
    struct plan plan;
    struct settings settings;
    struct prober prober;
    int sigfd;
    struct strv ray_env; /* rayboot's environment plus the plan's, for ray start */
    struct strv cmd_env; /* the same plus RAY_ADDRESS, for the user's command */

    pid_t ray_pid; /* 0 when not running */
    pid_t cmd_pid;
    int ray_status; /* wait status, valid once ray_pid was reaped */
    int cmd_status;
    bool ray_exited;
    bool cmd_exited;

    bool term_requested; /* SIGTERM arrived: drain and stop */
    bool cmd_stopped;    /* SIGTERM stopped the head's command before it ended */
    bool stopping;       /* the end is decided; waiting for children to go */
    bool restarting_ray; /* a worker is leaving an old head to join a new one */
    bool job_finished;   /* the head's command is done (head: ran it; worker: read it in the GCS) */
    bool drained;        /* SIGTERM's drain finished: the node left the cluster */
    long kill_at_ms;     /* SIGKILL whatever is left at this time (0: not yet set) */
    int exit_code;

    char end_reason[512]; /* why the pod ends, for the termination log; the first cause wins */

    char gcs_addr[DNS_ADDR_MAX_BYTES]; /* where the GCS answered */
    char cluster_id[256];              /* the head we joined */
    long next_monitor_ms;
    long head_lost_since_ms; /* 0 while the head answers */
};

/* Returns rayboot's exit code. */
int run_main(const struct cli *cli, const char *const *envp);

/* Records why the pod ends (only the first call counts). */
void run_end_reason(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Waits for the head's GCS at name (re-resolved as it goes), reading signals; WAIT_STOPPED when a
 * SIGTERM or the end of Ray decided it. */
enum wait_result run_wait_gcs(struct run *r, const char *name, long deadline_ms, struct errbuf *err);
/* Waits (bounded by RAYBOOT_WORKERS_TIMEOUT) for the expected workers in the GCS at gcs_addr. */
void run_wait_workers(struct run *r, const char *gcs_addr);

/* supervise.c */
/* Reads every pending signal: reaps children, records SIGTERM, forwards the rest. */
void supervise_signals(struct run *r);
/* Supervises until every child is gone; returns the exit code. */
int supervise(struct run *r);
/* The exit code a SIGTERM gives: RAYBOOT_EVICTION_EXIT_CODE for a pod that runs no command (a
 * worker's graceful drain); on a head, its command's outcome, for a stopped job is not a finished
 * one (Volcano's TaskCompleted, an Indexed Job's succeeded index): the command's own code once
 * it has ended, 128+SIGTERM while it has not (and when it never ran). */
int supervise_sigterm_exit_code(const struct run *r);
/* Decides the end: SIGTERM to ray start now, SIGKILL to what is left after timeout_ms. */
void supervise_stop_ray(struct run *r, int exit_code, long timeout_ms);
/* Starts `ray start` with the plan's argv; exec failures set exit_code 126/127. */
int run_start_ray(struct run *r);

#endif
