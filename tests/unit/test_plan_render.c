/* Unit tests for init/plan_render.c: whatever bytes a plan carries (the command line, a cgroup file
 * quoted in a warning), its JSON is well-formed UTF-8 that says the same thing where it can. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "plan_render.h"

/* Renders a plan whose command is `arg` and returns that argument as the JSON parser reads it. */
static char *command_arg_after_render(const char *arg)
{
    struct plan p;
    char *json, *out;
    cJSON *root;
    memset(&p, 0, sizeof(p));
    p.index = -1;
    p.workers_expected = -1;
    assert_int_equal(strv_push(&p.ray_start, "ray"), 0);
    assert_int_equal(strv_push(&p.ray_start, "start"), 0);
    assert_int_equal(strv_push(&p.command, arg), 0);
    json = plan_render_json(&p);
    assert_non_null(json);
    root = cJSON_Parse(json);
    assert_non_null(root);
    out = strdup(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "command"), 0)->valuestring);
    cJSON_Delete(root);
    free(json);
    plan_free(&p);
    return out;
}

static void check(const char *in, const char *want)
{
    char *got = command_arg_after_render(in);
    assert_string_equal(got, want);
    free(got);
}

static void test_valid_utf8_is_kept(void **state)
{
    (void)state;
    check("plain", "plain");
    check("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80");
    check("\"quoted\" \\ \n", "\"quoted\" \\ \n");
}

static void test_invalid_bytes_become_replacement_characters(void **state)
{
    (void)state;
    check("a\xff"
          "b",
          "a\xef\xbf\xbd"
          "b");
    check("\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd");                                 /* overlong '/' */
    check("\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");                 /* a surrogate */
    check("\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"); /* past U+10FFFF */
    check("cut \xe2\x82", "cut \xef\xbf\xbd\xef\xbf\xbd");                         /* truncated at the end */
}

/* The evidence for workers_expected: where it came from and every task, counted or not, in JSON
 * and in the text summary. */
static void test_evidence(void **state)
{
    struct plan p;
    struct plan_task tasks[2] = {{"head", 1, PLAN_TASK_HEAD, false}, {"loader", 3, PLAN_TASK_OTHER, false}};
    cJSON *root, *ev, *t;
    char *json, *summary;
    (void)state;
    memset(&p, 0, sizeof(p));
    p.index = -1;
    p.workers_expected = 0;
    p.workers_from = "--worker";
    json = plan_render_json(&p);
    root = cJSON_Parse(json);
    ev = cJSON_GetObjectItem(root, "evidence");
    assert_string_equal(cJSON_GetObjectItem(ev, "workers_from")->valuestring, "--worker");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(ev, "tasks")), 0);
    cJSON_Delete(root);
    free(json);

    p.tasks = tasks;
    p.ntasks = 2;
    json = plan_render_json(&p);
    root = cJSON_Parse(json);
    t = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "evidence"), "tasks"), 1);
    assert_string_equal(cJSON_GetObjectItem(t, "task")->valuestring, "loader");
    assert_int_equal(cJSON_GetObjectItem(t, "hosts")->valueint, 3);
    assert_string_equal(cJSON_GetObjectItem(t, "as")->valuestring, "other");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(t, "counted")));
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(t, "shared_hostname")));
    summary = plan_render_text(&p);
    assert_non_null(strstr(summary, "workers expected: 0 (the tasks --worker names)\n"));
    assert_non_null(strstr(summary, "loader: 3 hosts, not named by --worker, not counted\n"));
    cJSON_Delete(root);
    free(json);
    free(summary);
    p.workers_from = NULL;
    json = plan_render_json(&p);
    root = cJSON_Parse(json);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "evidence"), "workers_from")));
    cJSON_Delete(root);
    free(json);
    p.tasks = NULL; /* on the stack: not plan_free's */
    p.ntasks = 0;
    plan_free(&p);
}

/* LeaderWorkerSet's and JobSet's evidence: what decided, in JSON and in the text summary. */
static void test_platform_evidence(void **state)
{
    struct plan p;
    cJSON *root, *ev;
    char *json, *summary;
    (void)state;
    memset(&p, 0, sizeof(p));
    p.index = 1;
    p.workers_expected = 3;
    p.workers_from = "LWS_GROUP_SIZE";
    p.source = PLAN_SOURCE_LWS;
    p.role = PLAN_ROLE_WORKER;
    snprintf(p.role_from, sizeof(p.role_from), "LWS_WORKER_INDEX=1");
    snprintf(p.head_from, sizeof(p.head_from), "LWS_LEADER_ADDRESS=l-0.l.ns");
    p.lws = (struct lws_pod){true, "l", "l-0", 0, 4, 1, "l-0.l", "ns"};
    json = plan_render_json(&p);
    root = cJSON_Parse(json);
    assert_string_equal(cJSON_GetObjectItem(root, "source")->valuestring, "lws");
    ev = cJSON_GetObjectItem(root, "evidence");
    assert_string_equal(cJSON_GetObjectItem(ev, "role_from")->valuestring, "LWS_WORKER_INDEX=1");
    assert_string_equal(cJSON_GetObjectItem(ev, "head_from")->valuestring, "LWS_LEADER_ADDRESS=l-0.l.ns");
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(ev, "lws"), "group_size")->valueint, 4);
    assert_null(cJSON_GetObjectItem(ev, "jobset"));
    cJSON_Delete(root);
    free(json);
    summary = plan_render_text(&p);
    assert_non_null(strstr(summary, "role:             worker (from lws: LWS_WORKER_INDEX=1)\n"));
    assert_non_null(strstr(summary, "head from:        LWS_LEADER_ADDRESS=l-0.l.ns\n"));
    assert_non_null(strstr(summary, "workers expected: 3 (LWS_GROUP_SIZE=4, less the leader)\n"));
    free(summary);

    memset(&p.lws, 0, sizeof(p.lws));
    p.source = PLAN_SOURCE_JOBSET;
    p.workers_from = "jobset";
    p.workers_expected = 8;
    p.jobset = (struct jobset_pod){.found = true,
                                   .name = "rc",
                                   .replicated_job = "workers",
                                   .replicated_job_replicas = 2,
                                   .global_replicas = 3,
                                   .restart_attempt = -1,
                                   .head_job = "head",
                                   .worker_jobs = 2,
                                   .pods_per_job = 4,
                                   .pods_per_job_from = "RAYBOOT_WORKER_PARALLELISM"};
    json = plan_render_json(&p);
    root = cJSON_Parse(json);
    ev = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "evidence"), "jobset");
    assert_int_equal(cJSON_GetObjectItem(ev, "pods_per_job")->valueint, 4);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(ev, "restart_attempt")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(ev, "subdomain")));
    cJSON_Delete(root);
    free(json);
    summary = plan_render_text(&p);
    assert_non_null(strstr(summary, "workers expected: 8 ((global-replicas 3 - the head's 1 Job) x 4 pods per Job "
                                    "(RAYBOOT_WORKER_PARALLELISM))\n"));
    free(summary);
    plan_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_utf8_is_kept),
        cmocka_unit_test(test_invalid_bytes_become_replacement_characters),
        cmocka_unit_test(test_evidence),
        cmocka_unit_test(test_platform_evidence),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
