/* JobSet pods: which replicated job and Job this pod belongs to (its labels), which pod of the Job
 * it is (JOB_COMPLETION_INDEX), and from that the head's name and the workers to expect. Only what
 * the pod itself can know: a JobSet pod learns nothing about the other replicated jobs but the
 * total count of Jobs (global-replicas), and no Job's parallelism, so the pods of each worker Job
 * come from RAYBOOT_WORKER_PARALLELISM (default 1, the Job's own default). */
#include "jobset.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "count.h"
#include "env.h"
#include "fsroot.h"
#include "podlabels.h"
#include "text.h"

/* A label's value into out: 1 when found and valid, 0 when absent (-1 when it is required), -1
 * with a message. */
static int label_text(const char *labels, const char *name, bool required, char out[DNS_LABEL_MAX_BYTES + 1],
                      struct errbuf *err)
{
    char key[64];
    int rc;
    snprintf(key, sizeof(key), JOBSET_LABEL_PREFIX "%s", name);
    rc = podlabels_get(labels, key, out, DNS_LABEL_MAX_BYTES + 1);
    if (rc == 0 && required)
        return errbuf_set(err,
                          "%s has no label %s: every JobSet pod carries it (mount the downward API's "
                          "metadata.labels, not annotations or a subset)",
                          PODLABELS_FILE, key);
    if (rc == 0)
        return 0;
    if (rc < 0 || !dnsname_label_valid(out, strlen(out)))
        return errbuf_set(err, "%s: label %s=%.80s is not a name (lower-case letters, digits and '-', at most 63)",
                          PODLABELS_FILE, key, out);
    return 1;
}

/* A label that must be there and hold a count. */
static int label_count(const char *labels, const char *name, long *out, struct errbuf *err)
{
    char key[64], value[DNS_LABEL_MAX_BYTES + 1];
    int rc;
    snprintf(key, sizeof(key), JOBSET_LABEL_PREFIX "%s", name);
    rc = podlabels_get(labels, key, value, sizeof(value));
    if (rc == 0)
        return errbuf_set(err,
                          "%s has no label %s: every JobSet pod carries it (mount the downward API's "
                          "metadata.labels, not annotations or a subset)",
                          PODLABELS_FILE, key);
    if (rc < 0 || count_parse(value, strlen(value), out) < 0)
        return errbuf_set(err, "%s: label %s=%.40s is not a number", PODLABELS_FILE, key, value);
    return 0;
}

static int read_labels(const struct jobset_input *in, struct jobset_pod *out, struct errbuf *err)
{
    const char *labels = in->labels;
    char value[DNS_LABEL_MAX_BYTES + 1];
    int rc;

    if (label_text(labels, "replicatedjob-name", true, out->replicated_job, err) < 0 ||
        label_count(labels, "job-index", &out->job_index, err) < 0 ||
        label_count(labels, "replicatedjob-replicas", &out->replicated_job_replicas, err) < 0 ||
        label_count(labels, "global-replicas", &out->global_replicas, err) < 0)
        return -1;
    out->restart_attempt = -1;
    rc = podlabels_get(labels, JOBSET_LABEL_PREFIX "restart-attempt", value, sizeof(value));
    if (rc != 0 && (rc < 0 || count_parse(value, strlen(value), &out->restart_attempt) < 0))
        return errbuf_set(err, "%s: label " JOBSET_LABEL_PREFIX "restart-attempt=%.40s is not a number", PODLABELS_FILE,
                          value);
    if (out->job_index >= out->replicated_job_replicas || out->replicated_job_replicas > out->global_replicas)
        return errbuf_set(err,
                          "%s: labels job-index=%ld, replicatedjob-replicas=%ld and global-replicas=%ld do not "
                          "fit together (a Job's index is below its replicated job's replicas, which are part "
                          "of the JobSet's)",
                          PODLABELS_FILE, out->job_index, out->replicated_job_replicas, out->global_replicas);
    return 0;
}

/* JOB_COMPLETION_INDEX (the pod in its Job) and RAYBOOT_WORKER_PARALLELISM (pods per worker Job). */
static int read_env(const struct jobset_input *in, struct jobset_pod *out, struct errbuf *err)
{
    const char *index = env_lookup(in->envp, "JOB_COMPLETION_INDEX");
    const char *pods = env_lookup_nonempty(in->envp, "RAYBOOT_WORKER_PARALLELISM");
    if (!index)
        return errbuf_set(err,
                          "JOB_COMPLETION_INDEX is not set in a JobSet pod (%s names JobSet %s): give "
                          "replicated job %s completionMode: Indexed (JobSet's default)",
                          PODLABELS_FILE, out->name, out->replicated_job);
    if (count_parse(index, strlen(index), &out->pod_index) < 0)
        return errbuf_set(err, "JOB_COMPLETION_INDEX=%.40s: not an index (expected a number)", index);
    out->pods_per_job = 1;
    out->pods_per_job_from = "default";
    if (pods) {
        if (count_parse(pods, strlen(pods), &out->pods_per_job) < 0 || out->pods_per_job < 1)
            return errbuf_set(err,
                              "RAYBOOT_WORKER_PARALLELISM=%.40s: not a pod count (expected the worker Jobs' "
                              "parallelism, a number from 1 to %ld)",
                              pods, COUNT_MAX);
        out->pods_per_job_from = "RAYBOOT_WORKER_PARALLELISM";
    }
    return 0;
}

/* The status of a strv_pushf of a warning, as this file's functions return it. */
static int pushed(int rc, struct errbuf *err)
{
    return rc < 0 ? errbuf_set(err, "out of memory") : 0;
}

/* Head or worker, and the head's DNS name <name>-<head job>-0-0.<subdomain>. */
static int decide_role(const struct jobset_input *in, struct jobset_pod *out, struct strv *warnings, struct errbuf *err)
{
    bool in_head_job = strcmp(out->replicated_job, out->head_job) == 0;
    int n;

    out->head = in_head_job && out->job_index == 0 && out->pod_index == 0;
    if (in_head_job && !out->head) {
        if (!in->role_given)
            return errbuf_set(err,
                              "this pod is pod %ld of Job %ld of replicated job %s, the head (--head=%s), but a "
                              "Ray cluster has one head: give it replicas: 1, parallelism: 1, completions: 1",
                              out->pod_index, out->job_index, out->head_job, out->head_job);
        if (pushed(strv_pushf(warnings,
                              "this pod is pod %ld of Job %ld of the head replicated job %s; "
                              "using RAYBOOT_ROLE",
                              out->pod_index, out->job_index, out->head_job),
                   err) < 0)
            return -1;
    }
    if (out->head && out->replicated_job_replicas != 1 && !in->role_given)
        return errbuf_set(err,
                          "replicated job %s, the head (--head=%s), has replicas: %ld (label " JOBSET_LABEL_PREFIX
                          "replicatedjob-replicas), but a Ray cluster has one head: give it "
                          "replicas: 1",
                          out->head_job, out->head_job, out->replicated_job_replicas);
    out->worker_jobs = out->global_replicas - 1;
    if (!out->subdomain[0]) {
        if (out->head || in->address_given)
            return 0;
        return errbuf_set(err,
                          "/etc/hosts has no fully qualified name for HOSTNAME=%s, so the head's name is "
                          "unknown: keep the JobSet's spec.network.enableDNSHostnames true (the default), or set "
                          "RAYBOOT_HEAD_ADDRESS=host:port",
                          in->hostname);
    }
    n = snprintf(out->head_host, sizeof(out->head_host), "%s-%s-0-0.%s", out->name, out->head_job, out->subdomain);
    if (n < 0 || (size_t)n >= sizeof(out->head_host) || (size_t)strcspn(out->head_host, ".") > DNS_LABEL_MAX_BYTES)
        return errbuf_set(err,
                          "the head's name %s-%s-0-0 is longer than a DNS label (63): shorten JobSet %s or "
                          "--head=%s",
                          out->name, out->head_job, out->name, out->head_job);
    return 0;
}

/* What the pod can see that disagrees with the labels but changes nothing: its hostname, the
 * coordinator label, a worker index past the pods per Job the head counts. */
static int cross_check(const struct jobset_input *in, struct jobset_pod *out, struct strv *warnings, struct errbuf *err)
{
    char expected[4 * DNS_LABEL_MAX_BYTES], coordinator[DNS_NAME_MAX_BYTES + 1];
    snprintf(expected, sizeof(expected), "%s-%s-%ld-%ld", out->name, out->replicated_job, out->job_index,
             out->pod_index);
    if (in->hostname[0] && strcmp(in->hostname, expected) != 0 &&
        pushed(strv_pushf(warnings,
                          "HOSTNAME=%s, but JobSet names this pod %s (%s, JOB_COMPLETION_INDEX=%ld): "
                          "if the head's template sets a hostname, set RAYBOOT_HEAD_ADDRESS",
                          in->hostname, expected, PODLABELS_FILE, out->pod_index),
               err) < 0)
        return -1;
    if (podlabels_get(in->labels, JOBSET_LABEL_PREFIX "coordinator", coordinator, sizeof(coordinator)) == 1 &&
        out->head_host[0] && strcmp(coordinator, out->head_host) != 0 &&
        pushed(strv_pushf(warnings,
                          "label " JOBSET_LABEL_PREFIX "coordinator=%s, but the Ray head is %s "
                          "(replicated job --head=%s, Job 0, pod 0)",
                          coordinator, out->head_host, out->head_job),
               err) < 0)
        return -1;
    if (strcmp(out->replicated_job, out->head_job) != 0 && out->pod_index >= out->pods_per_job &&
        pushed(strv_pushf(warnings,
                          "JOB_COMPLETION_INDEX=%ld: this Job has more pods than the %ld a "
                          "worker Job is counted with (RAYBOOT_WORKER_PARALLELISM, %s); give the "
                          "head RAYBOOT_WORKER_PARALLELISM=<the worker Jobs' parallelism>",
                          out->pod_index, out->pods_per_job, out->pods_per_job_from),
               err) < 0)
        return -1;
    return 0;
}

int jobset_parse(const struct jobset_input *in, struct jobset_pod *out, struct strv *warnings, struct errbuf *err)
{
    int rc;
    memset(out, 0, sizeof(*out));
    rc = label_text(in->labels, "jobset-name", false, out->name, err);
    if (rc <= 0)
        return rc;
    snprintf(out->head_job, sizeof(out->head_job), "%s", in->head_job);
    if (in->fqdn[0]) {
        size_t host_len = strcspn(in->fqdn, "."), sub_len;
        const char *sub = in->fqdn + host_len + (in->fqdn[host_len] == '.');
        sub_len = strcspn(sub, ".");
        if (sub_len > 0 && dnsname_label_valid(sub, sub_len))
            text_copy(out->subdomain, sizeof(out->subdomain), sub, sub_len);
    }
    if (read_labels(in, out, err) < 0 || read_env(in, out, err) < 0 || decide_role(in, out, warnings, err) < 0 ||
        cross_check(in, out, warnings, err) < 0)
        return -1;
    out->found = true;
    return 1;
}

int jobset_load(const char *root, const struct jobset_input *in, struct jobset_pod *out, struct strv *warnings,
                struct errbuf *err)
{
    struct jobset_input with = *in;
    char *text;
    int rc;
    memset(out, 0, sizeof(*out));
    if (fsroot_read(root, PODLABELS_FILE, PODLABELS_FILE_MAX_BYTES, &text, NULL, err) < 0)
        return errno == ENOENT ? 0 : -1;
    if (podlabels_check(text, PODLABELS_FILE, err) < 0) {
        free(text);
        return -1;
    }
    with.labels = text;
    rc = jobset_parse(&with, out, warnings, err);
    free(text);
    return rc;
}

bool jobset_present(const char *root)
{
    struct errbuf err;
    char *text, name[DNS_LABEL_MAX_BYTES + 1];
    bool found;
    if (fsroot_read(root, PODLABELS_FILE, PODLABELS_FILE_MAX_BYTES, &text, NULL, &err) < 0)
        return false;
    found = podlabels_check(text, PODLABELS_FILE, &err) == 0 &&
            podlabels_get(text, JOBSET_LABEL_PREFIX "jobset-name", name, sizeof(name)) == 1;
    free(text);
    return found;
}

/* "-<digits>" at the end of text[0..len): the length of that suffix, or 0. */
static size_t index_suffix(const char *text, size_t len)
{
    size_t d = 0;
    while (d < len && text[len - 1 - d] >= '0' && text[len - 1 - d] <= '9')
        d++;
    return (d > 0 && d < len && text[len - 1 - d] == '-') ? d + 1 : 0;
}

bool jobset_hostname_pattern(const char *hostname, const char *subdomain)
{
    size_t sub_len = strlen(subdomain), len = strlen(hostname), s;
    if (sub_len == 0 || len <= sub_len + 1 || strncmp(hostname, subdomain, sub_len) != 0 || hostname[sub_len] != '-')
        return false;
    hostname += sub_len + 1;
    len -= sub_len + 1;
    s = index_suffix(hostname, len); /* -<index> */
    if (s == 0)
        return false;
    len -= s;
    s = index_suffix(hostname, len); /* -<job> */
    return s > 0 && len > s;         /* and a replicated job name before them */
}
