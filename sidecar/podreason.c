/* Reading the disruption reason out of a Pod object. Fetching it is kubeapi.c's job. */
#include "podreason.h"

#include <stdio.h>
#include <string.h>

#include "json.h"

/* The condition of type TYPE with status True, or NULL. */
static const cJSON *true_condition(const cJSON *pod, const char *type_name)
{
    const cJSON *conditions =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(pod, "status"), "conditions");
    const cJSON *c;
    cJSON_ArrayForEach(c, conditions)
    {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(c, "type");
        const cJSON *status = cJSON_GetObjectItemCaseSensitive(c, "status");
        if (cJSON_IsString(type) && strcmp(type->valuestring, type_name) == 0 && cJSON_IsString(status) &&
            strcmp(status->valuestring, "True") == 0)
            return c;
    }
    return NULL;
}

/* Kubernetes' DisruptionTarget, else Kueue's TerminationTarget: its pod integration (plain pods,
 * and LeaderWorkerSet groups through it) sets one on each pod just before it deletes it, with
 * the eviction's reason (WorkloadEvictedDueToPreempted) and message (v0.17.0's
 * pkg/controller/jobs/pod/pod_controller.go). A Job's or a JobSet's pods get neither: the Job
 * controller deletes them plainly once Kueue suspends the Job. */
static const cJSON *disruption_condition(const cJSON *pod)
{
    const cJSON *c = true_condition(pod, "DisruptionTarget");
    return c ? c : true_condition(pod, "TerminationTarget");
}

int podreason_parse(const char *json, size_t len, struct pod_reason *out, struct errbuf *err)
{
    cJSON *pod;
    const cJSON *kind, *cond;
    memset(out, 0, sizeof(*out));
    if (len > PODREASON_POD_MAX_BYTES)
        return errbuf_set(err, "the Pod object is %zu bytes (more than %d)", len, PODREASON_POD_MAX_BYTES);
    pod = json_parse_exact(json, len);
    if (!pod)
        return errbuf_set(err, "the API server's answer is not JSON");
    kind = cJSON_GetObjectItemCaseSensitive(pod, "kind");
    if (!cJSON_IsObject(pod) || !cJSON_IsString(kind) || strcmp(kind->valuestring, "Pod") != 0) {
        cJSON_Delete(pod);
        return errbuf_set(err, "the API server's answer is not a Pod");
    }
    cond = disruption_condition(pod);
    if (cond) {
        out->disrupted = true;
        json_copy_printable(out->reason, sizeof(out->reason), cJSON_GetObjectItemCaseSensitive(cond, "reason"));
        json_copy_printable(out->message, sizeof(out->message), cJSON_GetObjectItemCaseSensitive(cond, "message"));
    }
    json_copy_printable(
        out->deleted_at, sizeof(out->deleted_at),
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(pod, "metadata"), "deletionTimestamp"));
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

bool podreason_going(const struct pod_reason *r)
{
    return r->deleted_at[0] != '\0' || r->disrupted;
}
