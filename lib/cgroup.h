/* The container's resource limits as cgroup v2 shows them, turned into Ray's resource flags the
 * way KubeRay computes them from the pod spec. */
#ifndef RAYBOOT_CGROUP_H
#define RAYBOOT_CGROUP_H

/* cpu.max and memory.max are one short line each. */
#define CGROUP_FILE_MAX_BYTES 256

/* "quota period" -> ceil(quota / period) CPUs (500m -> 1, 3500m -> 4); "max period" -> 0
 * (no limit). Returns -1 when text is not in either form. */
int cgroup_parse_cpu_max(const char *text, long *cpus);
/* "bytes" -> bytes; "max" -> 0 (no limit). Returns -1 when malformed. */
int cgroup_parse_memory_max(const char *text, unsigned long long *bytes);

#endif
