/* Unit tests for lib/ray/rayauth.c: Ray 2.60's token sources in Ray's order (checked against the
 * pinned Ray's own loader: RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH, the Kubernetes token, then
 * ~/.ray/auth_token), its trimming, the mode rules and the bounds (RAY_USE_TLS is test_raytls.c's). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "rayauth.h"

/* A scratch directory: HOME, token files, and a RAYBOOT_ROOT for the Kubernetes token. */
static char dir[64];
static char home_env[128], path_env[160];

static void write_file(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    fclose(f);
}

static char *in_dir(const char *rel)
{
    static char buf[4][256];
    static int next;
    char *out = buf[next++ % 4];
    snprintf(out, sizeof(buf[0]), "%s/%s", dir, rel);
    return out;
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/test_rayauth.XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(home_env, sizeof(home_env), "HOME=%s/home", dir);
    mkdir(in_dir("home"), 0700);
    mkdir(in_dir("home/.ray"), 0700);
    mkdir(in_dir("root"), 0700);
    mkdir(in_dir("root/var"), 0700);
    mkdir(in_dir("root/var/run"), 0700);
    mkdir(in_dir("root/var/run/secrets"), 0700);
    mkdir(in_dir("root/var/run/secrets/ray.io"), 0700);
    mkdir(in_dir("root/var/run/secrets/ray.io/serviceaccount"), 0700);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(in_dir("home/.ray/auth_token"));
    unlink(in_dir("tok"));
    unlink(in_dir("root/var/run/secrets/ray.io/serviceaccount/token"));
    rmdir(in_dir("root/var/run/secrets/ray.io/serviceaccount"));
    rmdir(in_dir("root/var/run/secrets/ray.io"));
    rmdir(in_dir("root/var/run/secrets"));
    rmdir(in_dir("root/var/run"));
    rmdir(in_dir("root/var"));
    rmdir(in_dir("root"));
    rmdir(in_dir("home/.ray"));
    rmdir(in_dir("home"));
    rmdir(dir);
    return 0;
}

/* Each test starts with no token file anywhere. */
static int clean(void **state)
{
    (void)state;
    unlink(in_dir("home/.ray/auth_token"));
    unlink(in_dir("tok"));
    unlink(in_dir("root/var/run/secrets/ray.io/serviceaccount/token"));
    snprintf(path_env, sizeof(path_env), "RAY_AUTH_TOKEN_PATH=%s", in_dir("tok"));
    return 0;
}

static int load(const char *const *envp, struct rayauth *a, struct errbuf *err)
{
    return rayauth_load(envp, in_dir("root"), a, err);
}

/* RAY_AUTH_MODE=token with RAY_AUTH_TOKEN: blanks at both ends trimmed (inner ones kept). */
static void test_env_token_trimmed(void **state)
{
    const char *envp[] = {"RAY_AUTH_MODE=token", "RAY_AUTH_TOKEN= \tabc def\r\n", home_env, NULL};
    struct rayauth a;
    struct errbuf err;
    (void)state;
    assert_int_equal(load(envp, &a, &err), 0);
    assert_true(a.token_mode);
    assert_false(a.enable_for_ray);
    assert_string_equal(a.header, "authorization: Bearer abc def");
    assert_string_equal(a.source, "RAY_AUTH_TOKEN");
    rayauth_clear(&a);
    assert_string_equal(a.header, "");
}

/* The mode is compared without case, but not trimmed. */
static void test_mode_case(void **state)
{
    const char *upper[] = {"RAY_AUTH_MODE=TOKEN", "RAY_AUTH_TOKEN=t", home_env, NULL};
    const char *spaced[] = {"RAY_AUTH_MODE= token", "RAY_AUTH_TOKEN=t", home_env, NULL};
    struct rayauth a;
    struct errbuf err;
    (void)state;
    assert_int_equal(load(upper, &a, &err), 0);
    assert_true(a.token_mode);
    assert_int_equal(load(spaced, &a, &err), 0);
    assert_false(a.token_mode);
}

/* Set to anything but token (even empty): no token is sent, none is looked for. */
static void test_disabled_sends_nothing(void **state)
{
    const char *disabled[] = {"RAY_AUTH_MODE=disabled", "RAY_AUTH_TOKEN=t", "RAY_AUTH_TOKEN_PATH=/nonexistent",
                              home_env, NULL};
    const char *empty[] = {"RAY_AUTH_MODE=", "RAY_AUTH_TOKEN=t", home_env, NULL};
    struct rayauth a;
    struct errbuf err;
    (void)state;
    assert_int_equal(load(disabled, &a, &err), 0);
    assert_false(a.token_mode);
    assert_string_equal(a.header, "");
    assert_int_equal(load(empty, &a, &err), 0);
    assert_false(a.token_mode);
}

/* Unset mode: token mode when a token is found (as `ray start --head` does), and Ray is told. */
static void test_unset_mode_follows_the_token(void **state)
{
    const char *with[] = {"RAY_AUTH_TOKEN=t0", home_env, NULL};
    const char *without[] = {home_env, NULL};
    struct rayauth a;
    struct errbuf err;
    (void)state;
    assert_int_equal(load(with, &a, &err), 0);
    assert_true(a.token_mode);
    assert_true(a.enable_for_ray);
    assert_int_equal(load(without, &a, &err), 0);
    assert_false(a.token_mode);
    assert_false(a.enable_for_ray);
    assert_string_equal(a.header, "");
}

/* A file gives its first line, trimmed; RAY_AUTH_TOKEN comes before it. */
static void test_path_first_line(void **state)
{
    const char *envp[] = {"RAY_AUTH_MODE=token", path_env, home_env, NULL};
    const char *both[] = {"RAY_AUTH_MODE=token", "RAY_AUTH_TOKEN=fromenv", path_env, home_env, NULL};
    static const char text[] = "  \t tok1 \r\nsecond\n";
    struct rayauth a;
    struct errbuf err;
    (void)state;
    write_file(in_dir("tok"), text, sizeof(text) - 1);
    assert_int_equal(load(envp, &a, &err), 0);
    assert_string_equal(a.header, "authorization: Bearer tok1");
    assert_non_null(strstr(a.source, "RAY_AUTH_TOKEN_PATH="));
    assert_int_equal(load(both, &a, &err), 0);
    assert_string_equal(a.header, "authorization: Bearer fromenv");
}

/* RAY_AUTH_TOKEN of blanks only ends the search with no token (Ray does not go on to the file). */
static void test_blank_env_token_stops(void **state)
{
    const char *envp[] = {"RAY_AUTH_MODE=token", "RAY_AUTH_TOKEN=   ", path_env, home_env, NULL};
    static const char text[] = "fromfile\n";
    struct rayauth a;
    struct errbuf err;
    (void)state;
    write_file(in_dir("tok"), text, sizeof(text) - 1);
    assert_int_equal(load(envp, &a, &err), -1);
    assert_non_null(strstr(err.msg, "RAY_AUTH_MODE=token but no token was found"));
    assert_false(a.token_mode);
}

/* RAY_AUTH_TOKEN_PATH naming a missing file or one whose first line is blank is an error, even
 * with the mode unset (`ray start --head` refuses it too). */
static void test_bad_path_is_an_error(void **state)
{
    const char *envp[] = {path_env, home_env, NULL};
    static const char blank_first[] = "\nsecond\n";
    struct rayauth a;
    struct errbuf err;
    (void)state;
    assert_int_equal(load(envp, &a, &err), -1);
    assert_non_null(strstr(err.msg, "RAY_AUTH_TOKEN_PATH"));
    assert_non_null(strstr(err.msg, in_dir("tok")));
    write_file(in_dir("tok"), blank_first, sizeof(blank_first) - 1);
    assert_int_equal(load(envp, &a, &err), -1);
    assert_non_null(strstr(err.msg, "first line is empty"));
}

/* Without RAY_AUTH_TOKEN and RAY_AUTH_TOKEN_PATH: ~/.ray/auth_token under HOME. */
static void test_default_file(void **state)
{
    const char *envp[] = {"RAY_AUTH_MODE=token", home_env, NULL};
    static const char text[] = "deftok";
    struct rayauth a;
    struct errbuf err;
    (void)state;
    assert_int_equal(load(envp, &a, &err), -1);
    assert_non_null(strstr(err.msg, "RAY_AUTH_TOKEN"));
    assert_non_null(strstr(err.msg, "RAY_AUTH_TOKEN_PATH"));
    assert_non_null(strstr(err.msg, "~/.ray/auth_token"));
    write_file(in_dir("home/.ray/auth_token"), text, sizeof(text) - 1);
    assert_int_equal(load(envp, &a, &err), 0);
    assert_string_equal(a.header, "authorization: Bearer deftok");
    assert_string_equal(a.source, in_dir("home/.ray/auth_token"));
}

/* RAY_ENABLE_K8S_TOKEN_AUTH ("true" or "1"): the projected token under RAYBOOT_ROOT, before the
 * default file, which is still read when the projected one is missing. */
static void test_k8s_token(void **state)
{
    const char *on[] = {"RAY_AUTH_MODE=token", "RAY_ENABLE_K8S_TOKEN_AUTH=True", home_env, NULL};
    const char *one[] = {"RAY_AUTH_MODE=token", "RAY_ENABLE_K8S_TOKEN_AUTH=1", home_env, NULL};
    const char *off[] = {"RAY_AUTH_MODE=token", "RAY_ENABLE_K8S_TOKEN_AUTH=yes", home_env, NULL};
    static const char sa[] = " eyJhbGciOi.x.y \n", def[] = "deftok\n";
    struct rayauth a;
    struct errbuf err;
    (void)state;
    write_file(in_dir("home/.ray/auth_token"), def, sizeof(def) - 1);
    assert_int_equal(load(on, &a, &err), 0);
    assert_string_equal(a.header, "authorization: Bearer deftok");
    write_file(in_dir("root/var/run/secrets/ray.io/serviceaccount/token"), sa, sizeof(sa) - 1);
    assert_int_equal(load(on, &a, &err), 0);
    assert_string_equal(a.header, "authorization: Bearer eyJhbGciOi.x.y");
    assert_non_null(strstr(a.source, RAYAUTH_K8S_TOKEN_FILE));
    assert_int_equal(load(one, &a, &err), 0);
    assert_string_equal(a.header, "authorization: Bearer eyJhbGciOi.x.y");
    assert_int_equal(load(off, &a, &err), 0);
    assert_string_equal(a.header, "authorization: Bearer deftok");
}

/* Bounds: a control character inside, or a token past the limit, is refused and named by its
 * source, never printed. */
static void test_bounds(void **state)
{
    const char *ctl[] = {"RAY_AUTH_MODE=token", "RAY_AUTH_TOKEN=ab\ncd", home_env, NULL};
    static char big_env[RAYAUTH_TOKEN_MAX_BYTES + 64];
    const char *big[] = {"RAY_AUTH_MODE=token", big_env, home_env, NULL};
    const char *fits[] = {"RAY_AUTH_MODE=token", big_env, home_env, NULL};
    struct rayauth a;
    struct errbuf err;
    (void)state;
    assert_int_equal(load(ctl, &a, &err), -1);
    assert_non_null(strstr(err.msg, "RAY_AUTH_TOKEN: the token holds a control character"));
    assert_null(strstr(err.msg, "ab"));
    snprintf(big_env, sizeof(big_env), "RAY_AUTH_TOKEN=");
    memset(big_env + 15, 'x', RAYAUTH_TOKEN_MAX_BYTES + 1);
    big_env[15 + RAYAUTH_TOKEN_MAX_BYTES + 1] = '\0';
    assert_int_equal(load(big, &a, &err), -1);
    assert_non_null(strstr(err.msg, "longer than"));
    assert_null(strstr(err.msg, "xxxx"));
    big_env[15 + RAYAUTH_TOKEN_MAX_BYTES] = '\0';
    assert_int_equal(load(fits, &a, &err), 0);
    assert_int_equal(strlen(a.header), strlen("authorization: Bearer ") + RAYAUTH_TOKEN_MAX_BYTES);
}

/* A FIFO as the token file cannot hang start-up, and a NUL byte in the file is refused. */
static void test_odd_files(void **state)
{
    const char *envp[] = {"RAY_AUTH_MODE=token", path_env, home_env, NULL};
    static const char nul[] = "ab\0cd\n";
    struct rayauth a;
    struct errbuf err;
    (void)state;
    assert_int_equal(mkfifo(in_dir("tok"), 0600), 0);
    assert_int_equal(load(envp, &a, &err), -1);
    assert_non_null(strstr(err.msg, "FIFO"));
    unlink(in_dir("tok"));
    write_file(in_dir("tok"), nul, sizeof(nul) - 1);
    assert_int_equal(load(envp, &a, &err), -1);
    assert_non_null(strstr(err.msg, "RAY_AUTH_TOKEN_PATH"));
}

/* Ray older than 2.52 has no token authentication: asked for by name, token mode is refused there
 * (a cluster that looks protected and serves anyone); found by itself, it is a warning; 2.52 and
 * later, an unknown or unreadable version, and no token mode pass. */
static void test_ray_without_tokens(void **state)
{
    struct rayauth named = {.token_mode = true, .enable_for_ray = false};
    struct rayauth found = {.token_mode = true, .enable_for_ray = true};
    struct rayauth off = {.token_mode = false};
    const char *from = "/venv/lib/python3.11/site-packages/ray-2.51.9.dist-info/METADATA";
    struct errbuf err;
    (void)state;
    assert_int_equal(rayauth_check_ray(&named, "2.51.9", from, &err), -1);
    assert_non_null(strstr(err.msg, "RAY_AUTH_MODE=token: Ray 2.51.9"));
    assert_non_null(strstr(err.msg, from));
    assert_non_null(strstr(err.msg, "2.52 and later"));
    assert_int_equal(rayauth_check_ray(&found, "2.10.0", from, &err), 1);
    assert_non_null(strstr(err.msg, "nothing checks it"));
    const char *fine[] = {"2.52.0", "2.52.0rc1", "2.60.0", "3.0.0.dev0", "", "unknown"};
    for (size_t i = 0; i < sizeof(fine) / sizeof(fine[0]); i++) {
        assert_int_equal(rayauth_check_ray(&named, fine[i], from, &err), 0);
        assert_int_equal(rayauth_check_ray(&found, fine[i], from, &err), 0);
    }
    assert_int_equal(rayauth_check_ray(&off, "2.10.0", from, &err), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_env_token_trimmed, clean),
        cmocka_unit_test_setup(test_mode_case, clean),
        cmocka_unit_test_setup(test_disabled_sends_nothing, clean),
        cmocka_unit_test_setup(test_unset_mode_follows_the_token, clean),
        cmocka_unit_test_setup(test_path_first_line, clean),
        cmocka_unit_test_setup(test_blank_env_token_stops, clean),
        cmocka_unit_test_setup(test_bad_path_is_an_error, clean),
        cmocka_unit_test_setup(test_default_file, clean),
        cmocka_unit_test_setup(test_k8s_token, clean),
        cmocka_unit_test_setup(test_bounds, clean),
        cmocka_unit_test_setup(test_odd_files, clean),
        cmocka_unit_test_setup(test_ray_without_tokens, clean),
    };
    return cmocka_run_group_tests_name("rayauth", tests, setup, teardown);
}
