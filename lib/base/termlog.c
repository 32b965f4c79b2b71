/* Writing the termination message; deciding what it says is the caller's. */
#include "termlog.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "env.h"
#include "log.h"

/* The kubelet keeps at most 4096 bytes of it. */
#define TERMLOG_MAX_BYTES 4096

void termlog_write(const char *const *envp, const char *fmt, ...)
{
    const char *path = env_lookup_nonempty(envp, "RAYBOOT_TERMINATION_LOG");
    char line[TERMLOG_MAX_BYTES];
    va_list ap;
    int n, fd;

    if (!path)
        path = "/dev/termination-log";
    /* No O_CREAT: the kubelet creates the file; elsewhere there is nothing to write to, and
     * that is no news. O_NONBLOCK: a FIFO nobody reads fails at once (ENXIO) instead of hanging
     * the pod's last moment. */
    fd = open(path, O_WRONLY | O_TRUNC | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        if (errno != ENOENT)
            log_warn("cannot write the termination message to %s: %s", path, strerror(errno));
        return;
    }
    va_start(ap, fmt);
    n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t)n > sizeof(line) - 2)
        n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    if (write(fd, line, (size_t)n) < 0) {
        /* Nothing better to do: the message is a courtesy, the exit code is the contract. */
    }
    close(fd);
}
