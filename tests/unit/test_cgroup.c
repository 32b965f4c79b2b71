/* Unit tests for lib/cgroup.c: cgroup v2 limits as KubeRay would turn the pod's limits into flags. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cgroup.h"

/* CPUs round up (500m -> 1, 3500m -> 4); "max" is no limit. */
static void test_cpu_max(void **state)
{
    static const struct {
        const char *text;
        long cpus;
    } ok[] = {{"max 100000\n", 0}, {"50000 100000\n", 1}, {"100000 100000", 1}, {"350000 100000\n", 4},
              {"200000 100000\n", 2}, {"1 100000", 1},
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
    static const char *const bad[] = {"", "max", "abc 100000", "100000 0", "1 2 3", "-1 100000",
                                      "99999999999999999999999 100000", "100000", " 100000 100000", "max  100000"};
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_max),
        cmocka_unit_test(test_cpu_max_malformed),
        cmocka_unit_test(test_memory_max),
    };
    return cmocka_run_group_tests_name("cgroup", tests, NULL, NULL);
}
