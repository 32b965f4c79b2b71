/* The soft limit on open files (RLIMIT_NOFILE) Ray is started with: RAYBOOT_NOFILE, else
 * KubeRay's `ulimit -n 65536`. Parsing and the choice against the hard limit; the setrlimit is
 * init/'s. */
#ifndef RAYBOOT_NOFILE_H
#define RAYBOOT_NOFILE_H

#include "errbuf.h"

/* KubeRay's `ulimit -n 65536` before `ray start`: Ray holds a descriptor per worker process,
 * connection and object, and containerd 2.x leaves a soft limit of 1,024. */
#define NOFILE_DEFAULT 65536L
/* The kernel's largest fs.nr_open (INT_MAX rounded down to a multiple of BITS_PER_LONG): more
 * is a typo. */
#define NOFILE_MAX 1073741816L

/* RAYBOOT_NOFILE from envp into *target: NOFILE_DEFAULT when unset, 0 for "0" or "keep" (leave
 * the limit as it is). -1 with a message naming the variable on anything else. */
int nofile_parse(const char *const *envp, long *target, struct errbuf *err);

/* What the soft limit becomes for target (0: keep) given the current soft and hard limits: it
 * is raised to target, or to hard when hard is lower (*clamped set), never lowered. */
unsigned long long nofile_choose(long target, unsigned long long soft, unsigned long long hard, int *clamped);

#endif
