/* Unit tests for init/jobsapi.c on replies shaped like the pinned Ray's (recorded ones live in
 * tests/unit/data/jobsapi/): the submit body, job details, logs, and what is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "jobsapi.h"

static char *slurp(const char *name, size_t *len)
{
    char path[256];
    FILE *f;
    char *buf;
    long n;
    snprintf(path, sizeof(path), "tests/unit/data/jobsapi/%s", name);
    f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static void test_submit_body(void **state)
{
    const char *md[] = {"rayboot.pod=p-0", "rayboot.job=j", NULL};
    struct jobsapi_submit s = {"python -c 'print(1)'", "rayboot-ns-j", "{\"env_vars\": {\"A\": \"1\"}}", md};
    struct errbuf err;
    char *body = jobsapi_submit_body(&s, &err);
    cJSON *v;
    (void)state;
    assert_non_null(body);
    v = cJSON_Parse(body);
    assert_string_equal(cJSON_GetObjectItem(v, "entrypoint")->valuestring, "python -c 'print(1)'");
    assert_string_equal(cJSON_GetObjectItem(v, "submission_id")->valuestring, "rayboot-ns-j");
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(v, "runtime_env"), "env_vars"), "A")->valuestring,
        "1");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(v, "metadata"), "rayboot.pod")->valuestring, "p-0");
    cJSON_Delete(v);
    free(body);
    /* Without the optional parts, they are absent (not null). */
    s.submission_id = NULL;
    s.runtime_env_json = NULL;
    s.metadata = NULL;
    body = jobsapi_submit_body(&s, &err);
    assert_string_equal(body, "{\"entrypoint\":\"python -c 'print(1)'\"}");
    free(body);
    s.runtime_env_json = "[1]";
    assert_null(jobsapi_submit_body(&s, &err));
}

/* JSON output follows the one rule (lib/base/json.c): bytes that are not UTF-8 (a pod name cannot
 * hold them, but a metadata value might) become U+FFFD; the body stays valid JSON text. */
static void test_submit_body_is_utf8(void **state)
{
    const char *md[] = {"rayboot.note=caf\xe9", NULL};
    struct jobsapi_submit s = {"python job.py", NULL, NULL, md};
    struct errbuf err;
    char *body = jobsapi_submit_body(&s, &err);
    (void)state;
    assert_non_null(body);
    assert_string_equal(body, "{\"entrypoint\":\"python job.py\",\"metadata\":{\"rayboot.note\":\"caf\xef\xbf\xbd\"}}");
    free(body);
}

static void test_recorded_replies(void **state)
{
    struct jobsapi_job job;
    struct errbuf err;
    char id[JOBSAPI_ID_MAX_BYTES], *body, *logs;
    size_t len, logs_len;
    (void)state;
    body = slurp("submit.json", &len);
    assert_int_equal(jobsapi_parse_submitted(body, len, id, &err), 0);
    assert_true(strlen(id) > 0);
    free(body);
    body = slurp("job-succeeded.json", &len);
    assert_int_equal(jobsapi_parse_job(body, len, &job, &err), 0);
    assert_int_equal(job.status, JOB_SUCCEEDED);
    free(body);
    body = slurp("job-failed.json", &len);
    assert_int_equal(jobsapi_parse_job(body, len, &job, &err), 0);
    assert_int_equal(job.status, JOB_FAILED);
    assert_true(job.message[0] != '\0');
    free(body);
    body = slurp("logs.json", &len);
    assert_int_equal(jobsapi_parse_logs(body, len, &logs, &logs_len, &err), 0);
    assert_non_null(strstr(logs, "[0, 1, 4, 9, 16, 25, 36, 49, 64, 81]"));
    free(logs);
    free(body);
}

static void test_refused_replies(void **state)
{
    static const char *bad_job[] = {
        "", "[]", "{}", "{\"status\":\"DONE\"}", "{\"status\":1}", "{\"status\":\"RUNNING\"}x"};
    static const char *bad_submit[] = {"{}", "{\"submission_id\":\"\"}", "{\"submission_id\":\"a/b\"}",
                                       "{\"submission_id\":7}", "null"};
    struct jobsapi_job job;
    struct errbuf err;
    char id[JOBSAPI_ID_MAX_BYTES], *logs;
    size_t n;
    (void)state;
    for (size_t i = 0; i < sizeof(bad_job) / sizeof(bad_job[0]); i++)
        assert_int_equal(jobsapi_parse_job(bad_job[i], strlen(bad_job[i]), &job, &err), -1);
    for (size_t i = 0; i < sizeof(bad_submit) / sizeof(bad_submit[0]); i++)
        assert_int_equal(jobsapi_parse_submitted(bad_submit[i], strlen(bad_submit[i]), id, &err), -1);
    assert_int_equal(jobsapi_parse_logs("{\"logs\":null}", 13, &logs, &n, &err), -1);
    assert_int_equal(jobsapi_parse_job("{}", JOBSAPI_REPLY_MAX_BYTES + 1, &job, &err), -1);
    assert_non_null(strstr(err.msg, "bytes"));
}

static void test_message_is_printable_and_exit_code_bounded(void **state)
{
    const char *body = "{\"status\":\"FAILED\",\"message\":\"a\\nb\\u001b\",\"driver_exit_code\":300}";
    struct jobsapi_job job;
    struct errbuf err;
    (void)state;
    assert_int_equal(jobsapi_parse_job(body, strlen(body), &job, &err), 0);
    assert_string_equal(job.message, "a b ");
    assert_int_equal(job.driver_exit_code, -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_submit_body),
        cmocka_unit_test(test_submit_body_is_utf8),
        cmocka_unit_test(test_recorded_replies),
        cmocka_unit_test(test_refused_replies),
        cmocka_unit_test(test_message_is_printable_and_exit_code_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
