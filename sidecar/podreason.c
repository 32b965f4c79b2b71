/* Reading the disruption reason out of a Pod object. Fetching it is kubeapi.c's job. */
#include "podreason.h"

#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

/* Copies a JSON string into out (cut to cap), keeping only printable ASCII: the text ends up in
 * logs and the termination log, and comes from whoever could write the Pod's status. */
static void copy_clean(char *out, size_t cap, const cJSON *item)
{
    size_t n = 0;
    const char *s = cJSON_IsString(item) ? item->valuestring : NULL;
    if (cap == 0)
        return;
    for (; s && *s && n + 1 < cap; s++)
        out[n++] = (*s >= 0x20 && *s < 0x7f) ? *s : ' ';
    out[n] = '\0';
}

static const cJSON *disruption_condition(const cJSON *pod)
{
    const cJSON *conditions = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(pod, "status"),
                                                                "conditions");
    const cJSON *c;
    cJSON_ArrayForEach(c, conditions) {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(c, "type");
        const cJSON *status = cJSON_GetObjectItemCaseSensitive(c, "status");
        if (cJSON_IsString(type) && strcmp(type->valuestring, "DisruptionTarget") == 0 && cJSON_IsString(status) &&
            strcmp(status->valuestring, "True") == 0)
            return c;
    }
    return NULL;
}

int podreason_parse(const char *json, size_t len, struct pod_reason *out, struct errbuf *err)
{
    cJSON *pod;
    const cJSON *kind, *cond;
    const char *end = NULL;
    memset(out, 0, sizeof(*out));
    if (len > PODREASON_POD_MAX_BYTES)
        return errbuf_set(err, "the Pod object is %zu bytes (more than %d)", len, PODREASON_POD_MAX_BYTES);
    pod = cJSON_ParseWithLengthOpts(json, len, &end, 0);
    /* Only whitespace may follow the object: anything else is a broken or mixed-up answer. */
    while (pod && end < json + len && (*end == ' ' || *end == '\n' || *end == '\r' || *end == '\t'))
        end++;
    if (pod && end != json + len) {
        cJSON_Delete(pod);
        pod = NULL;
    }
    if (!pod)
        return errbuf_set(err, "the API server's answer is not JSON");
    kind = cJSON_GetObjectItemCaseSensitive(pod, "kind");
    if (!cJSON_IsObject(pod) || !cJSON_IsString(kind) || strcmp(kind->valuestring, "Pod") != 0) {
        cJSON_Delete(pod);
        return errbuf_set(err, "the API server's answer is not a Pod");
    }
    cond = disruption_condition(pod);
    if (cond) {
        copy_clean(out->reason, sizeof(out->reason), cJSON_GetObjectItemCaseSensitive(cond, "reason"));
        copy_clean(out->message, sizeof(out->message), cJSON_GetObjectItemCaseSensitive(cond, "message"));
    }
    copy_clean(out->deleted_at, sizeof(out->deleted_at),
               cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(pod, "metadata"),
                                                "deletionTimestamp"));
    cJSON_Delete(pod);
    return 0;
}

void podreason_describe(const struct pod_reason *r, char *out, size_t cap)
{
    if (r->reason[0] && r->message[0])
        snprintf(out, cap, "%s: %s", r->reason, r->message);
    else if (r->reason[0])
        snprintf(out, cap, "%s", r->reason);
    else if (r->deleted_at[0])
        snprintf(out, cap, "deleted at %s (no disruption condition)", r->deleted_at);
    else
        snprintf(out, cap, "reason unknown");
}
