/* Unit tests for lib/plan/nofile.c: RAYBOOT_NOFILE's values, and the soft limit chosen against the
 * current soft and hard limits (raised, capped by the hard limit, never lowered). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "nofile.h"

static int parse(const char *value, long *target, struct errbuf *err)
{
    char var[128];
    const char *envp[] = {var, NULL};
    if (!value)
        envp[0] = NULL;
    else
        snprintf(var, sizeof(var), "RAYBOOT_NOFILE=%s", value);
    return nofile_parse(envp, target, err);
}

static void test_parse(void **state)
{
    static const struct {
        const char *value;
        long target;
    } ok[] = {{NULL, NOFILE_DEFAULT},
              {"", NOFILE_DEFAULT},
              {"65536", 65536},
              {" 1048576 ", 1048576},
              {"keep", 0},
              {"0", 0},
              {"1", 1},
              {"1073741816", NOFILE_MAX}};
    (void)state;
    assert_int_equal(NOFILE_DEFAULT, 65536); /* KubeRay's ulimit -n */
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        struct errbuf err;
        long target = -7;
        if (parse(ok[i].value, &target, &err) != 0)
            fail_msg("RAYBOOT_NOFILE=%s refused: %s", ok[i].value, err.msg);
        assert_int_equal(target, ok[i].target);
    }
}

static void test_parse_bad(void **state)
{
    static const char *const bad[] = {"-1", "1073741817", "65536k", "unlimited", "KEEP", "1e5", "0x10000", "6 5"};
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct errbuf err;
        long target;
        if (parse(bad[i], &target, &err) != -1)
            fail_msg("RAYBOOT_NOFILE=%s accepted", bad[i]);
        assert_non_null(strstr(err.msg, "RAYBOOT_NOFILE="));
        assert_non_null(strstr(err.msg, bad[i]));
    }
}

static void test_choose(void **state)
{
    static const struct {
        long target;
        unsigned long long soft, hard, want;
        int clamped;
    } cases[] = {
        {65536, 1024, 1048576, 65536, 0},      /* containerd 2.x: raised */
        {65536, 1024, ~0ULL, 65536, 0},        /* hard unlimited (RLIM_INFINITY) */
        {65536, 1024, 20000, 20000, 1},        /* hard below: the hard limit, with a warning */
        {65536, 1048576, 1048576, 1048576, 0}, /* already higher: never lowered */
        {65536, 65536, 65536, 65536, 0},       /* already there */
        {0, 1024, 1048576, 1024, 0},           /* keep */
        {4096, 1024, 4096, 4096, 0},           /* exactly the hard limit */
        {65536, 30000, 20000, 30000, 1},       /* soft above hard cannot happen; never lowered anyway */
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int clamped = -1;
        unsigned long long got = nofile_choose(cases[i].target, cases[i].soft, cases[i].hard, &clamped);
        if (got != cases[i].want || clamped != cases[i].clamped)
            fail_msg("case %zu: got %llu clamped %d, want %llu clamped %d", i, got, clamped, cases[i].want,
                     cases[i].clamped);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_parse_bad),
        cmocka_unit_test(test_choose),
    };
    return cmocka_run_group_tests_name("nofile", tests, NULL, NULL);
}
