/* The container's termination message: one line in /dev/termination-log, which the kubelet shows
 * as the reason the container ended (kubectl describe, the pod's status). */
#ifndef RAYBOOT_TERMLOG_H
#define RAYBOOT_TERMLOG_H

/* Writes the line to RAYBOOT_TERMINATION_LOG (default /dev/termination-log) when that file
 * exists and is writable; otherwise does nothing: most containers outside Kubernetes have none. */
void termlog_write(const char *const *envp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
