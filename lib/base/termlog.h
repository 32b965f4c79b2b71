/* The container's termination message: one line in /dev/termination-log, which the kubelet shows
 * as the reason the container ended (kubectl describe, the pod's status). */
#ifndef RAYBOOT_TERMLOG_H
#define RAYBOOT_TERMLOG_H

/* Writes the line, shown as a log line is (log_shown: secrets redacted, a control or non-ASCII
 * byte as \xNN, so what it quotes cannot forge a second line), to RAYBOOT_TERMINATION_LOG (default
 * /dev/termination-log) when that file exists; does nothing when it does not (most containers outside Kubernetes have
 * none), and warns when it exists but cannot be opened for writing (read-only, not ours, a FIFO nobody reads). Never
 * blocks. */
void termlog_write(const char *const *envp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
