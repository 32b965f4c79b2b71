/* Draining this pod's Ray node: DrainNode (reason PREEMPTION), then watch the GCS until the node
 * has left or a deadline passes. Written as a step machine so that rayboot (which drives it with
 * blocking prober calls) and the sidecar (which drives it from its event loop) share one sequence. */
#ifndef RAYBOOT_DRAIN_H
#define RAYBOOT_DRAIN_H

#include <stdbool.h>

#include "dns.h"
#include "dnsname.h"
#include "errbuf.h"
#include "gcs.h"
#include "prober_req.h"

/* How often the drain looks whether the node has left the GCS (one small GetAllNodeInfo by name):
 * a head that waits for its workers' drains keeps its GCS up about this long after the last one
 * left, so that each sees it (init/supervise.c). */
#define DRAIN_POLL_MS 100
/* After DrainNode was accepted, this many looks in a row without an answer mean the GCS is gone
 * (its head's pod deleted too): nothing can show the node leaving any more. */
#define DRAIN_GCS_LOST_LOOKS 3

enum drain_state {
    DRAIN_IDLE = 0,
    DRAIN_REQUESTING, /* DrainNode sent or about to be */
    DRAIN_ASKING,     /* no ALIVE node to drain: asking the GCS how it left */
    DRAIN_WATCHING,   /* accepted: waiting for the node to leave */
    DRAIN_DONE,
};

enum drain_outcome {
    DRAIN_LEFT,     /* the node left the cluster (or had been drained already: `earlier`) */
    DRAIN_DEADLINE, /* still there when the deadline passed */
    DRAIN_FAILED,   /* DrainNode could not be made (no such node, GCS unreachable, ...) */
    DRAIN_GCS_LOST, /* accepted, then the GCS stopped answering before the node was seen leaving */
};

struct drain {
    enum drain_state state;
    enum drain_outcome outcome;
    char gcs_addr[DNS_ADDR_MAX_BYTES];
    int gcs_port;
    char node_name[DNS_NAME_MAX_BYTES + 1]; /* GcsNodeInfo.node_name (podview_node_name) */
    char reason[256];                       /* the DrainNode reason message */
    long started_ms;                        /* monotonic */
    long deadline_ms;                       /* monotonic */
    long long deadline_unix_ms;             /* for the GCS */
    long next_poll_ms;
    int failed_looks; /* in a row, since the drain was accepted */
    long finished_ms;
    char detail[ERRBUF_MAX_BYTES]; /* why it failed, or what the last look saw */
    /* The node was gone before this drain: another drain got there first (the sidecar's, from
     * the preStop hook, before the kubelet's SIGTERM reaches rayboot). `departure` says how the
     * GCS recorded it leaving; only a drain reason makes the outcome DRAIN_LEFT. */
    bool earlier;
    enum gcs_departure departure;
};

/* Starts a drain of the node named node_name through the GCS at gcs_addr:gcs_port, to finish within
 * budget_ms of now_ms. */
void drain_begin(struct drain *d, const char *gcs_addr, int gcs_port, const char *node_name, const char *reason,
                 long budget_ms, long now_ms);

/* What the drain needs next. */
enum drain_next {
    DRAIN_NEXT_ASK,   /* *req is filled: ask the prober now */
    DRAIN_NEXT_SLEEP, /* nothing is due before *wake_ms */
    DRAIN_NEXT_DONE,  /* it is over (d->outcome) */
};
enum drain_next drain_step(struct drain *d, long now_ms, struct prober_request *req, long *wake_ms);

/* The prober's answer to the last request from drain_step; NULL when the prober failed. */
void drain_reply(struct drain *d, long now_ms, const struct prober_reply *reply);

/* True while the drain has requests to make (between begin and done). */
bool drain_in_progress(const struct drain *d);

/* Milliseconds from begin to done (or to now_ms while running). */
long drain_elapsed_ms(const struct drain *d, long now_ms);

const char *drain_outcome_name(enum drain_outcome outcome);

#endif
