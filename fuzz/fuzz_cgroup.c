/* libFuzzer target: lib/cgroup.c on any cpu.max / memory.max text. A limit that parses must mean
 * something: 0 ("no limit") only for "max" (or a zero quota), never for a real quota; CPUs are
 * bounded by the parser's own sanity cap. */
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "fuzz.h"

/* cgroup.c rejects a quota of 2^20 CPUs or more as malformed; the round-up adds at most one. */
#define FUZZ_CPUS_MAX (1L << 20)

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
    free(text);
    return 0;
}
