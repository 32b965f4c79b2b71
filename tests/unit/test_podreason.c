/* Unit tests for sidecar/podreason.c on real-shaped Pod objects (tests/unit/data/pods/): the
 * disruption reasons Kubernetes sets, plain deletion, and inputs that are not Pods. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "podreason.h"

static char *slurp(const char *name, size_t *len)
{
    char path[256];
    FILE *f;
    char *buf;
    long n;
    snprintf(path, sizeof(path), "tests/unit/data/pods/%s", name);
    f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static void describe_file(const char *name, char *out, size_t cap)
{
    struct pod_reason r;
    struct errbuf err;
    size_t len;
    char *json = slurp(name, &len);
    assert_int_equal(podreason_parse(json, len, &r, &err), 0);
    podreason_describe(&r, out, cap);
    free(json);
}

static void test_disruption_reasons(void **state)
{
    char line[512];
    (void)state;
    describe_file("evicted.json", line, sizeof(line));
    assert_string_equal(line, "EvictionByEvictionAPI: Eviction API: evicting");
    describe_file("preempted.json", line, sizeof(line));
    assert_string_equal(line, "PreemptionByScheduler: volcano: preempting to accommodate a higher priority pod");
    describe_file("taint.json", line, sizeof(line));
    assert_string_equal(line, "DeletionByTaintManager: Taint manager: deleting due to NoExecute taint");
    describe_file("kubelet.json", line, sizeof(line));
    assert_non_null(strstr(line, "TerminationByKubelet: The node was low on resource: memory."));
    /* Kueue's pod integration (LeaderWorkerSet groups) marks each pod before deleting it. */
    describe_file("kueue-terminated.json", line, sizeof(line));
    assert_non_null(strstr(line, "WorkloadEvictedDueToPreempted: Preempted to accommodate a workload (UID: "));
}

static void test_deleted_without_condition(void **state)
{
    char line[512];
    (void)state;
    describe_file("deleted.json", line, sizeof(line));
    assert_string_equal(line, "deleted at 2026-11-22T10:03:11Z (no disruption condition)");
    describe_file("running.json", line, sizeof(line));
    assert_string_equal(line, "reason unknown");
    /* A DisruptionTarget that is not True is no reason. */
    describe_file("disruption-false.json", line, sizeof(line));
    assert_string_equal(line, "reason unknown");
}

static void test_not_a_pod(void **state)
{
    static const char *bad[] = {
        "",
        "null",
        "[]",
        "{}",
        "{\"kind\":\"Status\",\"code\":403}",
        "{\"kind\":\"Pod\"",
        "{\"kind\":7}",
        "{\"kind\":\"Pod\",\"status\":{\"conditions\":\"nope\"}}x",
    };
    struct pod_reason r;
    struct errbuf err;
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(podreason_parse(bad[i], strlen(bad[i]), &r, &err), -1);
}

/* Odd shapes parse without harm: conditions not an array, fields of the wrong type. */
static void test_odd_shapes(void **state)
{
    static const char *odd[] = {
        "{\"kind\":\"Pod\",\"status\":{\"conditions\":\"nope\"}}",
        "{\"kind\":\"Pod\",\"status\":{\"conditions\":[1,null,{\"type\":5}]}}",
        "{\"kind\":\"Pod\",\"status\":{\"conditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\","
        "\"reason\":7}]},\"metadata\":{\"deletionTimestamp\":[]}}",
    };
    struct pod_reason r;
    struct errbuf err;
    char line[512];
    (void)state;
    for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
        assert_int_equal(podreason_parse(odd[i], strlen(odd[i]), &r, &err), 0);
        podreason_describe(&r, line, sizeof(line));
        assert_string_equal(line, "reason unknown");
    }
}

/* Control characters in the message never reach a log line; long text is cut, not overrun. */
static void test_text_is_cleaned_and_bounded(void **state)
{
    char json[4096], line[1024];
    struct pod_reason r;
    struct errbuf err;
    int n = snprintf(json, sizeof(json),
                     "{\"kind\":\"Pod\",\"status\":{\"conditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\","
                     "\"reason\":\"Evil\\nReason\",\"message\":\"");
    (void)state;
    for (int i = 0; i < 1000; i++)
        json[n++] = 'm';
    snprintf(json + n, sizeof(json) - (size_t)n, "\\u001b[31m\"}]}}");
    assert_int_equal(podreason_parse(json, strlen(json), &r, &err), 0);
    assert_string_equal(r.reason, "Evil Reason");
    assert_int_equal(strlen(r.message), PODREASON_TEXT_MAX_BYTES - 1);
    podreason_describe(&r, line, sizeof(line));
    assert_null(strchr(line, '\n'));
}

static bool going_file(const char *name)
{
    struct pod_reason r;
    struct errbuf err;
    size_t len;
    char *json = slurp(name, &len);
    assert_int_equal(podreason_parse(json, len, &r, &err), 0);
    free(json);
    return podreason_going(&r);
}

/* Going: deleted (with or without a disruption condition), or ended by the kubelet without a
 * deletion (kubelet.json: TerminationByKubelet, no deletionTimestamp). Not going: a running pod, or
 * a DisruptionTarget whose status is False. */
static void test_going(void **state)
{
    (void)state;
    assert_true(going_file("evicted.json"));
    assert_true(going_file("deleted.json"));
    assert_true(going_file("kubelet.json"));
    assert_true(going_file("preempted.json"));
    assert_false(going_file("running.json"));
    assert_false(going_file("disruption-false.json"));
}

static void test_too_large(void **state)
{
    struct pod_reason r;
    struct errbuf err;
    (void)state;
    assert_int_equal(podreason_parse("{}", PODREASON_POD_MAX_BYTES + 1, &r, &err), -1);
    assert_non_null(strstr(err.msg, "bytes"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_disruption_reasons),
        cmocka_unit_test(test_deleted_without_condition),
        cmocka_unit_test(test_not_a_pod),
        cmocka_unit_test(test_odd_shapes),
        cmocka_unit_test(test_text_is_cleaned_and_bounded),
        cmocka_unit_test(test_going),
        cmocka_unit_test(test_too_large),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
