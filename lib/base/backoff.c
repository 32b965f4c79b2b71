/* Backoff arithmetic and its random numbers; sleeping is the caller's. */
#include "backoff.h"

#include <time.h>
#include <unistd.h>

/* xorshift64*: plenty for spreading retries; nothing here needs to be unpredictable. */
static uint64_t next_random(struct backoff *b)
{
    b->rng ^= b->rng >> 12;
    b->rng ^= b->rng << 25;
    b->rng ^= b->rng >> 27;
    return b->rng * 0x2545F4914F6CDD1DULL;
}

void backoff_init(struct backoff *b, long base_ms, long cap_ms, uint64_t seed)
{
    b->base_ms = base_ms;
    b->cap_ms = cap_ms;
    b->attempt = 0;
    if (seed == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        seed = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40);
    }
    b->rng = seed ? seed : 1;
}

void backoff_reset(struct backoff *b)
{
    b->attempt = 0;
}

long backoff_jitter_ms(struct backoff *b, long lo, long hi)
{
    if (hi <= lo)
        return lo;
    return lo + (long)(next_random(b) % (uint64_t)(hi - lo + 1));
}

long backoff_step_ms(struct backoff *b)
{
    long ceiling = b->cap_ms;
    if (b->attempt < 30 && (b->base_ms << b->attempt) < b->cap_ms)
        ceiling = b->base_ms << b->attempt;
    b->attempt++;
    return ceiling;
}

/* The upper half of the step ("equal jitter"), not [0, step]: a draw near 0 buys a query that
 * almost surely fails as the last one did. At the 1 s cap that is ~1.3 queries a second instead
 * of 2, still spread over 500 ms, and the longest wait between two looks stays the step. */
long backoff_next_ms(struct backoff *b)
{
    long step = backoff_step_ms(b);
    return backoff_jitter_ms(b, step - step / 2, step);
}
