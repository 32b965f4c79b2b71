/* Waiting for the head: its name, its GCS, and (on the head) the workers joining. The policy
 * (backoff, re-resolution, progress lines, deadline) lives here; the network work is the
 * prober's. */
#ifndef RAYBOOT_WAIT_H
#define RAYBOOT_WAIT_H

#include "dns.h"
#include "errbuf.h"
#include "prober.h"

enum wait_result {
    WAIT_READY = 0,
    WAIT_DEADLINE = -1,    /* the message names the address and the last failure */
    WAIT_STOPPED = -2,     /* stop_fd became readable (a signal arrived) */
    WAIT_PROBER_DIED = -3, /* the message says how */
};

struct wait_gcs {
    const char *name; /* host name or address of the head */
    int port;
    long timeout_ms; /* the overall deadline for this wait */
    int stop_fd;     /* -1, or a fd (signalfd) that interrupts the wait when readable */
};

/* Waits until name resolves and its GCS answers Health/Check SERVING. addr receives the address
 * that answered. */
enum wait_result wait_for_gcs(struct prober *p, const struct wait_gcs *w, char addr[DNS_ADDR_MAX_BYTES],
                              struct errbuf *err);

/* Waits until `expected` workers are ALIVE in the GCS at addr:port, or the timeout; either way
 * *joined says how many were seen last. WAIT_DEADLINE here is not fatal: the caller goes on. */
enum wait_result wait_for_workers(struct prober *p, const char *addr, int port, long expected, long timeout_ms,
                                  int stop_fd, long *joined, struct errbuf *err);

/* Sleeps ms, or less when stop_fd becomes readable; returns -1 in that case. */
int wait_sleep(long ms, int stop_fd);

long wait_now_ms(void);

#endif
