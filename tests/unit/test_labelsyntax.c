/* Unit tests for lib/plan/labelsyntax.c: Ray 2.60's label key and value rules and its
 * `--labels` string parser. Every expectation here is what Ray's own label_utils.py answered
 * (validate_label_key, validate_label_value, parse_node_labels_string), including where its
 * prefix regex is looser than its comments ("sub..domain" is taken). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "labelsyntax.h"

static char *repeat(char *buf, char c, size_t n, const char *tail)
{
    memset(buf, c, n);
    strcpy(buf + n, tail);
    return buf;
}

static void test_keys(void **state)
{
    static const struct {
        const char *key;
        int ok;
    } cases[] = {{"a", 1},
                 {"A1", 1},
                 {"rayboot.io/platform", 1},
                 {"ray.io/node-id", 1},
                 {"a-._b", 1},
                 {"-abc", 0},
                 {"abc-", 0},
                 {"my@label", 0},
                 {"", 0},
                 {"/x", 1},
                 {"x/", 0},
                 {"sub..domain/x", 1},
                 {".abc/x", 1},
                 {"abc./x", 1},
                 {"a-.-b/x", 1},
                 {"a_b/x", 1},
                 {"-a/x", 0},
                 {"a-/x", 0},
                 {"a/b/c", 0},
                 {"a.-b/x", 1},
                 {"a..-b/x", 1},
                 {"k\xc3\xa9y", 0},
                 {"a b", 0},
                 {"a=b", 0}};
    char buf[400];
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *why = labelsyntax_check_key(cases[i].key);
        if ((why == NULL) != cases[i].ok)
            fail_msg("key '%s': %s", cases[i].key, why ? why : "taken, Ray refuses it");
    }
    /* Lengths: a name of 63 bytes, not 64; a prefix of 253 made of NAMEs, not one of 253. */
    assert_null(labelsyntax_check_key(repeat(buf, 'x', 63, "")));
    assert_non_null(labelsyntax_check_key(repeat(buf, 'x', 64, "")));
    assert_non_null(labelsyntax_check_key(repeat(buf, 'p', 253, "/x")));
    assert_non_null(labelsyntax_check_key(repeat(buf, 'a', 64, "/x")));
    for (int i = 0; i < 3; i++)
        repeat(buf + 64 * i, 'a', 63, ".");
    repeat(buf + 192, 'a', 61, "/x"); /* 253 bytes of prefix, four NAMEs */
    assert_int_equal(strlen(buf), 255);
    assert_null(labelsyntax_check_key(buf));
    repeat(buf + 192, 'a', 62, "/x"); /* 254 */
    assert_non_null(labelsyntax_check_key(buf));
}

static void test_values(void **state)
{
    static const struct {
        const char *value;
        int ok;
    } cases[] = {{"", 1},    {"a", 1},   {"a-b", 1}, {"-a", 0},    {"a-", 0},
                 {"a b", 0}, {"a=b", 0}, {"a,b", 0}, {"1.2.3", 1}, {"a/b", 0}};
    char buf[80];
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *why = labelsyntax_check_value(cases[i].value);
        if ((why == NULL) != cases[i].ok)
            fail_msg("value '%s': %s", cases[i].value, why ? why : "taken, Ray refuses it");
    }
    assert_null(labelsyntax_check_value(repeat(buf, 'x', 63, "")));
    assert_non_null(labelsyntax_check_value(repeat(buf, 'x', 64, "")));
}

/* parse_node_labels_string's answers, item by item ("" ends a list; NULL: Ray refuses it). */
static void test_parse(void **state)
{
    static const struct {
        const char *text;
        const char *want[4];
        int ok;
    } cases[] = {{"\"a=b\"", {"a=b", ""}, 1},
                 {"a=b,c=d", {"a=b", "c=d", ""}, 1},
                 {" a = b , c=d", {"a=b", "c=d", ""}, 1},
                 {"a=b,a=c", {"a=c", ""}, 1},
                 {"a=b,c=d,a=e", {"a=e", "c=d", ""}, 1},
                 {"a=", {"a=", ""}, 1},
                 {"\"\"", {""}, 1},
                 {"", {""}, 1},
                 {"a=b,", {""}, 0},
                 {"a=b=c", {""}, 0},
                 {"a", {""}, 0},
                 {"\"", {""}, 0},
                 {"-a=b", {""}, 0},
                 {"a=-b", {""}, 0}};
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct strv out;
        struct errbuf err;
        int rc;
        strv_init(&out);
        rc = labelsyntax_parse("RAYBOOT_RAY_LABELS", cases[i].text, &out, &err);
        if ((rc == 0) != cases[i].ok)
            fail_msg("'%s': %s", cases[i].text, rc ? err.msg : "taken, Ray refuses it");
        if (rc < 0)
            assert_non_null(strstr(err.msg, "RAYBOOT_RAY_LABELS: "));
        for (size_t j = 0; rc == 0 && j <= out.len; j++) {
            const char *got = j < out.len ? out.items[j] : "";
            if (strcmp(got, cases[i].want[j]) != 0)
                fail_msg("'%s': item %zu is '%s', wanted '%s'", cases[i].text, j, got, cases[i].want[j]);
        }
        strv_free(&out);
    }
}

/* The message names the variable and the bad key, so the pod's log says what to fix. */
static void test_parse_message(void **state)
{
    struct strv out;
    struct errbuf err;
    (void)state;
    strv_init(&out);
    assert_int_equal(labelsyntax_parse("RAYBOOT_RAY_LABELS", "zone=a,bad@key=1", &out, &err), -1);
    assert_non_null(strstr(err.msg, "RAYBOOT_RAY_LABELS"));
    assert_non_null(strstr(err.msg, "'bad@key'"));
    strv_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_keys), cmocka_unit_test(test_values),
                                       cmocka_unit_test(test_parse), cmocka_unit_test(test_parse_message)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
