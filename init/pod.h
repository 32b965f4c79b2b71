/* The pod's processes and what is known about them: the state the start-up (run.c), the
 * supervisor (supervise.c) and the submitter role share, and the few things all of them do to it
 * (start Ray, read signals, wait for the head, record why the pod ends). It calls none of them. */
#ifndef RAYBOOT_INIT_POD_H
#define RAYBOOT_INIT_POD_H

#include <stdbool.h>
#include <sys/types.h>

#include "dns.h"
#include "plan.h"
#include "prober.h"
#include "rayrestart.h"
#include "rdvwatch.h"
#include "settings.h"
#include "rdvauth.h"
#include "rendezvous.h"
#include "strv.h"
#include "wait.h"

struct pod {
    struct plan plan;
    struct settings settings;
    struct prober prober;
    struct rendezvous rendezvous; /* the head's: its waiting workers told when its GCS serves */
    struct rdvwatch watch;        /* a joined worker's: told when its head's command ends */
    int sigfd;
    struct strv ray_env; /* rayboot's environment plus the plan's, for ray start */
    struct strv cmd_env; /* the same plus RAY_ADDRESS, for the user's command */

    pid_t ray_pid; /* 0 when not running */
    pid_t cmd_pid;
    int ray_status; /* wait status, valid once ray_pid was reaped */
    int cmd_status;
    bool ray_exited;
    bool cmd_exited;

    bool interrupt_stops;           /* SIGINT and SIGHUP stop too, as SIGTERM does (the submitter) */
    bool token_mode;                /* Ray's token authentication: the GCS refuses calls without this pod's token */
    bool rdv_keyed;                 /* rdv_key is the token's: the rendezvous' messages are tagged (rdvauth.h) */
    struct hmac_sha256_key rdv_key; /* two hash states, not the token; bound to cluster_name */
    char cluster_name[PLAN_CLUSTER_NAME_MAX_BYTES]; /* plan_cluster_name's: "namespace/job" or "" */
    bool term_requested;                            /* a stop signal (SIGTERM) arrived: drain and stop */
    bool cmd_stopped;                               /* SIGTERM stopped the head's command before it ended */
    bool stopping;                                  /* the end is decided; waiting for children to go */
    bool restarting_ray;                            /* a worker is leaving an old head to join a new one */
    bool job_finished;   /* the head's command is done (head: ran it; worker: read it in the GCS) */
    bool drained;        /* SIGTERM's drain finished: the node left the cluster */
    long kill_at_ms;     /* SIGKILL whatever is left at this time (0: not yet set) */
    long ray_kill_at_ms; /* SIGKILL ray start's group alone at this time (0: not set) */
    bool ray_node_seen;  /* its raylet or GCS was in that group when that time was set */
    long ray_stop_ms;    /* when SIGTERM's stop of ray start began, its end reason the pod's (0: not) */
    long ray_stopped_ms; /* when ray start was reaped after that (0: not yet) */
    int exit_code;

    char end_reason[512]; /* why the pod ends, for the termination log; the first cause wins */

    char gcs_addr[DNS_ADDR_MAX_BYTES];             /* where the GCS answered */
    char cluster_id[RDVAUTH_CLUSTER_ID_MAX_BYTES]; /* the head we joined (the head: its own) */
    long next_monitor_ms;
    long head_lost_since_ms;        /* 0 while the head answers */
    long drained_seen_ms;           /* when a drain of this Ray's node was seen while Ray ran on; 0: none */
    long ray_started_ms;            /* when ray start was last spawned */
    struct rayrestart ray_restarts; /* a worker's starts of Ray again under the same head */
    pid_t store_pid;                /* the head's deletion of its GCS state from Redis (0: not running) */
    bool store_cleaning;            /* it was started (or could not be): once only */
    bool leftovers_told;            /* what Ray and the command left was told SIGTERM (once) */
    int watch_status;               /* wait status, valid once watch_ended */
    bool watch_ended;               /* the watch was reaped; the supervisor has not looked yet */
    bool watch_quiet;               /* its failure to connect was said: retries are not */
    long watch_retry_ms;            /* no watch is started before this time */
};

/* Nothing started, nothing open; pod_free undoes whatever was set up since. */
void pod_init(struct pod *p);
void pod_free(struct pod *p);

/* The exit code a SIGTERM gives: RAYBOOT_EVICTION_EXIT_CODE for a pod that runs no command (a
 * worker's graceful drain); on a head, its command's outcome, for a stopped job is not a finished
 * one (Volcano's TaskCompleted, an Indexed Job's succeeded index): the command's own code once
 * it has ended, 128+SIGTERM while it has not (and when it never ran). */
int pod_stop_exit_code(const struct pod *p);

/* Records why the pod ends (only the first call counts). */
void pod_end_reason(struct pod *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Starts `ray start` with the plan's argv, or the user's command; exec failures set exit_code
 * 126/127 and the end reason. */
int pod_start_ray(struct pod *p);
int pod_start_command(struct pod *p);

/* The one place signals are read: every pending one, reaping children on SIGCHLD, recording a
 * stop signal (SIGTERM; SIGINT and SIGHUP too with interrupt_stops), forwarding the rest. Every
 * wait calls it through a waiter. */
void pod_signals(struct pod *p);
/* Reaps what has exited (SIGCHLD coalesces: the supervisor also looks when nothing was read). */
void pod_reap(struct pod *p);

/* What wakes a wait early, after pod_signals has read the signals: */
enum pod_wake {
    POD_WAKE_ON_STOP,   /* a stop signal, or Ray ended (its pid reaped): the waits for the head */
    POD_WAKE_ON_SIGNAL, /* any signal: loops that look at the pod again after each */
};
/* A wait_stop on p's signalfd, for wait_sleep and the waits in wait.h. */
struct wait_stop pod_waiter(struct pod *p, enum pod_wake wake);

/* SIGTERM to ray start now; SIGKILL to what is left after timeout_ms. */
void pod_stop_ray(struct pod *p, long timeout_ms);
/* SIGTERM to ray start and every daemon of it at once, where nothing is left to hand over (the
 * head's GCS ends with its pod; a worker's cluster is gone): ray start alone stops its daemons
 * one after another, giving each up to a second, 2-4 s in all. */
void pod_stop_ray_at_once(struct pod *p);
/* Decides the end: exit_code, then pod_stop_ray. */
void pod_end(struct pod *p, int exit_code, long timeout_ms);

/* Waits for the head's GCS at name (re-resolved as it goes) into p->gcs_addr, reading signals;
 * WAIT_STOPPED when a SIGTERM or the end of Ray decided it. Off the head, through the head's
 * rendezvous when it offers one: its word is SERVING, or with confirm (a worker whose Ray has
 * already ended once) the cue for one Health/Check that must say so. */
enum wait_result pod_wait_gcs(struct pod *p, const char *name, long timeout_ms, bool confirm, struct errbuf *err);
/* The Ray version of the GCS at p->gcs_addr (wait_read_ray_version): before the first node
 * lookup; it is also the token's check. */
enum wait_result pod_read_ray_version(struct pod *p, struct errbuf *err);
/* The id of the cluster whose GCS is at p->gcs_addr, into p->cluster_id (kept as it was when the
 * GCS does not say). */
void pod_note_cluster_id(struct pod *p);
/* A worker whose head serves joins it: `ray start`, with the Ray version read before it in token
 * mode (a refused token exits 2 and Ray never starts) and right after it otherwise (nothing
 * between the head's word and Ray; a refusal then exits 2 and stops that Ray); then the head's
 * cluster id is noted. Returns -1 when Ray was not started (exit_code and the end reason say
 * why), 0 when it was (p->stopping when it is already being stopped). */
int pod_join_head(struct pod *p);
/* The head: its rendezvous listens (RAYBOOT_RENDEZVOUS_PORT; 0: none). A port it cannot have is
 * the pod's end before Ray starts (-1, exit_code 2 and the reason set): whatever holds it would
 * speak to the workers. pod_rendezvous_serving tells the waiting workers. */
int pod_rendezvous_start(struct pod *p);
void pod_rendezvous_serving(struct pod *p);
/* Waits (bounded by RAYBOOT_WORKERS_TIMEOUT) for the expected workers in the GCS at gcs_addr. */
void pod_wait_workers(struct pod *p, const char *gcs_addr);

/* One prober request (prober_req.h builds them): the reply's status, or PROBER_DIED when the
 * prober is not running or failed (logged; reply->reason says so too). */
enum prober_status pod_ask(struct pod *p, struct prober_request req, struct prober_reply *reply);

#endif
