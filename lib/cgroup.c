/* cgroup v2 limit files: parsing only; reading them is the planner's. */
#include "cgroup.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

/* Parses a decimal u64 at *p, advancing it; false on no digits or overflow. */
static bool parse_u64(const char **p, unsigned long long *out)
{
    unsigned long long v = 0;
    const char *s = *p;
    if (!isdigit((unsigned char)*s))
        return false;
    for (; isdigit((unsigned char)*s); s++) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (~0ULL - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *p = s;
    *out = v;
    return true;
}

/* Only trailing whitespace (the kernel's newline) may follow a value. */
static bool at_end(const char *p)
{
    while (isspace((unsigned char)*p))
        p++;
    return *p == '\0';
}

int cgroup_parse_cpu_max(const char *text, long *cpus)
{
    const char *p = text;
    unsigned long long quota = 0, period = 0;
    bool unlimited = strncmp(p, "max", 3) == 0;

    if (unlimited)
        p += 3;
    else if (!parse_u64(&p, &quota))
        return -1;
    if (*p != ' ')
        return -1;
    p++;
    if (!parse_u64(&p, &period) || period == 0 || !at_end(p))
        return -1;
    if (unlimited) {
        *cpus = 0;
        return 0;
    }
    if (quota / period >= 1u << 20) /* more CPUs than any machine has: malformed */
        return -1;
    /* Rounded up without quota + period - 1, which wraps for huge values and made "no limit" of
     * a limit (found by fuzz/fuzz_cgroup.c). */
    *cpus = (long)(quota / period + (quota % period != 0));
    return 0;
}

int cgroup_parse_memory_max(const char *text, unsigned long long *bytes)
{
    const char *p = text;
    if (strncmp(p, "max", 3) == 0 && at_end(p + 3)) {
        *bytes = 0;
        return 0;
    }
    if (!parse_u64(&p, bytes) || !at_end(p) || *bytes == 0)
        return -1;
    return 0;
}
