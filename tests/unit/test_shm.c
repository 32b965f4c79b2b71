/* Unit tests for lib/plan/shm.c: the object store Ray 2.60 sizes for itself (30% of the memory
 * limit, capped at 200 GB and by /dev/shm but never below 10 GB; --object-store-memory as given),
 * /dev/shm measured under a fake pod root, and the warning when the store does not fit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "shm.h"

#define MIB (1024ULL * 1024ULL)
#define GIB (1024ULL * MIB)

static void test_object_store_bytes(void **state)
{
    static const struct {
        unsigned long long memory, given, shm_free, want;
    } cases[] = {
        {4 * GIB, 0, 64 * MIB, 4 * GIB / 100 * 30},    /* the shipped manifests' limit: 1.2 GiB */
        {4 * GIB, 500000000, 64 * MIB, 500000000},     /* --object-store-memory as given */
        {0, 0, 64 * MIB, 0},                           /* no memory limit: unknown */
        {0, 123, 64 * MIB, 123},                       /* given, whatever the limit */
        {100 * GIB, 0, 64 * MIB, 10000000000ULL},      /* capped by /dev/shm, but not below 10 GB */
        {100 * GIB, 0, 20 * GIB, 20 * GIB / 100 * 95}, /* capped at 95% of a larger /dev/shm */
        {1024 * GIB, 0, 1024 * GIB, 200000000000ULL},  /* at most 200 GB */
        {~0ULL, 0, ~0ULL, 200000000000ULL},            /* no wrap near 2^64 */
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        unsigned long long got = shm_object_store_bytes(cases[i].memory, cases[i].given, cases[i].shm_free);
        if (got != cases[i].want)
            fail_msg("case %zu: %llu, want %llu", i, got, cases[i].want);
    }
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* A pod root: with dev/shm (a directory on whatever file system /tmp is) when with_shm. */
static void make_root(char *root, int with_shm)
{
    char path[256];
    strcpy(root, "/tmp/rayboot-shm-XXXXXX");
    assert_non_null(mkdtemp(root));
    if (!with_shm)
        return;
    snprintf(path, sizeof(path), "%s/dev", root);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof(path), "%s/dev/shm", root);
    assert_int_equal(mkdir(path, 01777), 0);
}

static void test_free_bytes_under_a_root(void **state)
{
    char root[64];
    unsigned long long bytes = 0;
    (void)state;
    make_root(root, 1);
    assert_int_equal(shm_free_bytes(root, &bytes), 0);
    assert_true(bytes > 0);
    nftw(root, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
    make_root(root, 0);
    errno = 0;
    assert_int_equal(shm_free_bytes(root, &bytes), -1);
    assert_int_equal(errno, ENOENT);
    nftw(root, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* shm_check's warnings for a pod root and a ray start argv with store_flag (NULL: none). */
static size_t check(const char *root, unsigned long long memory, const char *store_flag, struct strv *warnings)
{
    struct strv argv;
    strv_init(&argv);
    strv_init(warnings);
    assert_int_equal(strv_push(&argv, "ray"), 0);
    assert_int_equal(strv_push(&argv, "start"), 0);
    if (store_flag)
        assert_int_equal(strv_push(&argv, store_flag), 0);
    assert_int_equal(strv_push(&argv, "--block"), 0);
    assert_int_equal(shm_check(root, memory, &argv, warnings), 0);
    strv_free(&argv);
    return warnings->len;
}

static void test_check(void **state)
{
    char root[64];
    struct strv w;
    (void)state;
    make_root(root, 1);
    /* Larger than any disk /tmp is on: never fits, and names the fix. */
    assert_int_equal(check(root, 4 * GIB, "--object-store-memory=1000000000000000000", &w), 1);
    assert_non_null(strstr(w.items[0], "/dev/shm has "));
    assert_non_null(strstr(w.items[0], "(--object-store-memory)"));
    assert_non_null(strstr(w.items[0], "ray start will refuse it"));
    assert_non_null(strstr(w.items[0], "emptyDir: {medium: Memory, sizeLimit: 953674316407Mi}"));
    strv_free(&w);
    assert_int_equal(check(root, 4 * GIB, "--object-store-memory=1", &w), 0); /* fits anywhere */
    strv_free(&w);
    assert_int_equal(check(root, 0, NULL, &w), 0); /* no memory limit, none given: unknown */
    strv_free(&w);
    assert_int_equal(check(root, 4 * GIB, "--object-store-memory=lots", &w), 0); /* Ray's to refuse */
    strv_free(&w);
    nftw(root, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
    make_root(root, 0); /* no /dev/shm at all: nothing to measure */
    assert_int_equal(check(root, 4 * GIB, "--object-store-memory=1000000000000000000", &w), 0);
    strv_free(&w);
    nftw(root, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_object_store_bytes),
        cmocka_unit_test(test_free_bytes_under_a_root),
        cmocka_unit_test(test_check),
    };
    return cmocka_run_group_tests_name("shm", tests, NULL, NULL);
}
