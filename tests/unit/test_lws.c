/* Unit tests for lib/plan/lws.c: LeaderWorkerSet's LWS_LEADER_ADDRESS, LWS_GROUP_SIZE and
 * LWS_WORKER_INDEX as its pod webhook sets them (tests/fixtures/README.md), and everything else. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "lws.h"

/* Parses envp for a pod named hostname; returns lws_parse's result, warnings and message. */
static int parse(const char *const *envp, const char *hostname, struct lws_pod *out, struct strv *warnings,
                 struct errbuf *err)
{
    strv_init(warnings);
    err->msg[0] = '\0';
    return lws_parse(envp, hostname, out, warnings, err);
}

static void test_leader(void **state)
{
    const char *envp[] = {"LWS_LEADER_ADDRESS=vllm-0.vllm.default", "LWS_GROUP_SIZE=4", "LWS_WORKER_INDEX=0", "HOME=/",
                          NULL};
    struct lws_pod l;
    struct strv w;
    struct errbuf err;
    (void)state;
    assert_int_equal(parse(envp, "vllm-0", &l, &w, &err), 1);
    assert_true(l.found);
    assert_string_equal(l.name, "vllm");
    assert_string_equal(l.group, "vllm-0");
    assert_int_equal(l.group_index, 0);
    assert_int_equal(l.size, 4);
    assert_int_equal(l.worker_index, 0);
    assert_string_equal(l.leader_host, "vllm-0.vllm");
    assert_string_equal(l.namespace_, "default");
    assert_int_equal(w.len, 0);
    strv_free(&w);
}

/* A worker of group 12 of a LeaderWorkerSet whose name has dashes and digits; the group index is
 * what follows the last dash, as LeaderWorkerSet reads it. */
static void test_worker_of_a_dashed_name(void **state)
{
    const char *envp[] = {"LWS_WORKER_INDEX=3", "LWS_GROUP_SIZE=4", "LWS_LEADER_ADDRESS=ray-2-lws-12.ray-2-lws.ml",
                          NULL};
    struct lws_pod l;
    struct strv w;
    struct errbuf err;
    (void)state;
    assert_int_equal(parse(envp, "ray-2-lws-12-3", &l, &w, &err), 1);
    assert_string_equal(l.name, "ray-2-lws");
    assert_int_equal(l.group_index, 12);
    assert_int_equal(l.worker_index, 3);
    assert_string_equal(l.leader_host, "ray-2-lws-12.ray-2-lws");
    assert_int_equal(w.len, 0);
    strv_free(&w);
}

/* UniquePerReplica: the subdomain is the group's own Service. */
static void test_unique_per_replica(void **state)
{
    const char *envp[] = {"LWS_LEADER_ADDRESS=l-1.l-1.ns", "LWS_GROUP_SIZE=2", "LWS_WORKER_INDEX=1", NULL};
    struct lws_pod l;
    struct strv w;
    struct errbuf err;
    (void)state;
    assert_int_equal(parse(envp, "l-1-1", &l, &w, &err), 1);
    assert_string_equal(l.leader_host, "l-1.l-1");
    strv_free(&w);
}

static void test_absent(void **state)
{
    const char *envp[] = {"HOSTNAME=x", "JOB_COMPLETION_INDEX=0", NULL};
    struct lws_pod l;
    struct strv w;
    struct errbuf err;
    (void)state;
    assert_false(lws_present(envp));
    assert_int_equal(parse(envp, "x", &l, &w, &err), 0);
    assert_false(l.found);
    strv_free(&w);
}

/* One variable without the others is not LeaderWorkerSet's doing: an error naming the missing one. */
static void test_partial(void **state)
{
    const char *only_index[] = {"LWS_WORKER_INDEX=1", NULL};
    const char *no_size[] = {"LWS_WORKER_INDEX=1", "LWS_LEADER_ADDRESS=a-0.a.b", NULL};
    struct lws_pod l;
    struct strv w;
    struct errbuf err;
    (void)state;
    assert_true(lws_present(only_index));
    assert_int_equal(parse(only_index, "a-0-1", &l, &w, &err), -1);
    assert_non_null(strstr(err.msg, "LWS_LEADER_ADDRESS is not set, but LWS_WORKER_INDEX is"));
    strv_free(&w);
    assert_int_equal(parse(no_size, "a-0-1", &l, &w, &err), -1);
    assert_non_null(strstr(err.msg, "LWS_GROUP_SIZE is not set"));
    strv_free(&w);
}

static void expect_error(const char *address, const char *size, const char *index, const char *needle)
{
    char a[300], s[64], i[64];
    const char *envp[] = {a, s, i, NULL};
    struct lws_pod l;
    struct strv w;
    struct errbuf err;
    snprintf(a, sizeof(a), "LWS_LEADER_ADDRESS=%s", address);
    snprintf(s, sizeof(s), "LWS_GROUP_SIZE=%s", size);
    snprintf(i, sizeof(i), "LWS_WORKER_INDEX=%s", index);
    assert_int_equal(parse(envp, "", &l, &w, &err), -1);
    if (!strstr(err.msg, needle))
        fail_msg("%s %s %s: '%s' lacks '%s'", address, size, index, err.msg, needle);
    strv_free(&w);
}

static void test_bad_values(void **state)
{
    (void)state;
    expect_error("vllm-0.vllm", "2", "0", "LWS_LEADER_ADDRESS=vllm-0.vllm: not a LeaderWorkerSet leader address");
    expect_error("vllm-0.vllm.default.svc", "2", "0", "LWS_LEADER_ADDRESS");
    expect_error("vllm-0.vllm.default.", "2", "0", "LWS_LEADER_ADDRESS");
    expect_error("vllm-0..default", "2", "0", "LWS_LEADER_ADDRESS");   /* no subdomain */
    expect_error("vllm.vllm.default", "2", "0", "LWS_LEADER_ADDRESS"); /* no group index */
    expect_error("-0.vllm.default", "2", "0", "LWS_LEADER_ADDRESS");
    expect_error("vllm--0.vllm.default", "2", "0", "LWS_LEADER_ADDRESS"); /* a name ending in - */
    expect_error("vllm-x.vllm.default", "2", "0", "LWS_LEADER_ADDRESS");
    expect_error("VLLM-0.vllm.default", "2", "0", "LWS_LEADER_ADDRESS");
    expect_error("", "2", "0", "LWS_LEADER_ADDRESS");
    expect_error("vllm-0.vllm.default", "0", "0", "LWS_GROUP_SIZE=0: not a group size");
    expect_error("vllm-0.vllm.default", " 2", "0", "LWS_GROUP_SIZE");
    expect_error("vllm-0.vllm.default", "+2", "0", "LWS_GROUP_SIZE");
    expect_error("vllm-0.vllm.default", "2000000", "0", "LWS_GROUP_SIZE");
    expect_error("vllm-0.vllm.default", "", "0", "LWS_GROUP_SIZE");
    expect_error("vllm-0.vllm.default", "2", "-1", "LWS_WORKER_INDEX=-1: not an index");
    expect_error("vllm-0.vllm.default", "2", "2", "LWS_WORKER_INDEX=2 is not below LWS_GROUP_SIZE=2");
}

/* The hostname LeaderWorkerSet gives is checked, not required: another one is a warning. */
static void test_hostname_mismatch_warns(void **state)
{
    const char *envp[] = {"LWS_LEADER_ADDRESS=vllm-0.vllm.default", "LWS_GROUP_SIZE=2", "LWS_WORKER_INDEX=1", NULL};
    struct lws_pod l;
    struct strv w;
    struct errbuf err;
    (void)state;
    assert_int_equal(parse(envp, "node-7", &l, &w, &err), 1);
    assert_int_equal(w.len, 1);
    assert_non_null(strstr(w.items[0], "HOSTNAME=node-7, but LeaderWorkerSet names this pod vllm-0-1"));
    strv_free(&w);
    assert_int_equal(parse(envp, "", &l, &w, &err), 1);
    assert_int_equal(w.len, 0);
    strv_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_leader),
        cmocka_unit_test(test_worker_of_a_dashed_name),
        cmocka_unit_test(test_unique_per_replica),
        cmocka_unit_test(test_absent),
        cmocka_unit_test(test_partial),
        cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_hostname_mismatch_warns),
    };
    return cmocka_run_group_tests_name("lws", tests, NULL, NULL);
}
