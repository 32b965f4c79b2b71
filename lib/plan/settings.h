/* Run-time knobs read from RAYBOOT_* variables: deadlines and the shutdown budget. */
#ifndef RAYBOOT_SETTINGS_H
#define RAYBOOT_SETTINGS_H

#include "errbuf.h"

struct settings {
    long wait_timeout_ms;      /* RAYBOOT_WAIT_TIMEOUT: for the head's GCS */
    long workers_timeout_ms;   /* RAYBOOT_WORKERS_TIMEOUT: for the workers to join (then go on) */
    long grace_period_ms;      /* RAYBOOT_GRACE_PERIOD: the pod's terminationGracePeriodSeconds */
    long head_loss_timeout_ms; /* RAYBOOT_HEAD_LOSS_TIMEOUT: a worker waits this long for a lost head */
    int eviction_exit_code;    /* RAYBOOT_EVICTION_EXIT_CODE: exit code after a graceful SIGTERM */
    int rendezvous_port;       /* RAYBOOT_RENDEZVOUS_PORT: the head's rendezvous (8079; 0: none) */
    /* RAY_gcs_rpc_server_reconnect_timeout_s, Ray's own variable (KubeRay sets it on GCS fault
     * tolerant workers): how long a worker's raylet keeps trying a GCS it lost; rayboot stops a
     * node that has not reached its head for that long. */
    long gcs_reconnect_timeout_ms;
};

/* Defaults, then the environment. -1 with a message naming the variable on a bad value. */
int settings_load(const char *const *envp, struct settings *s, struct errbuf *err);

/* The part of the grace period rayboot keeps for itself: SIGKILL of leftovers, reaping, exit. */
#define SETTINGS_GRACE_MARGIN_MS 3000

#endif
