/* Keeping Ray's token (and whatever else the environment holds) out of /proc: a process of the
 * same UID may read /proc/PID/environ and /proc/PID/mem of any dumpable process it can see. Both
 * programs hide themselves first thing; their forked helpers shed the environment too. What Ray
 * and the user's command hold is theirs: execve makes a process dumpable again. */
#ifndef RAYBOOT_SECRETS_H
#define RAYBOOT_SECRETS_H

#include "errbuf.h"

/* Makes this process non-dumpable (prctl PR_SET_DUMPABLE 0): /proc/PID/environ, mem, maps and fd
 * become unreadable to other processes without CAP_SYS_PTRACE, ptrace attach is refused and no
 * core is written as this UID. Forked children inherit it; execve resets it. */
int secrets_hide_process(struct errbuf *err);

/* For a forked helper that does not run the user's code, between fork and confinement (it opens
 * /proc/self/stat): hidden as above, its environment overwritten (scrub_environment: read what
 * you need first) and RLIMIT_CORE 0, hard and soft, so that neither a core nor /proc shows what
 * it inherited. On failure the environment is gone all the same. */
int secrets_shed(struct errbuf *err);

#endif
