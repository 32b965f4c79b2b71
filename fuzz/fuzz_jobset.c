/* libFuzzer target: lib/plan/podlabels.c's reading of the downward API's labels file and lib/plan/jobset.c's
 * JobSet pod from it. Input: four lines (hostname, FQDN, the head's replicated job, and flags: 'r'
 * for RAYBOOT_ROLE given, 'a' for RAYBOOT_HEAD_ADDRESS given), then KEY=VALUE lines, a line "--",
 * and the labels file. A file podlabels_check accepts must give every lookup a terminated
 * value; a JobSet pod jobset_parse accepts must hold together (indexes below their counts, the
 * head pod 0 of Job 0 of the head's replicated job, a head name that is a DNS name). */
#include <string.h>

#include "count.h"
#include "fuzz.h"
#include "jobset.h"
#include "podlabels.h"

#define FUZZ_ENV_MAX 16

static void check_pod(const struct jobset_pod *j, const char *head_job)
{
    size_t host_len = strlen(j->head_host);
    if (!j->found || !dnsname_label_valid(j->name, strlen(j->name)) ||
        !dnsname_label_valid(j->replicated_job, strlen(j->replicated_job)))
        __builtin_trap();
    if (j->job_index < 0 || j->job_index >= j->replicated_job_replicas ||
        j->replicated_job_replicas > j->global_replicas || j->global_replicas > COUNT_MAX || j->pod_index < 0 ||
        j->pod_index > COUNT_MAX || j->pods_per_job < 1 || j->pods_per_job > COUNT_MAX ||
        j->worker_jobs != j->global_replicas - 1 || !j->pods_per_job_from)
        __builtin_trap();
    if (j->head && (strcmp(j->replicated_job, head_job) != 0 || j->job_index != 0 || j->pod_index != 0))
        __builtin_trap();
    if (host_len && (!dnsname_valid(j->head_host, host_len) || strcspn(j->head_host, ".") > DNS_LABEL_MAX_BYTES))
        __builtin_trap();
}

/* Every label the file has answers with a terminated value or "too long", never more. */
static void check_lookups(const char *labels)
{
    static const char *const keys[] = {"jobset.sigs.k8s.io/jobset-name", "jobset.sigs.k8s.io/coordinator", "a", ""};
    char value[8];
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
        int rc = podlabels_get(labels, keys[k], value, sizeof(value));
        if (rc == 1 && !memchr(value, '\0', sizeof(value)))
            __builtin_trap();
        if (rc < -1 || rc > 1)
            __builtin_trap();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *copy = fuzz_strndup(data, size), *parts[4 + FUZZ_ENV_MAX], *sep = strstr(copy, "\n--\n"), *labels;
    const char *envp[FUZZ_ENV_MAX + 1];
    size_t n, ne = 0;
    struct jobset_pod pod;
    struct strv warnings;
    struct errbuf err;

    if (!sep) {
        free(copy);
        return 0;
    }
    *sep = '\0';
    labels = sep + 4;
    n = fuzz_split(copy, '\n', parts, 4 + FUZZ_ENV_MAX);
    if (n < 4 || !dnsname_label_valid(parts[2], strlen(parts[2]))) {
        free(copy);
        return 0;
    }
    for (size_t i = 4; i < n; i++)
        envp[ne++] = parts[i];
    envp[ne] = NULL;
    if (podlabels_check(labels, "labels", &err) < 0) {
        if (!fuzz_terminated(err.msg, sizeof(err.msg)))
            __builtin_trap();
    } else {
        struct jobset_input in = {
            labels, envp, parts[0], parts[1], parts[2], strchr(parts[3], 'r') != NULL, strchr(parts[3], 'a') != NULL};
        int rc;
        check_lookups(labels);
        strv_init(&warnings);
        rc = jobset_parse(&in, &pod, &warnings, &err);
        if (rc == 1)
            check_pod(&pod, parts[2]);
        if ((rc < 0 && !fuzz_terminated(err.msg, sizeof(err.msg))) || (rc == 0 && pod.found))
            __builtin_trap();
        strv_free(&warnings);
    }
    free(copy);
    return 0;
}
