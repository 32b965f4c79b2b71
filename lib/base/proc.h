/* Processes and signals for a PID 1: spawning children clean (own process group, default signal
 * dispositions, empty mask, no shell), catching signals through a signalfd, mapping exits. */
#ifndef RAYBOOT_PROC_H
#define RAYBOOT_PROC_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "errbuf.h"

/* Every signal a child could be sent and that we can catch: all but SIGKILL and SIGSTOP (and
 * the job-control stops a terminal sends, which stay with the terminal). */
void proc_catchable_signals(sigset_t *set);

/* Blocks set in this process and returns a signalfd for it (non-blocking, close-on-exec), or
 * -1 with a message. Blocking is what makes PID 1 receive them at all. */
int proc_signalfd_open(const sigset_t *set, struct errbuf *err);

/* When not PID 1 (shareProcessNamespace puts pause there), adopt orphans anyway. */
int proc_become_subreaper(struct errbuf *err);

/* fork + execvpe(argv[0], argv, envp) with PATH taken from envp. The child gets its own process
 * group, default dispositions for every signal, an empty mask, and SIGKILL if rayboot dies. Returns 0 with *pid, or -1
 * when the exec failed: *exec_errno says why (ENOENT -> 127, others -> 126 by the caller). */
int proc_spawn(char *const argv[], char *const envp[], pid_t *pid, int *exec_errno, struct errbuf *err);

/* A wait status as a shell would report it: the exit code, or 128+N for signal N. */
int proc_exit_code(int status);

/* kill(-pgid, sig), ignoring ESRCH (the group is already gone). */
void proc_signal_group(pid_t pgid, int sig);

/* Sends sig to every direct child of this process (orphans adopted as subreaper or PID 1), found
 * in /proc. Returns how many were signalled. */
int proc_signal_children(int sig);
/* The same, sparing the NKEEP pids in KEEP (our own helpers); sig 0 counts them only. */
int proc_signal_children_except(int sig, const pid_t *keep, size_t nkeep);

/* The N numeric fields of /proc/<pid_name>/stat from field FIRST (proc(5)'s numbers, counted
 * from 1; 3 or later: after the command) on, into OUT.
 * Returns 0, or -1 when the file cannot be read or a field is not a decimal number. */
int proc_stat_fields(const char *pid_name, int first, long *out, size_t n);

/* Calls VISIT for every process in /proc (its pid, and that pid as /proc names it) until VISIT
 * returns true. Returns false when /proc cannot be read. */
typedef bool (*proc_visit_fn)(const char *pid_name, pid_t pid, void *ctx);
bool proc_each(proc_visit_fn visit, void *ctx);

/* Whether a process of group PGID (zombies included) has one of the N names in COMMS as its comm. */
bool proc_group_has(pid_t pgid, const char *const *comms, size_t n);

/* /proc/<pid_name>/comm (the name the kernel keeps: the basename of what was exec'd, at most 15
 * characters) into OUT without its newline. Returns 0, or -1 when it cannot be read. */
int proc_comm(const char *pid_name, char *out, size_t cap);

/* Whether process PID_NAME has a file open whose path ends in /NAME: 1 or 0, or -1 when its
 * descriptors cannot be read (it is gone, or not ours to look at). Its first 4096 are looked at. */
int proc_has_open(const char *pid_name, const char *name);

#endif
