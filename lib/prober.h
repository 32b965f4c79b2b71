/* The prober: a child process, confined by seccomp, that does all of rayboot's network work
 * (DNS, TCP, gRPC to the GCS) and answers one request at a time over a seqpacket socket. The
 * parent, which will exec Ray, never parses a byte from the network itself. */
#ifndef RAYBOOT_PROBER_H
#define RAYBOOT_PROBER_H

#include <stdbool.h>
#include <sys/types.h>

#include "dns.h"
#include "dnsname.h"
#include "errbuf.h"

enum prober_op {
    PROBE_RESOLVE = 1, /* name -> addr */
    PROBE_TCP,         /* can addr:port be connected to? */
    PROBE_HEALTH,      /* grpc.health.v1.Health/Check on addr:port */
    PROBE_COUNT_NODES, /* ALIVE nodes in the GCS at addr:port */
    PROBE_DRAIN,       /* DrainNode for the ALIVE node at address `name`, reason `text` (none: value "no") */
    PROBE_FIND_NODE,   /* is there an ALIVE node at address `name`? (not: value "no") */
    PROBE_CLUSTER_ID,  /* the cluster id, hex, into value */
    PROBE_KV_GET,      /* rayboot's KV key `name` into value (ok=1 found, 0 absent or failed) */
    PROBE_KV_PUT,      /* rayboot's KV key `name` = `text` */
    PROBE_DEPARTURE,   /* how the node at address `name` left: its NodeDeathInfo reason into value */
};

struct prober_request {
    int op;
    int port;
    char name[DNS_NAME_MAX_BYTES + 2]; /* PROBE_RESOLVE */
    char addr[DNS_ADDR_MAX_BYTES];     /* the others */
    long long deadline_unix_ms;        /* PROBE_DRAIN */
    long budget_ms;                    /* > 0: no lookup, connect or call runs longer (deadline.h) */
    char text[256];                    /* PROBE_DRAIN reason, PROBE_KV_PUT value */
};

struct prober_reply {
    int ok; /* 1 yes / done, 0 "not yet" with reason */
    char addr[DNS_ADDR_MAX_BYTES];
    long alive;
    long alive_workers;
    char value[256]; /* PROBE_CLUSTER_ID, PROBE_KV_GET; PROBE_DRAIN: the node id, hex */
    char reason[ERRBUF_MAX_BYTES];
};

struct prober {
    pid_t pid;
    int fd;
};

/* Forks the prober: it sets up the resolver from the files under root, then confines itself.
 * Returns 0, or -1 with a message (the resolver's set-up failed, or fork did). */
int prober_start(struct prober *p, const char *root, struct errbuf *err);

/* One request. Returns 0 with a reply (ok or not), or -1 when the prober itself failed: it died
 * (the message says how, e.g. killed by SIGSYS for a syscall outside its allowlist) or did not
 * answer within timeout_ms (it is then killed). */
int prober_call(struct prober *p, const struct prober_request *req, struct prober_reply *reply,
                long timeout_ms, struct errbuf *err);

/* The same call split for an event loop: send one request, then call prober_receive when p->fd
 * is readable. prober_receive returns 0 with the reply, 1 when there is none yet, -1 when the
 * prober died (the message says how). The caller owns the timeout: prober_abort ends a prober
 * that is stuck. */
int prober_send(struct prober *p, const struct prober_request *req, struct errbuf *err);
int prober_receive(struct prober *p, struct prober_reply *reply, struct errbuf *err);
void prober_abort(struct prober *p);

/* Closes the socket and reaps the prober; logs a warning if it was killed by SIGSYS on its way out. */
void prober_stop(struct prober *p);

/* The message for a prober that ended with wait status `status` (killed by SIGSYS: a call outside
 * its seccomp allowlist). Always returns -1. */
int prober_end_reason(pid_t pid, int status, struct errbuf *err);

#endif
