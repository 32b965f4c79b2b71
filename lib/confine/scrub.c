/* A forked helper's clean-up between fork and confinement: descriptors and environment. It owns no
 * policy on what the helper keeps (its caller passes the one socket) and loads no filter
 * (sandbox.c). clearenv() alone is not enough: the strings stay in memory and in
 * /proc/PID/environ, so they are overwritten first. */
#include "scrub.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "number.h"
#include "proc.h"

/* Without close_range(2) (Linux before 5.9) and without /proc, descriptors are closed one by one
 * up to the soft limit, at most this many: far above what rayboot or the sidecar open. */
#define SCRUB_FD_SCAN_MAX 65536
/* Fields 50 and 51 of /proc/self/stat (proc(5)): where the environment block starts and ends. */
#define STAT_FIELD_ENV_START 50

extern char **environ;

/* Without close_range(2): the descriptors /proc/self/fd lists in [first, last], the directory's
 * own excepted. 0, or -1 when /proc cannot be read. */
static int close_listed(unsigned int first, unsigned int last)
{
    struct dirent *e;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL) {
        long fd;
        if (number_parse(e->d_name, strlen(e->d_name), 0, INT_MAX, &fd) < 0 || fd < first || fd > last ||
            (int)fd == dirfd(d))
            continue;
        close((int)fd);
    }
    closedir(d);
    return 0;
}

static void close_from_to(unsigned int first, unsigned int last)
{
    long max;
    if (first > last)
        return;
#ifdef SYS_close_range
    if (syscall(SYS_close_range, first, last, 0) == 0)
        return;
#endif
    if (close_listed(first, last) == 0)
        return;
    /* No /proc either: one by one up to the soft limit. */
    max = sysconf(_SC_OPEN_MAX);
    if (max < 0 || max > SCRUB_FD_SCAN_MAX)
        max = SCRUB_FD_SCAN_MAX;
    for (long fd = first; fd <= (long)last && fd < max; fd++)
        close((int)fd);
}

void scrub_fds_but(int keep_a, int keep_b)
{
    unsigned int from = STDERR_FILENO + 1;
    int lo = keep_a < keep_b ? keep_a : keep_b, hi = keep_a < keep_b ? keep_b : keep_a;
    if (lo > STDERR_FILENO) {
        close_from_to(from, (unsigned int)lo - 1);
        from = (unsigned int)lo + 1;
    }
    if (hi > STDERR_FILENO && hi != lo) {
        close_from_to(from, (unsigned int)hi - 1);
        from = (unsigned int)hi + 1;
    }
    close_from_to(from, ~0U);
}

int scrub_fds(int keep_fd)
{
    int null_fd;
    if (keep_fd >= 0 && keep_fd <= STDERR_FILENO) {
        int moved = fcntl(keep_fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
        if (moved < 0)
            return -1;
        close(keep_fd);
        keep_fd = moved;
    }
    null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null_fd >= 0) {
        for (int std = STDIN_FILENO; std <= STDERR_FILENO; std++)
            if (std != null_fd)
                dup2(null_fd, std);
        if (null_fd > STDERR_FILENO)
            close(null_fd);
    }
    scrub_fds_but(keep_fd, -1);
    return keep_fd;
}

void scrub_environment(void)
{
    long block[2]; /* the start and the end */
    if (proc_stat_fields("self", STAT_FIELD_ENV_START, block, 2) == 0 && block[1] > block[0])
        explicit_bzero((void *)(uintptr_t)block[0], (size_t)(block[1] - block[0]));
    for (char **e = environ; e && *e; e++)
        explicit_bzero(*e, strlen(*e));
    clearenv();
}
