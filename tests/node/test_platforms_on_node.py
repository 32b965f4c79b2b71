"""k8s/lws/ray-cluster.yaml and k8s/jobset/ray-cluster.yaml on the real node, under the real
LeaderWorkerSet (v0.9.0) and JobSet (v0.12.0) controllers with their admission webhooks live
(tests/node/controllers.py; one of each for the session): the API server validates each manifest
against its project's CRD and calls its webhooks, the controllers make the StatefulSets, Jobs and
Services, the webhooks give the pods what rayboot reads (LeaderWorkerSet's LWS_* variables), and
everything else is the real thing too: the StatefulSet and Job controllers, the kubelet's
downward API volume, CoreDNS publishing not-ready addresses, our images, real Ray with its token
authentication on (the Secret made first, as the quickstarts say), in a namespace that enforces
Pod Security "restricted". The one change made to every shipped manifest here is
test_shipped_manifests.py's (CPU requests for 2 cores; the program is the one each ships); the
tests that time a group or a set coming back run a program of their own in the manifest's
ConfigMap, which holds once it has its result, so that the only thing that ends the cluster is
the failure the test makes."""
import os
import signal
import time

import pytest

import cluster
import controllers
from kube import ApiError, resource_path
from test_shipped_manifests import (
    AUTH_SOURCE,
    SEED_PROGRAM,
    SQUARES,
    apply,
    for_this_node,
    load,
    pod_logs,
    with_program,
)

LWS_VARS = ("LWS_LEADER_ADDRESS", "LWS_GROUP_SIZE", "LWS_WORKER_INDEX")
FIRST_ATTEMPT = "'jobset.sigs.k8s.io/restart-attempt=\"0\"' in pathlib.Path('/etc/podinfo/labels').read_text()"


def holding_program(hold):
    """The seed program, which once it has printed its result sleeps while HOLD (a Python
    expression) is true, then exits as the seed program does."""
    body, last = SEED_PROGRAM.read_text().rstrip().rsplit("\n", 1)
    assert last.startswith("sys.exit("), last
    return f"{body}\nimport pathlib, time\nwhile {hold}:\n    time.sleep(1)\n{last}\n"


def create_all(node, namespace, relative, program=None, change=None):
    docs = [for_this_node(d, namespace) for d in load(relative)]
    if program:
        with_program(docs, program)
    for d in docs:
        if change:
            change(d)
    apply(node, namespace, docs)
    return docs


def refused(node, namespace, doc):
    """The API server refuses doc: HTTP 422 (the CRD's schema), or 400 when the controller's
    mutating webhook, called first, cannot read it."""
    try:
        node.create(doc, namespace)
    except ApiError as e:
        return e.code in (400, 422)
    return False


def log_with_result(node, namespace, name, other_than=None, timeout=420):
    """(uid, log) of pod NAME once its log holds the seed program's result on 3 nodes; with
    OTHER_THAN, a pod of that name with another uid."""
    def result():
        pod = node.pod(namespace, name)
        if pod["metadata"]["uid"] == other_than:
            return None
        log = node.log(namespace, name, "ray")
        return (pod["metadata"]["uid"], log) if SQUARES in log and "nodes: 3" in log and AUTH_SOURCE in log else None
    try:
        return node.wait(f"the squares on 3 nodes in {name}'s log", result, timeout, interval=1)
    except TimeoutError as e:
        raise AssertionError(f"{e}\n{pod_logs(node, namespace)}") from None


def env_names(pod):
    return [[e["name"] for e in c.get("env", [])] for c in pod["spec"]["containers"] + pod["spec"].get("initContainers", [])]


def test_lws_runs_to_its_result_and_a_deleted_worker_brings_its_group_back(node, restricted_namespace, lws):
    """One group of 3: the leader runs the program on a 3-node Ray cluster, with what rayboot
    reads given by LeaderWorkerSet's pod webhook (the manifest sets no LWS_* variable). A
    worker pod deleted: the default RecreateGroupOnPodRestart deletes the leader, its workers go
    with it, and the StatefulSets make the group again under the same names, which forms a new
    3-node cluster and runs the program again (timed)."""
    ns = restricted_namespace
    t0 = time.monotonic()
    (doc,) = [d for d in create_all(node, ns, "lws/ray-cluster.yaml", holding_program("True"))
              if d["kind"] == "LeaderWorkerSet"]
    assert not any(v in str(doc) for v in LWS_VARS), "the manifest sets LWS_* itself"
    bad = dict(doc, metadata={"name": "bad"})
    bad["spec"] = dict(doc["spec"], leaderWorkerTemplate=dict(doc["spec"]["leaderWorkerTemplate"], size="three"))
    assert refused(node, ns, bad), "the API server took a LeaderWorkerSet with size: three"

    first_uid, log = log_with_result(node, ns, "ray-lws-0")
    t_first = time.monotonic() - t0
    assert "head of job ray-lws-0 (from lws: LWS_WORKER_INDEX=0); head ray-lws-0.ray-lws." in log, log
    assert "(LWS_LEADER_ADDRESS=ray-lws-0.ray-lws." in log and "2 workers expected" in log, log
    for name, index in (("ray-lws-0", 0), ("ray-lws-0-1", 1), ("ray-lws-0-2", 2)):
        pod = node.pod(ns, name)
        # The webhook's: first in every container, with the values of this pod.
        for names in env_names(pod):
            assert names[:3] == list(LWS_VARS), (name, names)
        env = {e["name"]: e.get("value") for e in pod["spec"]["containers"][0]["env"]}
        assert env["LWS_WORKER_INDEX"] == str(index) and env["LWS_GROUP_SIZE"] == "3", env
        assert env["LWS_LEADER_ADDRESS"] == f"ray-lws-0.ray-lws.{ns}", env
        assert pod["metadata"]["labels"]["leaderworkerset.sigs.k8s.io/worker-index"] == str(index)
        if index:
            wlog = node.log(ns, name, "ray")
            assert f"worker of job ray-lws-0 (from lws: LWS_WORKER_INDEX={index})" in wlog, wlog
    assert node.pod(ns, "ray-lws-0-1")["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet"
    svc = node.get(f"/api/v1/namespaces/{ns}/services/ray-lws")
    assert svc["spec"]["clusterIP"] == "None" and svc["spec"]["publishNotReadyAddresses"] is True

    worker_uid = node.pod(ns, "ray-lws-0-1")["metadata"]["uid"]
    t_delete = time.monotonic()
    node.delete(f"/api/v1/namespaces/{ns}/pods/ray-lws-0-1")

    def leader_made_again():
        pod = node.pod(ns, "ray-lws-0")
        return pod["metadata"]["uid"] != first_uid and not pod["metadata"].get("deletionTimestamp")
    node.wait("the leader made again", leader_made_again, 300, interval=0.5)
    t_leader = time.monotonic() - t_delete
    second_uid, log = log_with_result(node, ns, "ray-lws-0", other_than=first_uid)
    t_whole = time.monotonic() - t_delete
    assert "head of job ray-lws-0 (from lws" in log, log
    assert node.pod(ns, "ray-lws-0-1")["metadata"]["uid"] != worker_uid
    print(f"LeaderWorkerSet: squares on 3 nodes {t_first:.0f} s after creation; a worker deleted -> "
          f"new leader {t_leader:.1f} s, its 3-node cluster's squares {t_whole:.1f} s after the delete")


def jobset_state(node, ns, name):
    js = node.get(f"/apis/jobset.x-k8s.io/v1alpha2/namespaces/{ns}/jobsets/{name}")
    return js.get("status", {}).get("terminalState"), js.get("status", {}).get("restarts", 0)


def wait_jobset_completed(node, ns, name, final, timeout=420):
    """Waits for JobSet NAME to Complete, keeping the last state of each of its pods in FINAL."""
    def ended():
        for p in node.pods(ns, f"jobset.sigs.k8s.io/jobset-name={name}"):
            final[p["metadata"]["name"]] = p
        state, _ = jobset_state(node, ns, name)
        if state == "Failed":
            raise AssertionError(f"the JobSet failed\n{pod_logs(node, ns)}")
        return state == "Completed"
    try:
        node.wait(f"JobSet {name} Completed", ended, timeout, interval=1)
    except TimeoutError as e:
        raise AssertionError(f"{e}\n{pod_logs(node, ns)}") from None


def test_jobset_runs_to_completion(node, restricted_namespace, jobset):
    """head x1 and workers x2: the head runs the seed program on a 3-node Ray cluster, every pod
    ends Succeeded, and the JobSet Completes on the head's Job (its successPolicy)."""
    ns = restricted_namespace
    t0 = time.monotonic()
    (doc,) = [d for d in create_all(node, ns, "jobset/ray-cluster.yaml") if d["kind"] == "JobSet"]
    bad = dict(doc, metadata={"name": "bad"}, spec=dict(doc["spec"], replicatedJobs=[{"name": "head"}]))
    assert refused(node, ns, bad), "the API server took a replicated job without a template"
    final = {}
    wait_jobset_completed(node, ns, "ray-jobset", final)

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
    assert head["metadata"]["ownerReferences"][0]["kind"] == "Job"
    assert sorted(p["spec"]["hostname"] for p in by_rjob["workers"]) == ["ray-jobset-workers-0-0",
                                                                          "ray-jobset-workers-1-0"]
    for p in by_rjob["workers"]:
        # They left by themselves once the head's job was done (rayboot's `finished` key).
        assert p["status"]["phase"] == "Succeeded", pod_logs(node, ns)
    svc = node.get(f"/api/v1/namespaces/{ns}/services/ray-jobset")
    assert svc["spec"]["clusterIP"] == "None" and svc["spec"]["publishNotReadyAddresses"] is True


def _kill_container_init(ns, pod):
    """SIGKILL to the first process of POD's ray container (rayboot): the container ends 137."""
    sandboxes = cluster.pod_sandboxes()
    ip = pod["status"]["podIP"]
    procs = cluster.processes_in_netns(sandboxes[ip])
    os.kill(min(p for p, argv in procs.items() if argv[0].endswith(b"rayboot")), signal.SIGKILL)


def test_jobset_failed_worker_recreates_the_set_with_max_restarts(node, restricted_namespace, jobset):
    """The shipped JobSet with failurePolicy.maxRestarts: 1, whose head holds after its result on
    the first attempt: a worker's container killed fails its Job (backoffLimit 0), JobSet
    re-creates every Job (restart-attempt 1), the new pods form a new 3-node cluster, whose head
    runs the program to its result and the set Completes (timed)."""
    ns = restricted_namespace

    def max_restarts(d):
        if d["kind"] == "JobSet":
            d["spec"]["failurePolicy"] = {"maxRestarts": 1}
    create_all(node, ns, "jobset/ray-cluster.yaml", holding_program(FIRST_ATTEMPT), max_restarts)

    def head_pod():
        pods = node.pods(ns, "jobset.sigs.k8s.io/replicatedjob-name=head")
        return pods[0] if len(pods) == 1 else None
    node.wait("the head's pod", head_pod, 120)
    first_uid, _ = log_with_result(node, ns, head_pod()["metadata"]["name"])
    assert head_pod()["metadata"]["name"].startswith("ray-jobset-head-0-0-"), head_pod()["metadata"]["name"]
    (worker, *_) = node.pods(ns, "jobset.sigs.k8s.io/replicatedjob-name=workers")
    assert worker["metadata"]["labels"]["jobset.sigs.k8s.io/restart-attempt"] == "0"
    t_fail = time.monotonic()
    _kill_container_init(ns, worker)

    def second_attempt_head():
        pods = [p for p in node.pods(ns, "jobset.sigs.k8s.io/replicatedjob-name=head")
                if p["metadata"]["labels"].get("jobset.sigs.k8s.io/restart-attempt") == "1"]
        return pods[0]["metadata"]["name"] if pods else None
    name = node.wait("a head pod of restart-attempt 1", second_attempt_head, 300, interval=0.5)
    t_recreated = time.monotonic() - t_fail
    _, log = log_with_result(node, ns, name, other_than=first_uid)
    t_whole = time.monotonic() - t_fail
    final = {}
    wait_jobset_completed(node, ns, "ray-jobset", final)
    _, restarts = jobset_state(node, ns, "ray-jobset")
    assert restarts == 1, restarts
    assert "head ray-jobset-head-0-0.ray-jobset." in log, log
    print(f"JobSet: a worker killed -> set re-created (restart-attempt 1 head) {t_recreated:.1f} s, its 3-node "
          f"cluster's squares {t_whole:.1f} s after the kill")


def _controller_pids(ctl):
    found, exe = [], os.path.realpath(cluster.BIN / ctl.program)
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                if os.readlink(f"/proc/{p}/exe") == exe:
                    found.append(int(p))
            except OSError:
                pass
    assert found, f"no {ctl.program} process"
    return found


@pytest.mark.parametrize("which", ["lws", "jobset"])
def test_the_manifest_is_refused_while_its_webhook_does_not_answer(node, namespace, which, request):
    """The webhooks are live, not decoration: with the controller's process stopped (SIGSTOP), its
    webhooks do not answer and the API server refuses the shipped LeaderWorkerSet / JobSet (they
    fail closed), so no pod starts without what the webhook gives it. Continued, it is admitted."""
    ctl = request.getfixturevalue(which)
    relative = {"lws": "lws/ray-cluster.yaml", "jobset": "jobset/ray-cluster.yaml"}[which]
    (doc,) = [for_this_node(d, namespace) for d in load(relative) if d["kind"] in ("LeaderWorkerSet", "JobSet")]
    collection = resource_path(doc["apiVersion"], doc["kind"], namespace)
    pids = _controller_pids(ctl)
    try:
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        with pytest.raises(ApiError) as refusal:
            node.create(doc, namespace)
        assert "failed calling webhook" in str(refusal.value), refusal.value
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)
    assert not node.get(collection)["items"] and not node.pods(namespace)
    node.wait("the webhook answering again", lambda: controllers.webhook_answers(node, ctl), 60, interval=0.5)
    assert node.post(f"{collection}?dryRun=All", doc)["metadata"]["name"] == doc["metadata"]["name"]
