/* A JobSet pod (tests/fixtures/README.md): the JobSet's labels, which reach the container only
 * through a downwardAPI volume of metadata.labels (PODLABELS_FILE), the Job controller's
 * JOB_COMPLETION_INDEX and hostname, and the subdomain in the kubelet's /etc/hosts. */
#ifndef RAYBOOT_JOBSET_H
#define RAYBOOT_JOBSET_H

#include <stdbool.h>

#include "dnsname.h"
#include "errbuf.h"
#include "strv.h"

/* The labels a JobSet pod must carry (jobset.sigs.k8s.io/<name>). */
#define JOBSET_LABEL_PREFIX "jobset.sigs.k8s.io/"

struct jobset_input {
    const char *labels;      /* the labels file's text, checked by podlabels_check */
    const char *const *envp; /* JOB_COMPLETION_INDEX, RAYBOOT_WORKER_PARALLELISM */
    const char *hostname;    /* the pod's */
    const char *fqdn;        /* from /etc/hosts, "" when there is none */
    const char *head_job;    /* the replicated job that is the head (--head, default head) */
    bool role_given;         /* RAYBOOT_ROLE is set: what it overrides is a warning */
    bool address_given;      /* RAYBOOT_HEAD_ADDRESS is set: no subdomain needed */
};

struct jobset_pod {
    bool found;
    char name[DNS_LABEL_MAX_BYTES + 1];           /* jobset-name */
    char replicated_job[DNS_LABEL_MAX_BYTES + 1]; /* replicatedjob-name */
    long job_index;                               /* job-index: the Job in its replicated job */
    long pod_index;                               /* JOB_COMPLETION_INDEX: the pod in its Job */
    long replicated_job_replicas;                 /* replicatedjob-replicas: Jobs of this pod's kind */
    long global_replicas;                         /* global-replicas: Jobs of every kind */
    long restart_attempt;                         /* restart-attempt, -1 when absent */
    char subdomain[DNS_LABEL_MAX_BYTES + 1];      /* from /etc/hosts; "" when the pod has no FQDN */
    char head_job[DNS_LABEL_MAX_BYTES + 1];       /* the head's replicated job */
    bool head;                                    /* pod 0 of Job 0 of head_job */
    char head_host[DNS_NAME_MAX_BYTES + 1];       /* "<name>-<head_job>-0-0.<subdomain>", or "" */
    long worker_jobs;                             /* global_replicas minus the head's one Job */
    long pods_per_job;                            /* RAYBOOT_WORKER_PARALLELISM, default 1 */
    const char *pods_per_job_from;                /* "RAYBOOT_WORKER_PARALLELISM" or "default" */
};

/* From the labels (and the rest of in): returns 1 (out->found) when they name a JobSet, 0 when
 * they do not (no jobset-name label), or -1 with a message naming the label, variable or file at
 * fault. Disagreements that change nothing (a hostname, the coordinator label) are warnings. */
int jobset_parse(const struct jobset_input *in, struct jobset_pod *out, struct strv *warnings, struct errbuf *err);

/* Reads PODLABELS_FILE under root, then jobset_parse (in->labels is ignored). A missing file is
 * 0 (no JobSet labels here); an unreadable or malformed one is -1 naming it. */
int jobset_load(const char *root, const struct jobset_input *in, struct jobset_pod *out, struct strv *warnings,
                struct errbuf *err);

/* Whether PODLABELS_FILE under root is readable and carries a jobset-name label. */
bool jobset_present(const char *root);

/* Whether hostname reads as a JobSet pod's, <name>-<replicated job>-<job>-<index> with <name>
 * the subdomain (its default): what a JobSet pod whose labels are not mounted looks like. */
bool jobset_hostname_pattern(const char *hostname, const char *subdomain);

#endif
