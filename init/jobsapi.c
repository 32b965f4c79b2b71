/* Building and reading the Jobs API's JSON. Field names were read from the pinned Ray
 * (ray/dashboard/modules/job/common.py: JobSubmitRequest, JobDetails; pydantic_models.py). */
#include "jobsapi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

static const char *const status_names[] = {"PENDING", "RUNNING", "STOPPED", "SUCCEEDED", "FAILED"};

const char *jobsapi_status_name(enum jobsapi_status s)
{
    return (unsigned)s < sizeof(status_names) / sizeof(status_names[0]) ? status_names[s] : "UNKNOWN";
}

bool jobsapi_status_terminal(enum jobsapi_status s)
{
    return s == JOB_STOPPED || s == JOB_SUCCEEDED || s == JOB_FAILED;
}

int jobsapi_check_object(const char *text, size_t len, struct errbuf *err)
{
    cJSON *v = json_parse_exact(text, len);
    bool ok = cJSON_IsObject(v);
    cJSON_Delete(v);
    return ok ? 0 : errbuf_set(err, "not a JSON object");
}

static int add_metadata(cJSON *root, const char *const *metadata)
{
    cJSON *md;
    if (!metadata || !metadata[0])
        return 0;
    md = cJSON_AddObjectToObject(root, "metadata");
    if (!md)
        return -1;
    for (const char *const *kv = metadata; *kv; kv++) {
        const char *eq = strchr(*kv, '=');
        char key[128];
        if (!eq || (size_t)(eq - *kv) >= sizeof(key))
            continue;
        memcpy(key, *kv, (size_t)(eq - *kv));
        key[eq - *kv] = '\0';
        if (json_add_text(md, key, eq + 1) < 0)
            return -1;
    }
    return 0;
}

char *jobsapi_submit_body(const struct jobsapi_submit *s, struct errbuf *err)
{
    cJSON *root = cJSON_CreateObject(), *env = NULL;
    char *text = NULL;
    if (s->runtime_env_json) {
        env = json_parse_exact(s->runtime_env_json, strlen(s->runtime_env_json));
        if (!cJSON_IsObject(env)) {
            cJSON_Delete(env);
            cJSON_Delete(root);
            errbuf_set(err, "the runtime_env is not a JSON object");
            return NULL;
        }
    }
    if (root && json_add_text(root, "entrypoint", s->entrypoint) == 0 &&
        (!s->submission_id || json_add_text(root, "submission_id", s->submission_id) == 0) &&
        (!env || cJSON_AddItemToObject(root, "runtime_env", env)) && add_metadata(root, s->metadata) == 0) {
        env = NULL; /* owned by root now */
        text = cJSON_PrintUnformatted(root);
    }
    cJSON_Delete(env);
    cJSON_Delete(root);
    if (!text)
        errbuf_set(err, "out of memory");
    return text;
}

static cJSON *parse_object(const char *body, size_t len, size_t max, const char *what, struct errbuf *err)
{
    cJSON *v;
    if (len > max) {
        errbuf_set(err, "%s: the reply is %zu bytes (more than %zu)", what, len, max);
        return NULL;
    }
    v = json_parse_exact(body, len);
    if (!cJSON_IsObject(v)) {
        cJSON_Delete(v);
        errbuf_set(err, "%s: the reply is not a JSON object", what);
        return NULL;
    }
    return v;
}

int jobsapi_parse_submitted(const char *body, size_t len, char id[JOBSAPI_ID_MAX_BYTES], struct errbuf *err)
{
    cJSON *v = parse_object(body, len, JOBSAPI_REPLY_MAX_BYTES, "submit", err);
    const cJSON *sid;
    int rc = -1;
    if (!v)
        return -1;
    sid = cJSON_GetObjectItemCaseSensitive(v, "submission_id");
    if (!cJSON_IsString(sid) || !sid->valuestring[0] || strlen(sid->valuestring) >= JOBSAPI_ID_MAX_BYTES ||
        strcspn(sid->valuestring, "/?#% \t\r\n") != strlen(sid->valuestring))
        errbuf_set(err, "submit: the reply has no usable submission_id");
    else
        rc = snprintf(id, JOBSAPI_ID_MAX_BYTES, "%s", sid->valuestring) < 0 ? -1 : 0;
    cJSON_Delete(v);
    return rc;
}

int jobsapi_parse_job(const char *body, size_t len, struct jobsapi_job *out, struct errbuf *err)
{
    cJSON *v = parse_object(body, len, JOBSAPI_REPLY_MAX_BYTES, "job details", err);
    const cJSON *status, *code;
    size_t i;
    memset(out, 0, sizeof(*out));
    out->driver_exit_code = -1;
    if (!v)
        return -1;
    status = cJSON_GetObjectItemCaseSensitive(v, "status");
    for (i = 0; i < sizeof(status_names) / sizeof(status_names[0]); i++) {
        if (cJSON_IsString(status) && strcmp(status->valuestring, status_names[i]) == 0)
            break;
    }
    if (i == sizeof(status_names) / sizeof(status_names[0])) {
        cJSON_Delete(v);
        return errbuf_set(err, "job details: no known status");
    }
    out->status = (enum jobsapi_status)i;
    json_copy_printable(out->message, sizeof(out->message), cJSON_GetObjectItemCaseSensitive(v, "message"));
    code = cJSON_GetObjectItemCaseSensitive(v, "driver_exit_code");
    if (cJSON_IsNumber(code) && code->valuedouble >= 0 && code->valuedouble <= 255)
        out->driver_exit_code = (long)code->valuedouble;
    cJSON_Delete(v);
    return 0;
}

int jobsapi_parse_logs(const char *body, size_t len, char **logs, size_t *logs_len, struct errbuf *err)
{
    cJSON *v = parse_object(body, len, JOBSAPI_LOGS_MAX_BYTES, "logs", err);
    const cJSON *text;
    *logs = NULL;
    *logs_len = 0;
    if (!v)
        return -1;
    text = cJSON_GetObjectItemCaseSensitive(v, "logs");
    if (!cJSON_IsString(text)) {
        cJSON_Delete(v);
        return errbuf_set(err, "logs: the reply has no logs string");
    }
    *logs_len = strlen(text->valuestring);
    *logs = malloc(*logs_len + 1);
    if (*logs)
        memcpy(*logs, text->valuestring, *logs_len + 1);
    cJSON_Delete(v);
    return *logs ? 0 : errbuf_set(err, "out of memory");
}
