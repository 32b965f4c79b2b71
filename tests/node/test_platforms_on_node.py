"""k8s/lws/ray-cluster.yaml and k8s/jobset/ray-cluster.yaml on the real node, to their result:
the API server validates each against its project's own CRD (tests/manifests/schemas), a small
test controller makes what LeaderWorkerSet's or JobSet's would (tests/node/lws.py,
tests/node/jobset.py say what they leave out), and everything else is the real thing: the Job
controller, the kubelet's downward API volume, CoreDNS publishing not-ready addresses, our
images, real Ray with its token authentication on (the Secret made first, as the quickstarts
say), in a namespace that enforces Pod Security "restricted". The two changes made to every
shipped manifest here are test_shipped_manifests.py's (CPU requests for 2 cores; the program is the one each
ships)."""
import time

from kube import ApiError
from test_shipped_manifests import AUTH_SOURCE, SQUARES, apply, for_this_node, load, pod_logs


def create_all(node, namespace, relative):
    docs = [for_this_node(d, namespace) for d in load(relative)]
    apply(node, namespace, docs)
    return docs


def refused(node, namespace, doc):
    """The API server refuses doc (HTTP 422, the CRD's schema): the CRD is there and biting."""
    try:
        node.create(doc, namespace)
    except ApiError as e:
        return e.code == 422
    return False


def leader_log_with_result(node, namespace, name, controller, timeout=420):
    """The log of pod NAME once it holds the seed program's result; its uid."""
    def result():
        if controller.errors:
            raise AssertionError(f"the test controller failed: {controller.errors}")
        pod = node.pod(namespace, name)
        log = node.log(namespace, name, "ray")
        return (pod["metadata"]["uid"], log) if SQUARES in log and "nodes: 3" in log and AUTH_SOURCE in log else None
    try:
        return node.wait(f"the squares in {name}'s log", result, timeout, interval=1)
    except TimeoutError as e:
        raise AssertionError(f"{e}\n{pod_logs(node, namespace)}") from None


def test_lws_runs_to_its_result_and_its_group_comes_back(node, restricted_namespace, lws):
    """One group of 3: the leader runs the seed program on a 3-node Ray cluster. Its command
    ends, the kubelet restarts its container (LeaderWorkerSet pods restart), and the default
    RecreateGroupOnPodRestart makes the whole group again: a new leader and new workers under the
    same names, which form a new cluster and run the program again."""
    ns = restricted_namespace
    t0 = time.monotonic()
    (doc,) = [d for d in create_all(node, ns, "lws/ray-cluster.yaml") if d["kind"] == "LeaderWorkerSet"]
    bad = dict(doc, metadata={"name": "bad"})
    bad["spec"] = dict(doc["spec"], leaderWorkerTemplate=dict(doc["spec"]["leaderWorkerTemplate"], size="three"))
    assert refused(node, ns, bad), "the API server took a LeaderWorkerSet with size: three"

    first_uid, log = leader_log_with_result(node, ns, "ray-lws-0", lws)
    t_first = time.monotonic() - t0
    assert "head of job ray-lws-0 (from lws: LWS_WORKER_INDEX=0); head ray-lws-0.ray-lws." in log, log
    assert "(LWS_LEADER_ADDRESS=ray-lws-0.ray-lws." in log and "2 workers expected" in log, log
    for w in (1, 2):
        wlog = node.log(ns, f"ray-lws-0-{w}", "ray")
        assert f"worker of job ray-lws-0 (from lws: LWS_WORKER_INDEX={w})" in wlog, wlog
    svc = node.get(f"/api/v1/namespaces/{ns}/services/ray-lws")
    assert svc["spec"]["clusterIP"] == "None" and svc["spec"]["publishNotReadyAddresses"] is True

    def new_group():
        pod = node.pod(ns, "ray-lws-0")
        return pod["metadata"]["uid"] != first_uid and not pod["metadata"].get("deletionTimestamp")
    node.wait("the group made again", new_group, 300, interval=1)
    assert lws.recreated and lws.recreated[0][0] == "ray-lws-0", lws.recreated
    second_uid, log = leader_log_with_result(node, ns, "ray-lws-0", lws)
    assert second_uid != first_uid and "head of job ray-lws-0 (from lws" in log, log
    print(f"LeaderWorkerSet: squares on 3 nodes {t_first:.0f} s after creation; group made again "
          f"(restarted or deleted: {lws.recreated[0][1]}); squares again {time.monotonic() - t0:.0f} s after creation")


def jobset_phase(node, ns, name):
    js = node.get(f"/apis/jobset.x-k8s.io/v1alpha2/namespaces/{ns}/jobsets/{name}")
    return js.get("status", {}).get("terminalState")


def test_jobset_runs_to_completion(node, restricted_namespace, jobset):
    """head x1 and workers x2: the head runs the seed program on a 3-node Ray cluster, every pod
    ends Succeeded, and the JobSet Completes on the head's Job (its successPolicy)."""
    ns = restricted_namespace
    t0 = time.monotonic()
    (doc,) = [d for d in create_all(node, ns, "jobset/ray-cluster.yaml") if d["kind"] == "JobSet"]
    bad = dict(doc, metadata={"name": "bad"}, spec=dict(doc["spec"], replicatedJobs=[{"name": "head"}]))
    assert refused(node, ns, bad), "the API server took a replicated job without a template"
    final = {}

    def ended():
        if jobset.errors:
            raise AssertionError(f"the test controller failed: {jobset.errors}")
        for p in node.pods(ns, "jobset.sigs.k8s.io/jobset-name=ray-jobset"):
            final[p["metadata"]["name"]] = p
        state = jobset_phase(node, ns, "ray-jobset")
        if state == "Failed":
            raise AssertionError(f"the JobSet failed\n{pod_logs(node, ns)}")
        return state == "Completed"
    try:
        node.wait("JobSet ray-jobset Completed", ended, 420, interval=1)
    except TimeoutError as e:
        raise AssertionError(f"{e}\n{pod_logs(node, ns)}") from None

    print(f"JobSet: Completed {time.monotonic() - t0:.0f} s after creation; pods "
          f"{sorted((p['metadata']['name'], p['status']['phase']) for p in final.values())}")
    by_rjob = {}
    for p in final.values():
        by_rjob.setdefault(p["metadata"]["labels"]["jobset.sigs.k8s.io/replicatedjob-name"], []).append(p)
    (head,) = by_rjob["head"]
    assert head["status"]["phase"] == "Succeeded", pod_logs(node, ns)
    log = node.log(ns, head["metadata"]["name"], "ray")
    assert SQUARES in log and "nodes: 3" in log and AUTH_SOURCE in log, pod_logs(node, ns)
    assert ("head of job ray-jobset (from jobset: /etc/podinfo/labels (replicatedjob-name=head, job-index=0) and "
            "JOB_COMPLETION_INDEX=0); head ray-jobset-head-0-0.ray-jobset.") in log, log
    assert "2 workers expected" in log, log
    assert head["spec"]["hostname"] == "ray-jobset-head-0-0" and head["spec"]["subdomain"] == "ray-jobset"
    assert sorted(p["spec"]["hostname"] for p in by_rjob["workers"]) == ["ray-jobset-workers-0-0",
                                                                          "ray-jobset-workers-1-0"]
    for p in by_rjob["workers"]:
        # They left by themselves once the head's job was done (rayboot's `finished` key).
        assert p["status"]["phase"] == "Succeeded", pod_logs(node, ns)
    svc = node.get(f"/api/v1/namespaces/{ns}/services/ray-jobset")
    assert svc["spec"]["clusterIP"] == "None" and svc["spec"]["publishNotReadyAddresses"] is True
