/* Unit tests for lib/plan/cgroup.c: cgroup v1 and v2 limits as KubeRay would turn the pod's limits into
 * flags, read from a pod root the way Ray looks for them (v1 first, then v2). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cgroup.h"

/* CPUs round up (500m -> 1, 3500m -> 4); "max" is no limit. */
static void test_cpu_max(void **state)
{
    static const struct {
        const char *text;
        long cpus;
    } ok[] = {{"max 100000\n", 0},
              {"50000 100000\n", 1},
              {"100000 100000", 1},
              {"350000 100000\n", 4},
              {"200000 100000\n", 2},
              {"1 100000", 1},
              /* quota + period overflows 64 bits: still 185 CPUs, not 0 ("no limit"). */
              {"18401844637218545807 100000000000000013\n", 185}};
    (void)state;
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        long cpus = -1;
        assert_int_equal(cgroup_parse_cpu_max(ok[i].text, &cpus), 0);
        assert_int_equal(cpus, ok[i].cpus);
    }
}

static void test_cpu_max_malformed(void **state)
{
    static const char *const bad[] = {"",
                                      "max",
                                      "abc 100000",
                                      "100000 0",
                                      "1 2 3",
                                      "-1 100000",
                                      "99999999999999999999999 100000",
                                      "100000",
                                      " 100000 100000",
                                      "max  100000"};
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        long cpus;
        if (cgroup_parse_cpu_max(bad[i], &cpus) != -1)
            fail_msg("'%s' was accepted", bad[i]);
    }
}

static void test_memory_max(void **state)
{
    unsigned long long bytes = 1;
    (void)state;
    assert_int_equal(cgroup_parse_memory_max("max\n", &bytes), 0);
    assert_int_equal(bytes, 0);
    assert_int_equal(cgroup_parse_memory_max("4294967296\n", &bytes), 0);
    assert_int_equal(bytes, 4294967296ULL);
    assert_int_equal(cgroup_parse_memory_max("0", &bytes), -1);
    assert_int_equal(cgroup_parse_memory_max("12abc", &bytes), -1);
    assert_int_equal(cgroup_parse_memory_max("maxx", &bytes), -1);
    assert_int_equal(cgroup_parse_memory_max("", &bytes), -1);
}

/* cgroup v1: quota over period rounded up (1500m -> 2); -1 is no limit. */
static void test_cfs(void **state)
{
    static const struct {
        const char *quota, *period;
        long cpus;
    } ok[] = {{"150000\n", "100000\n", 2}, {"-1\n", "100000\n", 0},    {"50000", "100000", 1},
              {"200000\n", "100000\n", 2}, {"1000\n", "1000000\n", 1}, {"-1", "100000", 0}};
    static const char *const bad[][2] = {{"", "100000"},
                                         {"150000", ""},
                                         {"150000", "0"},
                                         {"-2", "100000"},
                                         {"-1x", "100000"},
                                         {"0", "100000"},
                                         {"max", "100000"},
                                         {"150000 100000", "100000"},
                                         {"99999999999999999999999", "1"},
                                         {"150000", "-100000"}};
    (void)state;
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        long cpus = -1;
        assert_int_equal(cgroup_parse_cfs(ok[i].quota, ok[i].period, &cpus), 0);
        assert_int_equal(cpus, ok[i].cpus);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        long cpus;
        if (cgroup_parse_cfs(bad[i][0], bad[i][1], &cpus) != -1)
            fail_msg("quota '%s' period '%s' was accepted", bad[i][0], bad[i][1]);
    }
}

/* cgroup v1: a byte count; v1's "no limit" (2^63 rounded down to a page) and anything that large
 * is no limit. */
static void test_limit_in_bytes(void **state)
{
    unsigned long long bytes = 1;
    (void)state;
    assert_int_equal(cgroup_parse_limit_in_bytes("268435456\n", &bytes), 0);
    assert_int_equal(bytes, 268435456ULL);
    assert_int_equal(cgroup_parse_limit_in_bytes("9223372036854771712\n", &bytes), 0);
    assert_int_equal(bytes, 0);
    assert_int_equal(cgroup_parse_limit_in_bytes("9223372036854710272", &bytes), 0); /* 64 KiB pages */
    assert_int_equal(bytes, 0);
    assert_int_equal(cgroup_parse_limit_in_bytes("4611686018427387903", &bytes), 0); /* just under 2^62 */
    assert_int_equal(bytes, 4611686018427387903ULL);
    assert_int_equal(cgroup_parse_limit_in_bytes("0", &bytes), -1);
    assert_int_equal(cgroup_parse_limit_in_bytes("-1", &bytes), -1);
    assert_int_equal(cgroup_parse_limit_in_bytes("max", &bytes), -1);
    assert_int_equal(cgroup_parse_limit_in_bytes("12abc", &bytes), -1);
    assert_int_equal(cgroup_parse_limit_in_bytes("", &bytes), -1);
}

/* A pod root in a temporary directory, with files written relative to it. */
struct pod_root {
    char dir[64];
};

static void root_write(const struct pod_root *r, const char *rel, const char *text)
{
    char path[256];
    FILE *f;
    snprintf(path, sizeof(path), "%s/%s", r->dir, rel);
    for (char *slash = strchr(path + strlen(r->dir) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        mkdir(path, 0755);
        *slash = '/';
    }
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void root_make(struct pod_root *r)
{
    snprintf(r->dir, sizeof(r->dir), "/tmp/rayboot-test-cgroup-XXXXXX");
    assert_non_null(mkdtemp(r->dir));
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return type == FTW_DP ? rmdir(path) : unlink(path);
}

static void root_remove(const struct pod_root *r)
{
    assert_int_equal(nftw(r->dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS), 0);
}

static void read_limits(const struct pod_root *r, long cpus, unsigned long long bytes, size_t nwarnings)
{
    struct cgroup_limits limits;
    struct strv warnings;
    strv_init(&warnings);
    assert_int_equal(cgroup_read_limits(r->dir, &limits, &warnings), 0);
    if (limits.cpus != cpus || limits.memory_bytes != bytes || warnings.len != nwarnings)
        fail_msg("got %ld CPUs, %llu bytes, %zu warnings (%s); wanted %ld, %llu, %zu", limits.cpus, limits.memory_bytes,
                 warnings.len, warnings.len ? warnings.items[0] : "", cpus, bytes, nwarnings);
    strv_free(&warnings);
}

/* Where each limit is found: v1 under cpu/ or cpu,cpuacct/ and memory/, else v2; the first file
 * that exists decides, as in Ray. */
static void test_read_limits(void **state)
{
    struct pod_root r;
    (void)state;

    root_make(&r);
    read_limits(&r, 0, 0, 0); /* nothing: no limits, no warnings */
    root_write(&r, "sys/fs/cgroup/cpu.max", "200000 100000\n");
    root_write(&r, "sys/fs/cgroup/memory.max", "4294967296\n");
    read_limits(&r, 2, 4294967296ULL, 0); /* v2 */
    root_write(&r, "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "150000\n");
    root_write(&r, "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
    root_write(&r, "sys/fs/cgroup/memory/memory.limit_in_bytes", "268435456\n");
    read_limits(&r, 2, 268435456ULL, 0); /* v1 wins, as in Ray */
    root_write(&r, "sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n");
    root_write(&r, "sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
    root_write(&r, "sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
    read_limits(&r, 0, 0, 0); /* cpu/ before cpu,cpuacct/; v1's "no limit" is not v2's limit */
    root_write(&r, "sys/fs/cgroup/cpu/cpu.cfs_quota_us", "lots\n");
    read_limits(&r, 0, 0, 1); /* unparsable: no limit, one warning */
    root_remove(&r);

    root_make(&r);
    root_write(&r, "sys/fs/cgroup/cpu/cpu.cfs_quota_us", "150000\n");
    read_limits(&r, 0, 0, 1); /* the period is missing: a warning */
    root_write(&r, "sys/fs/cgroup/memory/memory.limit_in_bytes", "0\n");
    read_limits(&r, 0, 0, 2);
    root_remove(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_max), cmocka_unit_test(test_cpu_max_malformed), cmocka_unit_test(test_memory_max),
        cmocka_unit_test(test_cfs),     cmocka_unit_test(test_limit_in_bytes),    cmocka_unit_test(test_read_limits),
    };
    return cmocka_run_group_tests_name("cgroup", tests, NULL, NULL);
}
