/* Unit tests for lib/plan/jobset.c: a JobSet pod's labels (as the downward API's labels file holds
 * them), JOB_COMPLETION_INDEX and /etc/hosts name, following tests/fixtures/README.md. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "jobset.h"

/* The labels JobSet v0.12 puts on pod `rc-<rjob>-<job>-<index>` of JobSet rc whose replicated
 * jobs are head x1 and workers x2 (3 Jobs in all); extra is appended. */
static void labels_for(char *out, size_t cap, const char *rjob, long job, long replicas, const char *extra)
{
    snprintf(out, cap,
             "batch.kubernetes.io/job-completion-index=\"0\"\n"
             "jobset.sigs.k8s.io/global-replicas=\"3\"\n"
             "jobset.sigs.k8s.io/job-index=\"%ld\"\n"
             "jobset.sigs.k8s.io/jobset-name=\"rc\"\n"
             "jobset.sigs.k8s.io/replicatedjob-name=\"%s\"\n"
             "jobset.sigs.k8s.io/replicatedjob-replicas=\"%ld\"\n"
             "jobset.sigs.k8s.io/restart-attempt=\"0\"%s",
             job, rjob, replicas, extra);
}

struct result {
    struct jobset_pod pod;
    struct strv warnings;
    struct errbuf err;
    int rc;
};

static void run(struct result *r, const char *labels, const char *const *envp, const char *hostname, const char *fqdn,
                bool role_given, bool address_given)
{
    struct jobset_input in = {labels, envp, hostname, fqdn, "head", role_given, address_given};
    strv_init(&r->warnings);
    r->err.msg[0] = '\0';
    r->rc = jobset_parse(&in, &r->pod, &r->warnings, &r->err);
}

static void test_head(void **state)
{
    const char *envp[] = {"JOB_COMPLETION_INDEX=0", NULL};
    char labels[1024];
    struct result r;
    (void)state;
    labels_for(labels, sizeof(labels), "head", 0, 1, "");
    run(&r, labels, envp, "rc-head-0-0", "rc-head-0-0.rc.default.svc.cluster.local", false, false);
    assert_int_equal(r.rc, 1);
    assert_true(r.pod.head);
    assert_string_equal(r.pod.name, "rc");
    assert_string_equal(r.pod.replicated_job, "head");
    assert_string_equal(r.pod.subdomain, "rc");
    assert_string_equal(r.pod.head_host, "rc-head-0-0.rc");
    assert_int_equal(r.pod.global_replicas, 3);
    assert_int_equal(r.pod.worker_jobs, 2);
    assert_int_equal(r.pod.pods_per_job, 1);
    assert_string_equal(r.pod.pods_per_job_from, "default");
    assert_int_equal(r.pod.restart_attempt, 0);
    assert_int_equal(r.warnings.len, 0);
    strv_free(&r.warnings);
}

/* A worker of the second worker group, pod 2 of its Job, with the subdomain set in the JobSet. */
static void test_worker(void **state)
{
    const char *envp[] = {"JOB_COMPLETION_INDEX=2", "RAYBOOT_WORKER_PARALLELISM=4", NULL};
    char labels[1024];
    struct result r;
    (void)state;
    labels_for(labels, sizeof(labels), "gpu-workers", 1, 2, "");
    run(&r, labels, envp, "rc-gpu-workers-1-2", "rc-gpu-workers-1-2.net.ml.svc.cluster.local", false, false);
    assert_int_equal(r.rc, 1);
    assert_false(r.pod.head);
    assert_int_equal(r.pod.job_index, 1);
    assert_int_equal(r.pod.pod_index, 2);
    assert_string_equal(r.pod.head_host, "rc-head-0-0.net");
    assert_int_equal(r.pod.pods_per_job, 4);
    assert_string_equal(r.pod.pods_per_job_from, "RAYBOOT_WORKER_PARALLELISM");
    assert_int_equal(r.warnings.len, 0);
    strv_free(&r.warnings);
}

/* Labels of something else (no jobset-name) are not a JobSet. */
static void test_not_a_jobset(void **state)
{
    const char *envp[] = {"JOB_COMPLETION_INDEX=0", NULL};
    struct result r;
    (void)state;
    run(&r, "app=\"x\"\njob-name=\"x\"", envp, "x-0", "", false, false);
    assert_int_equal(r.rc, 0);
    assert_false(r.pod.found);
    strv_free(&r.warnings);
}

static void expect_error(const char *labels, const char *const *envp, const char *fqdn, const char *needle)
{
    struct result r;
    run(&r, labels, envp, "rc-head-0-0", fqdn, false, false);
    assert_int_equal(r.rc, -1);
    if (!strstr(r.err.msg, needle))
        fail_msg("'%s' lacks '%s'", r.err.msg, needle);
    strv_free(&r.warnings);
}

static void test_errors(void **state)
{
    const char *index0[] = {"JOB_COMPLETION_INDEX=0", NULL};
    const char *index1[] = {"JOB_COMPLETION_INDEX=1", NULL};
    const char *none[] = {NULL};
    const char *bad_parallelism[] = {"JOB_COMPLETION_INDEX=0", "RAYBOOT_WORKER_PARALLELISM=0", NULL};
    const char *fqdn = "rc-head-0-0.rc.default.svc.cluster.local";
    char labels[1024];
    (void)state;
    labels_for(labels, sizeof(labels), "head", 0, 2, "");
    expect_error(labels, index0, fqdn, "replicated job head, the head (--head=head), has replicas: 2");
    labels_for(labels, sizeof(labels), "head", 0, 1, "");
    expect_error(labels, index1, fqdn, "this pod is pod 1 of Job 0 of replicated job head");
    expect_error(labels, none, fqdn, "JOB_COMPLETION_INDEX is not set in a JobSet pod");
    expect_error(labels, bad_parallelism, fqdn, "RAYBOOT_WORKER_PARALLELISM=0: not a pod count");
    expect_error("jobset.sigs.k8s.io/jobset-name=\"rc\"", index0, fqdn,
                 "has no label jobset.sigs.k8s.io/replicatedjob-name");
    expect_error("jobset.sigs.k8s.io/jobset-name=\"RC\"", index0, fqdn,
                 "label jobset.sigs.k8s.io/jobset-name=RC is not a name");
    labels_for(labels, sizeof(labels), "workers", 2, 2, "");
    expect_error(labels, index0, fqdn, "do not fit together");
    labels_for(labels, sizeof(labels), "workers", 0, 2, "");
    expect_error(labels, index0, "", "/etc/hosts has no fully qualified name");
    expect_error("jobset.sigs.k8s.io/jobset-name=\"rc\"\njobset.sigs.k8s.io/replicatedjob-name=\"w\"\n"
                 "jobset.sigs.k8s.io/job-index=\"x\"",
                 index0, fqdn, "label jobset.sigs.k8s.io/job-index=x is not a number");
}

/* What RAYBOOT_ROLE or RAYBOOT_HEAD_ADDRESS take over is no longer an error. */
static void test_explicit_settings_relax(void **state)
{
    const char *index1[] = {"JOB_COMPLETION_INDEX=1", NULL};
    char labels[1024];
    struct result r;
    (void)state;
    labels_for(labels, sizeof(labels), "head", 0, 1, "");
    run(&r, labels, index1, "rc-head-0-1", "rc-head-0-1.rc.default.svc.cluster.local", true, false);
    assert_int_equal(r.rc, 1);
    assert_false(r.pod.head);
    assert_int_equal(r.warnings.len, 1);
    assert_non_null(strstr(r.warnings.items[0], "using RAYBOOT_ROLE"));
    strv_free(&r.warnings);
    labels_for(labels, sizeof(labels), "workers", 0, 2, "");
    run(&r, labels, index1, "rc-workers-0-1", "", false, true);
    assert_int_equal(r.rc, 1);
    assert_string_equal(r.pod.head_host, "");
    strv_free(&r.warnings);
}

/* Disagreements that change nothing: hostname, coordinator, a Job larger than counted. */
static void test_warnings(void **state)
{
    const char *index3[] = {"JOB_COMPLETION_INDEX=3", NULL};
    char labels[1024];
    struct result r;
    (void)state;
    labels_for(labels, sizeof(labels), "workers", 0, 2, "\njobset.sigs.k8s.io/coordinator=\"rc-leader-0-0.rc\"");
    run(&r, labels, index3, "myhost", "myhost.rc.default.svc.cluster.local", false, false);
    assert_int_equal(r.rc, 1);
    assert_int_equal(r.warnings.len, 3);
    assert_non_null(strstr(r.warnings.items[0], "HOSTNAME=myhost, but JobSet names this pod rc-workers-0-3"));
    assert_non_null(strstr(r.warnings.items[1], "coordinator=rc-leader-0-0.rc, but the Ray head is rc-head-0-0.rc"));
    assert_non_null(strstr(r.warnings.items[2], "JOB_COMPLETION_INDEX=3: this Job has more pods than the 1"));
    strv_free(&r.warnings);
}

static void test_hostname_pattern(void **state)
{
    (void)state;
    assert_true(jobset_hostname_pattern("rc-workers-0-1", "rc"));
    assert_true(jobset_hostname_pattern("rc-gpu-workers-10-0", "rc"));
    assert_false(jobset_hostname_pattern("rc-1", "rc"));   /* an Indexed Job rc, index 1 */
    assert_false(jobset_hostname_pattern("rc-0-1", "rc")); /* no replicated job name */
    assert_false(jobset_hostname_pattern("raycluster-2", "raycluster"));
    assert_false(jobset_hostname_pattern("other-a-0-1", "rc"));
    assert_false(jobset_hostname_pattern("rc-a-0-1", ""));
}

/* The file under RAYBOOT_ROOT: missing is no JobSet, malformed is an error naming it. */
static void test_load(void **state)
{
    char root[] = "/tmp/rayboot-test-jobset-XXXXXX", path[256];
    const char *envp[] = {"JOB_COMPLETION_INDEX=0", NULL};
    struct jobset_input in = {NULL, envp, "rc-head-0-0", "", "head", false, false};
    struct jobset_pod pod;
    struct strv w;
    struct errbuf err;
    FILE *f;
    (void)state;
    strv_init(&w);
    assert_non_null(mkdtemp(root));
    assert_int_equal(jobset_load(root, &in, &pod, &w, &err), 0);
    assert_false(jobset_present(root));
    snprintf(path, sizeof(path), "%s/etc", root);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof(path), "%s/etc/podinfo", root);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof(path), "%s/etc/podinfo/labels", root);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("not labels", f);
    fclose(f);
    assert_int_equal(jobset_load(root, &in, &pod, &w, &err), -1);
    assert_non_null(strstr(err.msg, "/etc/podinfo/labels line 1"));
    assert_false(jobset_present(root));
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("jobset.sigs.k8s.io/jobset-name=\"rc\"\njobset.sigs.k8s.io/replicatedjob-name=\"head\"\n"
          "jobset.sigs.k8s.io/job-index=\"0\"\njobset.sigs.k8s.io/replicatedjob-replicas=\"1\"\n"
          "jobset.sigs.k8s.io/global-replicas=\"1\"",
          f);
    fclose(f);
    assert_true(jobset_present(root));
    assert_int_equal(jobset_load(root, &in, &pod, &w, &err), 1);
    assert_true(pod.head);
    assert_int_equal(pod.worker_jobs, 0);
    unlink(path);
    snprintf(path, sizeof(path), "%s/etc/podinfo", root);
    rmdir(path);
    snprintf(path, sizeof(path), "%s/etc", root);
    rmdir(path);
    rmdir(root);
    strv_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_head),
        cmocka_unit_test(test_worker),
        cmocka_unit_test(test_not_a_jobset),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_explicit_settings_relax),
        cmocka_unit_test(test_warnings),
        cmocka_unit_test(test_hostname_pattern),
        cmocka_unit_test(test_load),
    };
    return cmocka_run_group_tests_name("jobset", tests, NULL, NULL);
}
