/* The container's resource limits as cgroup v1 or v2 shows them, turned into Ray's resource
 * flags the way KubeRay computes them from the pod spec. */
#ifndef RAYBOOT_CGROUP_H
#define RAYBOOT_CGROUP_H

#include "strv.h"

/* cpu.max, memory.max, cpu.cfs_quota_us, cpu.cfs_period_us and memory.limit_in_bytes are one
 * short line each. */
#define CGROUP_FILE_MAX_BYTES 256
/* cgroup v1 shows "no memory limit" as PAGE_COUNTER_MAX pages: 2^63 rounded down to the page size
 * (9223372036854771712 with 4 KiB pages). From 2^62 bytes (4 EiB, beyond any node) a limit is
 * taken as that. */
#define CGROUP_V1_UNLIMITED_MIN_BYTES (1ULL << 62)

/* What the container may use; 0 means no limit (Ray decides). */
struct cgroup_limits {
    long cpus; /* rounded up */
    unsigned long long memory_bytes;
};

/* "quota period" -> ceil(quota / period) CPUs (500m -> 1, 3500m -> 4); "max period" -> 0
 * (no limit). Returns -1 when text is not in either form. */
int cgroup_parse_cpu_max(const char *text, long *cpus);
/* "bytes" -> bytes; "max" -> 0 (no limit). Returns -1 when malformed. */
int cgroup_parse_memory_max(const char *text, unsigned long long *bytes);
/* cgroup v1: cpu.cfs_quota_us and cpu.cfs_period_us -> ceil(quota / period) CPUs; a quota of -1
 * -> 0 (no limit). Returns -1 when either is malformed. */
int cgroup_parse_cfs(const char *quota, const char *period, long *cpus);
/* cgroup v1: memory.limit_in_bytes -> bytes; CGROUP_V1_UNLIMITED_MIN_BYTES or more -> 0 (no
 * limit). Returns -1 when malformed. */
int cgroup_parse_limit_in_bytes(const char *text, unsigned long long *bytes);

/* Reads the limits under root (RAYBOOT_ROOT; NULL in production) in Ray's own order: cgroup v1
 * first, then v2; the first file that exists decides. A missing file is no limit, silently; one
 * that exists but cannot be read or parsed is no limit too, with a warning naming it appended to
 * warnings. Returns 0, or -1 when out of memory. */
int cgroup_read_limits(const char *root, struct cgroup_limits *out, struct strv *warnings);

#endif
