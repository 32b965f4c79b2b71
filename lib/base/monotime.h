/* The one monotonic clock every deadline and timeout in rayboot and the sidecar is measured on. */
#ifndef RAYBOOT_MONOTIME_H
#define RAYBOOT_MONOTIME_H

/* Milliseconds of CLOCK_MONOTONIC: only differences mean anything. */
long monotime_ms(void);

#endif
