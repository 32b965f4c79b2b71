/* Unit tests for lib/ray/raytls.c: RAY_USE_TLS as Ray reads it, the files given (read as they are),
 * a client certificate made in memory from RAYBOOT_TLS_CA_KEY when none is given, and every
 * missing or bad piece named by its variable. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <mbedtls/x509_crt.h>

#include "raytls.h"

#define D "tests/unit/data/tls/"
#define NOW ((time_t)1800000000)

static int load(const char *const *envp, struct raytls *t, struct errbuf *err)
{
    return raytls_load(envp, "j-worker-0", NOW, t, err);
}

static void expect_error(const char *const *envp, const char *what)
{
    struct raytls t;
    struct errbuf err = {""};
    assert_int_equal(load(envp, &t, &err), -1);
    assert_false(t.on);
    assert_null(t.key);
    if (!strstr(err.msg, what))
        fail_msg("expected \"%s\" in \"%s\"", what, err.msg);
}

static void test_on_as_ray_reads_it(void **state)
{
    const char *on[][2] = {{"RAY_USE_TLS=1", NULL}, {"RAY_USE_TLS=true", NULL}, {"RAY_USE_TLS=TRUE", NULL}};
    const char *off[][2] = {{"RAY_USE_TLS=0", NULL}, {"RAY_USE_TLS=", NULL}, {"RAY_USE_TLS=yes", NULL}, {NULL, NULL}};
    struct raytls t;
    struct errbuf err;
    (void)state;
    for (size_t i = 0; i < sizeof(on) / sizeof(on[0]); i++)
        assert_true(raytls_wanted(on[i]));
    for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++) {
        assert_false(raytls_wanted(off[i]));
        assert_int_equal(load(off[i], &t, &err), 0);
        assert_false(t.on);
    }
}

static void test_files_as_given(void **state)
{
    const char *envp[] = {"RAY_USE_TLS=1",
                          "RAY_TLS_CA_CERT=" D "ca.crt",
                          "RAY_TLS_SERVER_CERT=" D "leaf.crt",
                          "RAY_TLS_SERVER_KEY=" D "leaf.key",
                          "RAYBOOT_TLS_CA_KEY=" D "ca.key",
                          NULL};
    struct raytls t;
    struct errbuf err;
    (void)state;
    assert_int_equal(load(envp, &t, &err), 0);
    assert_true(t.on);
    assert_non_null(strstr(t.tls.ca, "BEGIN CERTIFICATE"));
    assert_non_null(strstr(t.tls.cert, "BEGIN CERTIFICATE"));
    assert_non_null(strstr(t.tls.key, "BEGIN PRIVATE KEY"));
    assert_int_equal(t.tls.key_len, strlen(t.tls.key));
    assert_string_equal(t.source, "RAY_TLS_SERVER_CERT=" D "leaf.crt and RAY_TLS_SERVER_KEY=" D "leaf.key");
    raytls_free(&t);
}

static void test_made_in_memory_from_the_ca_key(void **state)
{
    const char *envp[] = {"RAY_USE_TLS=true", "RAY_TLS_CA_CERT=" D "ca.crt", "RAYBOOT_TLS_CA_KEY=" D "ca.key",
                          "RAYBOOT_TLS_CERT_HOURS=2", NULL};
    struct raytls t;
    struct errbuf err;
    mbedtls_x509_crt crt;
    (void)state;
    assert_int_equal(load(envp, &t, &err), 0);
    assert_true(t.on);
    assert_non_null(strstr(t.tls.key, "BEGIN EC PRIVATE KEY"));
    assert_non_null(strstr(t.source, "a certificate for j-worker-0 made from RAYBOOT_TLS_CA_KEY=" D "ca.key"));
    mbedtls_x509_crt_init(&crt);
    assert_int_equal(mbedtls_x509_crt_parse(&crt, (const unsigned char *)t.tls.cert, t.tls.cert_len + 1), 0);
    /* 2027-01-15 08:00 UTC and two hours. */
    assert_int_equal(crt.valid_to.hour, 10);
    assert_int_equal(crt.valid_to.day, 15);
    mbedtls_x509_crt_free(&crt);
    raytls_free(&t);
}

static void test_what_is_missing_is_named(void **state)
{
    const char *no_ca[] = {"RAY_USE_TLS=1", "RAY_TLS_SERVER_CERT=" D "leaf.crt", "RAY_TLS_SERVER_KEY=" D "leaf.key",
                           NULL};
    const char *no_key[] = {"RAY_USE_TLS=1", "RAY_TLS_CA_CERT=" D "ca.crt", "RAY_TLS_SERVER_CERT=" D "leaf.crt", NULL};
    const char *nothing[] = {"RAY_USE_TLS=1", "RAY_TLS_CA_CERT=" D "ca.crt", NULL};
    const char *missing[] = {"RAY_USE_TLS=1", "RAY_TLS_CA_CERT=" D "nope.crt", NULL};
    const char *not_pem[] = {"RAY_USE_TLS=1", "RAY_TLS_CA_CERT=Makefile", NULL};
    const char *wrong_key[] = {"RAY_USE_TLS=1", "RAY_TLS_CA_CERT=" D "ca.crt", "RAYBOOT_TLS_CA_KEY=" D "other-ca.key",
                               NULL};
    const char *hours[] = {"RAY_USE_TLS=1", "RAY_TLS_CA_CERT=" D "ca.crt", "RAYBOOT_TLS_CA_KEY=" D "ca.key",
                           "RAYBOOT_TLS_CERT_HOURS=0", NULL};
    (void)state;
    expect_error(no_ca, "RAY_TLS_CA_CERT is not set");
    expect_error(no_key, "RAY_TLS_SERVER_KEY is not set");
    expect_error(nothing, "RAY_TLS_SERVER_CERT is not set");
    expect_error(missing, "RAY_TLS_CA_CERT: " D "nope.crt");
    expect_error(not_pem, "RAY_TLS_CA_CERT=Makefile: not a PEM file");
    expect_error(wrong_key, "the CA key is not the key of the CA certificate");
    expect_error(hours, "RAYBOOT_TLS_CERT_HOURS=0: not a number of hours from 1 to 8760");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_on_as_ray_reads_it),
        cmocka_unit_test(test_files_as_given),
        cmocka_unit_test(test_made_in_memory_from_the_ca_key),
        cmocka_unit_test(test_what_is_missing_is_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
