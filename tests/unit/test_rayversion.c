/* Unit tests for lib/plan/rayversion.c: the local Ray's version read from its package metadata in
 * a faked pod root (PATH search, symlinks, lib64 and dist-packages, missing or odd files), and the
 * 2.49 gate's comparison. */
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

#include "rayversion.h"

static char root[64];

static void mkdirs(const char *rel)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    for (char *s = path + strlen(root) + 1; (s = strchr(s, '/')) != NULL; s++) {
        *s = '\0';
        mkdir(path, 0755);
        *s = '/';
    }
}

static void put(const char *rel, const char *text, mode_t mode)
{
    char path[512];
    FILE *f;
    mkdirs(rel);
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(chmod(path, mode), 0);
}

static void link_to(const char *rel, const char *target)
{
    char path[512];
    mkdirs(rel);
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    unlink(path);
    assert_int_equal(symlink(target, path), 0);
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return type == FTW_DP ? rmdir(path) : unlink(path);
}

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof(root), "/tmp/rayboot-test-rayversion-XXXXXX");
    return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return nftw(root, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static void expect(const char *path_env, const char *ray, const char *version, const char *from_or_why)
{
    const char *envp[] = {path_env, NULL};
    struct rayversion v;
    rayversion_read(root, envp, ray, &v);
    if (strcmp(v.version, version) != 0 || !strstr(version[0] ? v.from : v.why, from_or_why))
        fail_msg("%s, %s: got version '%s' from '%s' (why: '%s'); wanted '%s', '%s'", path_env, ray, v.version, v.from,
                 v.why, version, from_or_why);
}

#define META "Metadata-Version: 2.4\nName: ray\nVersion: 2.60.0\nSummary: Ray\n\nVersion: 9.9 in the description\n"

/* A venv's script found on PATH, and through a symlink from a directory earlier on it. */
static void test_venv_on_path(void **state)
{
    (void)state;
    put("opt/venv/bin/ray", "#!/opt/venv/bin/python\n", 0755);
    put("opt/venv/lib/python3.11/site-packages/ray-2.60.0.dist-info/METADATA", META, 0644);
    expect("PATH=/usr/bin:/opt/venv/bin", "ray", "2.60.0",
           "/opt/venv/lib/python3.11/site-packages/ray-2.60.0.dist-info/METADATA");
    /* RAYBOOT_RAY as a path; the default PATH when there is none. */
    expect("X=1", "/opt/venv/bin/ray", "2.60.0", "/opt/venv/lib/");
    expect("X=1", "ray", "", "no executable ray on PATH=/usr/local/bin:/usr/bin:/bin");
    /* /usr/local/bin/ray -> /opt/venv/bin/ray (absolute, under the root) is followed to its venv. */
    link_to("usr/local/bin/ray", "/opt/venv/bin/ray");
    expect("X=1", "ray", "2.60.0", "/opt/venv/lib/");
    link_to("usr/bin/ray", "../../opt/venv/bin/ray");
    expect("PATH=/usr/bin", "ray", "2.60.0", "/opt/venv/lib/");
}

/* Not executable, no metadata, no Version: line among the headers: unknown, saying why. */
static void test_unknown(void **state)
{
    (void)state;
    put("a/bin/ray", "#!/bin/sh\n", 0644);
    expect("PATH=/a/bin", "ray", "", "no executable ray on PATH=/a/bin");
    put("a/bin/ray", "#!/bin/sh\n", 0755);
    expect("PATH=/a/bin", "ray", "", "no ray-*.dist-info in /a/lib*/python3.*/{site,dist}-packages");
    put("a/lib/python3.12/site-packages/ray_cpp-2.60.0.dist-info/METADATA", META, 0644);
    expect("PATH=/a/bin", "ray", "", "no ray-*.dist-info");
    put("a/lib/python3.12/site-packages/ray-2.60.0.dist-info/METADATA", "Name: ray\n\nVersion: 2.60.0\n", 0644);
    expect("PATH=/a/bin", "ray", "", "no Version: line");
    put("a/lib/python3.12/site-packages/ray-2.60.0.dist-info/METADATA", "Name: ray\nVersion: 2.60 0\n", 0644);
    expect("PATH=/a/bin", "ray", "", "no Version: line");
    link_to("b/bin/ray", "ray");
    expect("PATH=/b/bin", "ray", "", "a symlink that cannot be followed");
}

/* Fedora's lib64, Debian's dist-packages, CRLF metadata. */
static void test_layouts(void **state)
{
    (void)state;
    put("c/bin/ray", "", 0755);
    put("c/lib64/python3.9/site-packages/ray-2.48.0.dist-info/METADATA", "Name: ray\r\nVersion: 2.48.0\r\n\r\n", 0644);
    expect("PATH=/c/bin", "ray", "2.48.0", "/c/lib64/python3.9/site-packages/ray-2.48.0.dist-info/METADATA");
    put("d/bin/ray", "", 0755);
    put("d/lib/python3.11/dist-packages/ray-2.49.0rc1.dist-info/METADATA", "Version:2.49.0rc1\n", 0644);
    expect("PATH=/d/bin", "ray", "2.49.0rc1", "/d/lib/python3.11/dist-packages/");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_venv_on_path), cmocka_unit_test(test_unknown),
                                       cmocka_unit_test(test_layouts)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
