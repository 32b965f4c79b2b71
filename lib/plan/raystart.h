/* The exact `ray start` argv for a role: role flags, resources from the cgroup, and the user's
 * own flags on top. */
#ifndef RAYBOOT_RAYSTART_H
#define RAYBOOT_RAYSTART_H

#include "errbuf.h"
#include "strv.h"

/* KubeRay's fixed metrics port (its pods name it `metrics`): Prometheus finds every node's Ray
 * metrics at the same port, not at one Ray picks at random. */
#define RAYSTART_METRICS_EXPORT_PORT 8080

struct raystart_input {
    const char *ray;                 /* argv[0]: RAYBOOT_RAY or "ray" */
    int head;                        /* 1 for the head, 0 for a worker */
    const char *head_fqdn;           /* workers: --address host */
    const char *node_ip;             /* --node-ip-address, or NULL to let Ray guess */
    const char *node_name;           /* --node-name, or NULL (Ray then names the node by its IP) */
    int port;                        /* head: --port; workers: --address port */
    int dashboard_port;              /* head only */
    int client_port;                 /* head only */
    int metrics_export_port;         /* --metrics-export-port, every node */
    long num_cpus;                   /* 0: leave to Ray */
    unsigned long long memory_bytes; /* 0: leave to Ray */
    long num_gpus;                   /* -1: leave to Ray */
    const char *user_args;           /* RAYBOOT_RAY_START_ARGS, or NULL */
};

/* Fills argv (empty on entry). Flags the user gives replace ours of the same name; head-only
 * flags on a worker and --address on a head are dropped with a warning, since Ray aborts or
 * misbehaves on them. The message names RAYBOOT_RAY_START_ARGS. */
int raystart_build(const struct raystart_input *in, struct strv *argv, struct strv *warnings, struct errbuf *err);

/* The value of --name=value in a built argv, or NULL. */
const char *raystart_flag_value(const struct strv *argv, const char *name);

#endif
