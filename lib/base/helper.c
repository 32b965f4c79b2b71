/* Forked helpers: fork into a function of ours, and the one way they are stopped (channel closed,
 * a bounded wait, SIGKILL, reaped). What a helper does, and how long its grace is, is its
 * caller's. */
#include "helper.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* How often a stopping helper is looked at during its grace. */
#define HELPER_STOP_POLL_MS 10

static void close_end(int fd)
{
    if (fd >= 0)
        close(fd);
}

int helper_start(pid_t *pid, int *fd, int parent_end, int child_end, helper_main_fn fn, void *arg, struct errbuf *err)
{
    pid_t child = fork();
    if (child < 0) {
        int saved = errno;
        close_end(parent_end);
        close_end(child_end);
        *pid = -1;
        return errbuf_set(err, "fork: %s", strerror(saved));
    }
    if (child == 0) {
        close_end(parent_end);
        _exit(fn(child_end, arg));
    }
    close_end(child_end);
    *pid = child;
    if (fd)
        *fd = parent_end;
    return 0;
}

/* waitpid without blocking, every HELPER_STOP_POLL_MS for up to grace_ms: the pid once it
 * exited, 0 when it is still running, -1 when it is not ours (reaped elsewhere). */
static pid_t wait_bounded(pid_t pid, long grace_ms, int *status)
{
    struct timespec pause = {0, HELPER_STOP_POLL_MS * 1000L * 1000L};
    pid_t reaped = waitpid(pid, status, WNOHANG);
    for (long waited = 0; reaped == 0 && waited < grace_ms; waited += HELPER_STOP_POLL_MS) {
        nanosleep(&pause, NULL);
        reaped = waitpid(pid, status, WNOHANG);
    }
    return reaped;
}

int helper_stop(pid_t *pid, int *fd, long grace_ms, int *status)
{
    int ignored = 0;
    int rc = -1;
    pid_t reaped;
    if (fd) {
        close_end(*fd);
        *fd = -1;
    }
    if (*pid <= 0)
        return -1;
    reaped = wait_bounded(*pid, grace_ms, status ? status : &ignored);
    if (reaped == *pid) {
        rc = 0;
    } else if (reaped == 0) {
        kill(*pid, SIGKILL);
        waitpid(*pid, NULL, 0);
        rc = 1;
    }
    *pid = -1;
    return rc;
}

int helper_reap(pid_t *pid, int *status)
{
    if (*pid <= 0 || waitpid(*pid, status, 0) != *pid)
        return -1;
    *pid = -1;
    return 0;
}
