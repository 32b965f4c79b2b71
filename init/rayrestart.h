/* A worker's two limits on keeping its Ray node: how often it starts Ray again after the node
 * died under a head that is still up, and how long it lets a node that cannot reach its head's
 * GCS wait for it (Ray's own reconnect timeout). Pure arithmetic on times passed in. */
#ifndef RAYBOOT_INIT_RAYRESTART_H
#define RAYBOOT_INIT_RAYRESTART_H

#include <stdbool.h>

#include "backoff.h"
#include "gcs.h"

/* At most this many starts in a row of a Ray that keeps dying: a raylet that crashes at once
 * every time (a bad flag, no memory) ends the pod, as before, for the controller to see. */
#define RAYRESTART_MAX 3
/* The first start again waits this long, each next one twice as long (1, 2, 4 s): enough for
 * whatever killed it (an OOM kill, a full disk) to be seen, short beside a raylet's start. */
#define RAYRESTART_FIRST_DELAY_MS 1000
#define RAYRESTART_DELAY_CAP_MS 4000
/* The head's clock and this pod's differ by less than this (NTP keeps nodes within milliseconds);
 * a Ray's start is seconds after the end of the one before. */
#define RAYRESTART_CLOCK_SLACK_MS 500
/* A Ray that ran this long was healthy: the count starts over. */
#define RAYRESTART_STABLE_MS (10 * 60 * 1000L)

struct rayrestart {
    struct backoff delays;
    int count; /* starts again since the last stable run */
};

void rayrestart_init(struct rayrestart *r);
/* Ray, started at started_ms, ended at now_ms while its head is up under the same cluster: the
 * delay before starting it again, or -1 when RAYRESTART_MAX starts in a row were spent. */
long rayrestart_next_ms(struct rayrestart *r, long started_ms, long now_ms);

/* Ray's node, named as this pod's, left at ended_ms (the GCS's end_time_ms, by the head's clock) in
 * the way how says: its end was a drain of this node (AUTOSCALER_DRAIN_*) when it left after this
 * Ray started at started_unix_ms (a drain of an earlier Ray of the pod is no excuse for this one's
 * death), within RAYRESTART_CLOCK_SLACK_MS of clock difference. A drained Ray is not counted toward
 * RAYRESTART_MAX: any process of the pod can ask the sidecar for a drain where it has no guard,
 * and drains must not end the pod (init/supervise.c waits for the deletion first). */
bool rayrestart_was_drained(enum gcs_departure how, uint64_t ended_ms, long long started_unix_ms);

/* A head unreachable since lost_since_ms (0: it answers) has been waited for long enough at
 * now_ms: timeout_ms, RAY_gcs_rpc_server_reconnect_timeout_s, the time Ray's raylet itself keeps
 * trying before it exits. */
bool rayrestart_reconnect_expired(long lost_since_ms, long now_ms, long timeout_ms);

#endif
