/* Retry delays: exponential backoff with jitter in the upper half of each step, so that a thousand
 * workers waiting for the same head spread their attempts instead of arriving in waves. */
#ifndef RAYBOOT_BACKOFF_H
#define RAYBOOT_BACKOFF_H

#include <stdint.h>

struct backoff {
    long base_ms;
    long cap_ms;
    unsigned attempt;
    uint64_t rng;
};

/* seed 0 picks one from the clock and pid; tests pass a fixed seed. */
void backoff_init(struct backoff *b, long base_ms, long cap_ms, uint64_t seed);
void backoff_reset(struct backoff *b);
/* With step = min(cap, base * 2^attempt): a delay uniform in [step - step/2, step], then
 * attempt++. */
long backoff_next_ms(struct backoff *b);
/* The same schedule without jitter: min(cap, base * 2^attempt), then attempt++. For a lone
 * client polling one server, where there is nobody to spread out from. */
long backoff_step_ms(struct backoff *b);
/* A delay uniform in [lo, hi]: steady polling that does not synchronise across pods. */
long backoff_jitter_ms(struct backoff *b, long lo, long hi);

#endif
