/* A forked helper's life: rayboot's and the sidecar's children that run our own code (the prober,
 * the rendezvous child, the watch, the API reader), never exec, and talk to the parent over one
 * descriptor, if any. Started, stopped and reaped one way for all of them. */
#ifndef RAYBOOT_HELPER_H
#define RAYBOOT_HELPER_H

#include <sys/types.h>

#include "errbuf.h"

/* What a helper's child runs: CHILD_END is its end of the channel (-1 without one), ARG the
 * caller's. Its return value is the child's exit status; it may also _exit itself. */
typedef int (*helper_main_fn)(int child_end, void *arg);

/* Forks a helper that runs fn(child_end, arg). The child closes parent_end; the parent closes
 * child_end and gets *pid and, when fd is not NULL, *fd = parent_end (the ends are -1 for a helper
 * without a channel). Returns 0, or -1 with a message (both ends closed, *pid -1). */
int helper_start(pid_t *pid, int *fd, int parent_end, int child_end, helper_main_fn fn, void *arg, struct errbuf *err);

/* Stops a helper: closes its channel (*fd, when fd is not NULL), which is what tells a helper
 * to end, waits up to grace_ms for it to exit, then kills it (SIGKILL) and reaps it. *pid and *fd
 * become -1. Returns 0 when it ended on its own within the grace (*status, when status is not
 * NULL, is its wait status), 1 when it was killed, -1 when there was none to stop (no pid, or
 * already reaped by someone else). */
int helper_stop(pid_t *pid, int *fd, long grace_ms, int *status);

/* Reaps a helper that is known to be ending (its channel closed): waits for it. Returns 0 with
 * *status and *pid -1, or -1 when it is not ours to reap (no pid, or already reaped: *pid kept). */
int helper_reap(pid_t *pid, int *status);

#endif
