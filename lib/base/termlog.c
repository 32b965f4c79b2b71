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
    char raw[TERMLOG_MAX_BYTES], line[TERMLOG_MAX_BYTES];
    va_list ap;
    size_t len;
    int fd;

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
    if (vsnprintf(raw, sizeof(raw), fmt, ap) < 0)
        raw[0] = '\0';
    va_end(ap);
    /* Shown as a log line is: the message quotes what others wrote (the head's `finished` key, a
     * reason read from the GCS), which must not forge lines, drive a terminal or show a secret. */
    len = log_shown(line, sizeof(line) - 1, raw);
    line[len++] = '\n';
    if (write(fd, line, len) < 0) {
        /* Nothing better to do: the message is a courtesy, the exit code is the contract. */
    }
    close(fd);
}
