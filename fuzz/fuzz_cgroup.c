/* libFuzzer target: lib/plan/cgroup.c on any cpu.max / memory.max text (cgroup v2), and on cgroup v1's
 * cpu.cfs_quota_us and cpu.cfs_period_us (the input's first line the quota, the rest the period)
 * and memory.limit_in_bytes (the whole input). A limit that parses must mean something: 0 ("no
 * limit") only for "max", a quota of -1 or v1's huge "no limit" number, never for a real quota;
 * CPUs are bounded by the parser's own sanity cap. */
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "fuzz.h"

/* cgroup.c rejects a quota of 2^20 CPUs or more as malformed; the round-up adds at most one. */
#define FUZZ_CPUS_MAX (1L << 20)

static void check_v1(char *text)
{
    char *lines[2];
    long cpus = -1;
    unsigned long long bytes = 1;

    if (cgroup_parse_limit_in_bytes(text, &bytes) == 0) {
        unsigned long long given = strtoull(text, NULL, 10);
        if ((bytes == 0) != (given >= CGROUP_V1_UNLIMITED_MIN_BYTES) || (bytes != 0 && bytes != given))
            __builtin_trap();
    }
    if (fuzz_split(text, '\n', lines, 2) == 2 && cgroup_parse_cfs(lines[0], lines[1], &cpus) == 0) {
        int unlimited = strncmp(lines[0], "-1", 2) == 0;
        if (cpus < 0 || cpus > FUZZ_CPUS_MAX || (cpus == 0) != unlimited)
            __builtin_trap();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_strndup(data, size);
    long cpus = -1;
    unsigned long long bytes = 1;

    if (cgroup_parse_cpu_max(text, &cpus) == 0) {
        int unlimited = strncmp(text, "max", 3) == 0;
        /* strtoull saturates on overflow, but such a quota never parses. */
        unsigned long long quota = unlimited ? 0 : strtoull(text, NULL, 10);
        if (cpus < 0 || cpus > FUZZ_CPUS_MAX || (cpus == 0 && quota != 0) || (unlimited && cpus != 0))
            __builtin_trap();
    }
    if (cgroup_parse_memory_max(text, &bytes) == 0) {
        if ((bytes == 0) != (strncmp(text, "max", 3) == 0))
            __builtin_trap();
    }
    check_v1(text);
    free(text);
    return 0;
}
