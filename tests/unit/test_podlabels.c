/* Unit tests for lib/plan/podlabels.c: the downward API's metadata.labels file as the kubelet writes it
 * (sorted key="value" lines, values quoted by Go's strconv.Quote, no newline after the last). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "podlabels.h"

static const char kubelet[] = "batch.kubernetes.io/controller-uid=\"5d6e\"\n"
                              "batch.kubernetes.io/job-completion-index=\"0\"\n"
                              "job-name=\"rc-head-0\"\n"
                              "jobset.sigs.k8s.io/jobset-name=\"rc\"\n"
                              "jobset.sigs.k8s.io/jobset-name-x=\"other\"\n"
                              "jobset.sigs.k8s.io/replicatedjob-name=\"head\"";

static void test_values(void **state)
{
    struct errbuf err;
    char v[64];
    (void)state;
    assert_int_equal(podlabels_check(kubelet, "labels", &err), 0);
    assert_int_equal(podlabels_get(kubelet, "jobset.sigs.k8s.io/jobset-name", v, sizeof(v)), 1);
    assert_string_equal(v, "rc");
    assert_int_equal(podlabels_get(kubelet, "jobset.sigs.k8s.io/replicatedjob-name", v, sizeof(v)), 1);
    assert_string_equal(v, "head");
    assert_int_equal(podlabels_get(kubelet, "job-name", v, sizeof(v)), 1);
    assert_string_equal(v, "rc-head-0");
    /* Exact keys: neither a prefix nor an extension matches. */
    assert_int_equal(podlabels_get(kubelet, "jobset.sigs.k8s.io/jobset", v, sizeof(v)), 0);
    assert_int_equal(podlabels_get(kubelet, "sigs.k8s.io/jobset-name", v, sizeof(v)), 0);
    assert_int_equal(podlabels_get(kubelet, "absent", v, sizeof(v)), 0);
    /* A value that does not fit is not cut silently. */
    assert_int_equal(podlabels_get(kubelet, "job-name", v, 4), -1);
}

/* An empty file (a pod without labels), a newline after the last line, escapes a quoted string needs. */
static void test_layouts(void **state)
{
    struct errbuf err;
    char v[64];
    (void)state;
    assert_int_equal(podlabels_check("", "labels", &err), 0);
    assert_int_equal(podlabels_get("", "a", v, sizeof(v)), 0);
    assert_int_equal(podlabels_check("a=\"1\"\n\nb=\"2\"\n", "labels", &err), 0);
    assert_int_equal(podlabels_get("a=\"1\"\n\nb=\"2\"\n", "b", v, sizeof(v)), 1);
    assert_string_equal(v, "2");
    assert_int_equal(podlabels_check("a=\"x\\\"y\\\\z\\n\"", "labels", &err), 0);
    assert_int_equal(podlabels_get("a=\"x\\\"y\\\\z\\n\"", "a", v, sizeof(v)), 1);
    assert_string_equal(v, "x\"y\\z\n");
    assert_int_equal(podlabels_get("a=\"\"", "a", v, sizeof(v)), 1);
    assert_string_equal(v, "");
}

static void expect_bad(const char *text, const char *needle)
{
    struct errbuf err;
    assert_int_equal(podlabels_check(text, "/etc/podinfo/labels", &err), -1);
    if (!strstr(err.msg, needle))
        fail_msg("'%s': '%s' lacks '%s'", text, err.msg, needle);
}

static void test_not_labels(void **state)
{
    (void)state;
    expect_bad("a=1", "/etc/podinfo/labels line 1: 'a=1' is not a label");
    expect_bad("a=\"1\"\nb=2", "line 2");
    expect_bad("a=\"1", "line 1");
    expect_bad("a=\"1\" ", "line 1");
    expect_bad("a=\"1\"x", "line 1");
    expect_bad("=\"1\"", "line 1");
    expect_bad("a b=\"1\"", "line 1");
    expect_bad("a=\"\\x41\"", "line 1"); /* not an escape a label value has */
    expect_bad("a=\"\x01\"", "line 1");  /* a control byte */
    expect_bad("a=\"1\"\"", "line 1");
    expect_bad("{\"a\": \"1\"}", "line 1"); /* someone else's file */
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_values), cmocka_unit_test(test_layouts),
                                       cmocka_unit_test(test_not_labels)};
    return cmocka_run_group_tests_name("podlabels", tests, NULL, NULL);
}
