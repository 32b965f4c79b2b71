/* When a worker starts its Ray again (and which ends count: not a drain's) and when it stops
 * waiting for an unreachable GCS; what it does then (stop Ray, wait for the head, join) is
 * supervise.c's. */
#include "rayrestart.h"

void rayrestart_init(struct rayrestart *r)
{
    r->count = 0;
    /* No jitter is drawn (backoff_step_ms): the seed is never used. */
    backoff_init(&r->delays, RAYRESTART_FIRST_DELAY_MS, RAYRESTART_DELAY_CAP_MS, 1);
}

long rayrestart_next_ms(struct rayrestart *r, long started_ms, long now_ms)
{
    if (now_ms - started_ms >= RAYRESTART_STABLE_MS) {
        r->count = 0;
        backoff_reset(&r->delays);
    }
    if (r->count >= RAYRESTART_MAX)
        return -1;
    r->count++;
    return backoff_step_ms(&r->delays);
}

bool rayrestart_was_drained(enum gcs_departure how, uint64_t ended_ms, long long started_unix_ms)
{
    if (how != GCS_DEPARTURE_DRAIN_PREEMPTED && how != GCS_DEPARTURE_DRAIN_IDLE)
        return false;
    return (long long)ended_ms >= started_unix_ms - RAYRESTART_CLOCK_SLACK_MS;
}

bool rayrestart_reconnect_expired(long lost_since_ms, long now_ms, long timeout_ms)
{
    return lost_since_ms != 0 && now_ms - lost_since_ms >= timeout_ms;
}
