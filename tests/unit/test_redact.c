/* Unit tests for lib/base/redact.c: which names hold secrets, a secret's value in a line and in an
 * argv (--name=value, --name value, NAME=VALUE, a URL's password) shown as the marker, and what is
 * left alone (paths, modes, a URL without a password, a flag without a value). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "redact.h"

static bool secret(const char *name)
{
    return redact_secret_name(name, strlen(name));
}

static void test_names(void **state)
{
    (void)state;
    assert_true(secret("--redis-password"));
    assert_true(secret("REDIS_PASSWORD"));
    assert_true(secret("RAY_AUTH_TOKEN"));
    assert_true(secret("AWS_SECRET_ACCESS_KEY"));
    assert_true(secret("--api-key"));
    assert_false(secret("RAY_AUTH_TOKEN_PATH")); /* a file's name, not a token */
    assert_false(secret("RAY_AUTH_MODE"));
    assert_false(secret("--redis-username"));
    assert_false(secret("--node-name"));
}

static void check_text(const char *in, const char *want)
{
    char out[256];
    assert_int_equal(redact_text(out, sizeof(out), in), strlen(want));
    assert_string_equal(out, want);
}

static void test_text(void **state)
{
    (void)state;
    check_text("ray start --redis-password=hunter2 --block", "ray start --redis-password=<redacted> --block");
    check_text("ray start --redis-password hunter2 --block", "ray start --redis-password hunter2 --block");
    check_text("REDIS_PASSWORD=pw RAY_AUTH_MODE=token", "REDIS_PASSWORD=<redacted> RAY_AUTH_MODE=token");
    check_text("RAY_AUTH_TOKEN_PATH=/etc/ray/token", "RAY_AUTH_TOKEN_PATH=/etc/ray/token");
    check_text("--address=redis://:pw@redis:6379 and https://u:p%40ss@h/x?y=1",
               "--address=redis://:<redacted>@redis:6379 and https://u:<redacted>@h/x?y=1");
    check_text("http://head:8265/api and https://user@h/ and a@b:c",
               "http://head:8265/api and https://user@h/ and a@b:c");
    check_text("--redis-password= and --redis-password", "--redis-password= and --redis-password");
    check_text("the token from RAY_AUTH_TOKEN", "the token from RAY_AUTH_TOKEN");
}

static void test_text_is_cut_at_cap(void **state)
{
    char out[12];
    (void)state;
    assert_int_equal(redact_text(out, sizeof(out), "token=abcdef"), 11);
    assert_string_equal(out, "token=<reda");
}

static void test_strv(void **state)
{
    struct strv in, out;
    const char *words[] = {"ray",
                           "start",
                           "--redis-password",
                           "-starts-with-a-dash",
                           "--redis-password=x",
                           "--address=rediss://u:v@r:6380",
                           "--block"};
    const char *want[] = {"ray",
                          "start",
                          "--redis-password",
                          REDACT_MARKER,
                          "--redis-password=" REDACT_MARKER,
                          "--address=rediss://u:" REDACT_MARKER "@r:6380",
                          "--block"};
    (void)state;
    strv_init(&in);
    strv_init(&out);
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        assert_int_equal(strv_push(&in, words[i]), 0);
    assert_int_equal(redact_strv(&in, &out), 0);
    assert_int_equal(out.len, in.len);
    for (size_t i = 0; i < out.len; i++)
        assert_string_equal(out.items[i], want[i]);
    assert_string_equal(in.items[4], "--redis-password=x"); /* what is exec'd is untouched */
    strv_free(&in);
    strv_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_text_is_cut_at_cap),
        cmocka_unit_test(test_strv),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
