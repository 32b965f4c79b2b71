/* The container's CPU and memory limits from cgroup v1 or v2 files: finding, reading and parsing
 * them. Turning them into `ray start` flags is lib/plan/raystart.c's. */
#include "cgroup.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsroot.h"

/* Ray's paths (ray/_private/utils.py _get_docker_cpus, ray/_common/utils.py get_system_memory).
 * Container runtimes mount the v1 cpu controller at cpu,cpuacct with cpu a symlink to it; the
 * second directory serves copies of /sys/fs/cgroup that lost the symlink. */
static const char *const cpu_v1_dirs[] = {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"};
#define CPU_V2_FILE "/sys/fs/cgroup/cpu.max"
#define MEMORY_V1_FILE "/sys/fs/cgroup/memory/memory.limit_in_bytes"
#define MEMORY_V2_FILE "/sys/fs/cgroup/memory.max"

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

/* No CPU limit: 0 CPUs, as the callers read it. */
static int cpus_unlimited(long *cpus)
{
    *cpus = 0;
    return 0;
}

/* A CFS quota over its period, in whole CPUs rounded up (v1's cfs_quota_us / cfs_period_us and
 * v2's cpu.max say the same thing in two files or one). */
static int cpus_from_quota(unsigned long long quota, unsigned long long period, long *cpus)
{
    if (quota / period >= 1u << 20) /* more CPUs than any machine has: malformed */
        return -1;
    /* Rounded up without quota + period - 1, which wraps for huge values and made "no limit" of
     * a limit (found by fuzz/fuzz_cgroup.c). */
    *cpus = (long)(quota / period + (quota % period != 0));
    return 0;
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
    return unlimited ? cpus_unlimited(cpus) : cpus_from_quota(quota, period, cpus);
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

int cgroup_parse_cfs(const char *quota, const char *period, long *cpus)
{
    const char *q = quota, *p = period;
    unsigned long long quota_us = 0, period_us = 0;
    bool unlimited = strncmp(q, "-1", 2) == 0;

    if (unlimited)
        q += 2;
    else if (!parse_u64(&q, &quota_us) || quota_us == 0)
        return -1;
    if (!at_end(q) || !parse_u64(&p, &period_us) || period_us == 0 || !at_end(p))
        return -1;
    return unlimited ? cpus_unlimited(cpus) : cpus_from_quota(quota_us, period_us, cpus);
}

int cgroup_parse_limit_in_bytes(const char *text, unsigned long long *bytes)
{
    const char *p = text;
    if (!parse_u64(&p, bytes) || !at_end(p) || *bytes == 0)
        return -1;
    if (*bytes >= CGROUP_V1_UNLIMITED_MIN_BYTES)
        *bytes = 0;
    return 0;
}

/* What looking for one limit file found. */
enum found { FOUND_NONE, FOUND_TEXT, FOUND_BROKEN, FOUND_OOM };

/* Reads root + path. A file that is not there (nor its directory: cgroup v2 has no cpu/) is
 * FOUND_NONE; one that is there but unreadable is FOUND_BROKEN with a warning. */
static enum found read_limit_file(const char *root, const char *path, char **text, struct strv *warnings)
{
    struct errbuf why;
    if (fsroot_read(root, path, CGROUP_FILE_MAX_BYTES, text, NULL, &why) == 0)
        return FOUND_TEXT;
    if (errno == ENOENT || errno == ENOTDIR)
        return FOUND_NONE;
    return strv_pushf(warnings, "%s; leaving that resource to Ray", why.msg) < 0 ? FOUND_OOM : FOUND_BROKEN;
}

static enum found warn_unparsed(struct strv *warnings, const char *path, const char *text)
{
    size_t n = strcspn(text, "\n");
    return strv_pushf(warnings, "%s: cannot parse '%.*s'; leaving that resource to Ray", path, (int)(n > 40 ? 40 : n),
                      text) < 0
               ? FOUND_OOM
               : FOUND_BROKEN;
}

/* cgroup v1's CFS quota and period in one of dir's two files; FOUND_NONE when the quota file is
 * not there. */
static enum found read_cfs(const char *root, const char *dir, long *cpus, struct strv *warnings)
{
    char quota_path[128], period_path[128];
    char *quota = NULL, *period = NULL;
    enum found f;

    snprintf(quota_path, sizeof(quota_path), "%s/cpu.cfs_quota_us", dir);
    snprintf(period_path, sizeof(period_path), "%s/cpu.cfs_period_us", dir);
    f = read_limit_file(root, quota_path, &quota, warnings);
    if (f != FOUND_TEXT)
        return f;
    f = read_limit_file(root, period_path, &period, warnings);
    if (f == FOUND_NONE)
        f = strv_pushf(warnings, "%s: missing beside %s; leaving that resource to Ray", period_path, quota_path) < 0
                ? FOUND_OOM
                : FOUND_BROKEN;
    if (f == FOUND_TEXT && cgroup_parse_cfs(quota, period, cpus) < 0) {
        char both[128];
        snprintf(both, sizeof(both), "%.40s / %.40s", quota, period);
        for (char *c = both; *c; c++)
            *c = (char)(*c == '\n' ? ' ' : *c);
        f = warn_unparsed(warnings, quota_path, both);
    }
    free(quota);
    free(period);
    return f;
}

/* One single-file limit: FOUND_NONE when path is not there. */
static enum found read_one(const char *root, const char *path, int (*parse)(const char *, void *), void *value,
                           struct strv *warnings)
{
    char *text = NULL;
    enum found f = read_limit_file(root, path, &text, warnings);
    if (f == FOUND_TEXT && parse(text, value) < 0)
        f = warn_unparsed(warnings, path, text);
    free(text);
    return f;
}

static int parse_cpu_max(const char *text, void *cpus)
{
    return cgroup_parse_cpu_max(text, cpus);
}

static int parse_memory_max(const char *text, void *bytes)
{
    return cgroup_parse_memory_max(text, bytes);
}

static int parse_limit_in_bytes(const char *text, void *bytes)
{
    return cgroup_parse_limit_in_bytes(text, bytes);
}

int cgroup_read_limits(const char *root, struct cgroup_limits *out, struct strv *warnings)
{
    enum found f = FOUND_NONE;

    out->cpus = 0;
    out->memory_bytes = 0;
    for (size_t i = 0; f == FOUND_NONE && i < sizeof(cpu_v1_dirs) / sizeof(cpu_v1_dirs[0]); i++)
        f = read_cfs(root, cpu_v1_dirs[i], &out->cpus, warnings);
    if (f == FOUND_NONE)
        f = read_one(root, CPU_V2_FILE, parse_cpu_max, &out->cpus, warnings);
    if (f == FOUND_BROKEN)
        out->cpus = 0;
    if (f == FOUND_OOM)
        return -1;
    f = read_one(root, MEMORY_V1_FILE, parse_limit_in_bytes, &out->memory_bytes, warnings);
    if (f == FOUND_NONE)
        f = read_one(root, MEMORY_V2_FILE, parse_memory_max, &out->memory_bytes, warnings);
    if (f == FOUND_BROKEN)
        out->memory_bytes = 0;
    return f == FOUND_OOM ? -1 : 0;
}
