"""k8s/lws/ray-cluster.yaml and k8s/jobset/ray-cluster.yaml as shipped, run in the pod simulator
as LeaderWorkerSet and JobSet set pods up (tests/fixtures/README.md): their env, labels,
hostnames, subdomains and not-ready-publishing Services; images aside, the job's script is the
squares program and Ray runs light, as in test_manifests_run.py."""
import copy

from test_manifests_run import SQUARES, adapt, load, logs


def test_lws_manifest_one_cluster_per_group(cluster):
    """Two groups (replicas: 2) are two Ray clusters of 3 nodes each: every leader sees its own
    two workers and no one else's."""
    manifest = load("lws/ray-cluster.yaml", kind="LeaderWorkerSet")
    manifest["spec"]["replicas"] = 2
    lwt = manifest["spec"]["leaderWorkerTemplate"]
    lwt["workerTemplate"] = copy.deepcopy(lwt["workerTemplate"])  # its env is the leader's YAML anchor
    adapt([lwt["leaderTemplate"]["spec"], lwt["workerTemplate"]["spec"]])
    job = cluster.job(manifest)
    job.start(ready=False)  # no readinessProbe to pass: the Service publishes the pods anyway
    for group in (0, 1):
        leader = job.pod(group, 0)
        assert leader.wait(300) == 0, logs(job)
        log = leader.log()
        assert SQUARES in log and "nodes: 3" in log, logs(job)
        assert f"head of job ray-lws-{group} (from lws: LWS_WORKER_INDEX=0)" in log, log
        assert f"(LWS_LEADER_ADDRESS=ray-lws-{group}.ray-lws.default); 2 workers expected" in log, log
        # Ray started with rayboot.io/ labels (lws-group among them), and took them: the cluster ran.
        assert "takes node labels: 6 passed to ray start" in log, log
        for worker in (1, 2):
            w = job.pod(group, worker)
            assert w.wait(60) == 0, logs(job)
            assert f"worker of job ray-lws-{group} (from lws: LWS_WORKER_INDEX={worker})" in w.log(), w.log()


def test_jobset_manifest(cluster):
    manifest = load("jobset/ray-cluster.yaml", kind="JobSet")
    rjobs = manifest["spec"]["replicatedJobs"]
    for rjob in rjobs:  # unshare the YAML anchors between replicated jobs
        rjob["template"] = copy.deepcopy(rjob["template"])
    adapt(r["template"]["spec"]["template"]["spec"] for r in rjobs)
    job = cluster.job(manifest)
    job.start(ready=False)
    head = job.pod("head")
    assert head.wait(300) == 0, logs(job)
    log = head.log()
    assert SQUARES in log and "nodes: 3" in log, logs(job)
    assert ("head of job ray-jobset (from jobset: /etc/podinfo/labels (replicatedjob-name=head, job-index=0) and "
            "JOB_COMPLETION_INDEX=0)") in log, log
    assert "2 workers expected" in log, log
    assert "takes node labels: 6 passed to ray start" in log, log  # platform, role, job, task, index, pod
    for j in (0, 1):
        worker = job.pod("workers", j)
        assert worker.wait(60) == 0, logs(job)
        assert f"(replicatedjob-name=workers, job-index={j})" in worker.log(), worker.log()
