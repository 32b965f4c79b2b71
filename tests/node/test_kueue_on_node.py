"""Kueue v0.17.0 (tests/node/controllers.py: its CRDs with their conversion webhooks, its RBAC and
admission webhooks from its own config/, leader election off) over rayboot's Ray clusters on the
real node, under the real Job, JobSet and LeaderWorkerSet controllers: k8s/kueue/queues.yaml with
quota for one cluster, and the shipped k8s/indexed-job, k8s/jobset and k8s/lws manifests with the
documented label (docs/kueue.md) plus test_shipped_manifests.py's two changes (the seed program,
CPU requests for 2 cores; the ClusterQueue's CPU quota is cut to match: 3 pods of 300m).

What is looked at: the cluster admitted as one workload and running to its result; a second one
waiting whole (suspended, or its pods gated: none scheduled); a higher-priority Job preempting the
running cluster, whose pods Kueue's eviction deletes (a plain delete: the Job controller's for a
Job or JobSet, Kueue's own for an LWS group), every Ray node drained out of the GCS (its record
kept by a pod outside the cluster), no pod counted as a failure; the quota free again, the cluster
re-admitted whole and its program run to its result. The first attempt's program holds after its
result (so that only the preemption ends it); the ConfigMap is then given the plain seed program,
which the re-admitted pods mount."""
import concurrent.futures
import datetime
import time

import pytest

import cluster
from kube import resource_path
from test_platforms_on_node import holding_program, log_with_result
from test_shipped_manifests import (
    EXAMPLE_CONFIGMAP,
    RESTRICTED_CONTAINER,
    RESTRICTED_POD,
    SEED_PROGRAM,
    apply,
    create_auth_secret,
    for_this_node,
    gcs_recorder,
    load,
    node_record,
    with_program,
)

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
KUEUE = "/apis/kueue.x-k8s.io/v1beta2"
GATE = "kueue.x-k8s.io/admission"

# Per platform: its manifest, the kind Kueue queues and its API path, the pods' selector (by the
# object's name), the head's pod and GCS address (by the object's name).
PLATFORMS = {
    "indexed-job": ("indexed-job/ray-cluster.yaml", "Job", "/apis/batch/v1", "job-name={}",
                    "job-name={},batch.kubernetes.io/job-completion-index=0", "{0}-0.{0}:6379"),
    "jobset": ("jobset/ray-cluster.yaml", "JobSet", "/apis/jobset.x-k8s.io/v1alpha2", "jobset.sigs.k8s.io/jobset-name={}",
               "jobset.sigs.k8s.io/jobset-name={},jobset.sigs.k8s.io/replicatedjob-name=head",
               "{0}-head-0-0.{0}:6379"),
    "lws": ("lws/ray-cluster.yaml", "LeaderWorkerSet", "/apis/leaderworkerset.x-k8s.io/v1", "leaderworkerset.sigs.k8s.io/name={}",
            "leaderworkerset.sigs.k8s.io/name={},leaderworkerset.sigs.k8s.io/worker-index=0", "{0}-0.{0}:6379"),
}


def queues(node, namespace, cpu="900m", memory=None):
    """k8s/kueue/queues.yaml for this test: the ClusterQueue (cluster-wide) named after the
    namespace and selecting only it, its CPU quota one cluster's at the test's requests (or CPU,
    and MEMORY instead of the file's)."""
    cq = f"ray-{namespace}"
    for doc in load("kueue/queues.yaml"):
        doc = dict(doc, metadata=dict(doc["metadata"]))
        if doc["kind"] == "ClusterQueue":
            doc["metadata"]["name"] = cq
            doc["spec"]["namespaceSelector"] = {"matchLabels": {"kubernetes.io/metadata.name": namespace}}
            (flavor,) = doc["spec"]["resourceGroups"][0]["flavors"]
            quota = {"cpu": cpu, "memory": memory}
            flavor["resources"] = [dict(r, nominalQuota=quota[r["name"]]) if quota.get(r["name"]) else r
                                   for r in flavor["resources"]]
        elif doc["kind"] == "LocalQueue":
            doc["metadata"]["namespace"] = namespace
            doc["spec"] = {"clusterQueue": cq}
        node.post_unless_exists(resource_path(doc["apiVersion"], doc["kind"], namespace), doc)
    return cq


def queued(doc, kind, priority="ray-batch", name=None):
    """The documented label (and a priority) on the queued object itself."""
    if doc["kind"] == kind:
        doc["metadata"].setdefault("labels", {}).update({QUEUE_LABEL: "ray", PRIORITY_LABEL: priority})
        if name:
            doc["metadata"]["name"] = name
    return doc


def workloads(node, namespace, owner):
    """Kueue's Workloads of the object named OWNER."""
    return [w for w in node.get(f"{KUEUE}/namespaces/{namespace}/workloads")["items"]
            if any(o["name"] == owner for o in w["metadata"].get("ownerReferences", []))]


def condition(obj, kind):
    return next((c for c in obj.get("status", {}).get("conditions", []) if c["type"] == kind), {})


def admitted(node, namespace, owner):
    return any(condition(w, "Admitted").get("status") == "True" for w in workloads(node, namespace, owner))


def urgent_job(namespace):
    """A small Job of higher priority, which needs quota the running cluster holds; it runs until
    the test deletes it, so that what the preemption left is looked at before the cluster's return."""
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "urgent", "namespace": namespace,
                         "labels": {QUEUE_LABEL: "ray", PRIORITY_LABEL: "ray-urgent"}},
            "spec": {"backoffLimit": 0, "template": {"spec": {
                "restartPolicy": "Never", "securityContext": RESTRICTED_POD, "terminationGracePeriodSeconds": 1,
                "containers": [{"name": "work", "image": cluster.IMAGE_NAMES["debian"], "imagePullPolicy": "Never",
                                "command": ["sleep", "600"], "securityContext": RESTRICTED_CONTAINER,
                                "resources": {"requests": {"cpu": "300m", "memory": "64Mi"}}}]}}}}


def sigterm_lags(logs, head):
    """Seconds from the head's SIGTERM (rayboot's line, the kubelet's timestamp) to each worker's:
    how far apart a whole cluster's deletion reaches its pods."""
    def when(log):
        line = next((line for line in log.splitlines() if "SIGTERM: draining this node" in line), None)
        return datetime.datetime.fromisoformat(line.split()[0][:26].rstrip("Z")) if line else None
    t_head = when(logs[head])
    return {n: round((when(log) - t_head).total_seconds(), 3) if t_head and when(log) else None
            for n, log in logs.items() if n != head}


def not_failed(node, namespace, platform, name):
    """What the platform's controller counts: no failed pod, no failed Job or JobSet."""
    if platform == "indexed-job":
        job = node.get(f"/apis/batch/v1/namespaces/{namespace}/jobs/{name}")
        assert not job["status"].get("failed"), job["status"]
        assert condition(job, "Failed").get("status") != "True", job["status"]
    elif platform == "jobset":
        js = node.get(f"/apis/jobset.x-k8s.io/v1alpha2/namespaces/{namespace}/jobsets/{name}")
        assert js.get("status", {}).get("terminalState") != "Failed", js.get("status")
        assert not js.get("status", {}).get("restarts"), js.get("status")
        for job in node.get(f"/apis/batch/v1/namespaces/{namespace}/jobs?labelSelector="
                            f"jobset.sigs.k8s.io/jobset-name={name}")["items"]:
            assert not job["status"].get("failed"), job["status"]


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
def test_kueue_admits_a_whole_cluster_and_its_preemption_drains_it(node, restricted_namespace, kueue, platform):
    ns = restricted_namespace
    manifest, kind, api, pods_of, head_of, gcs_of = PLATFORMS[platform]

    def path(obj_name):
        return f"{api}/namespaces/{ns}/{kind.lower()}s/{obj_name}"
    queues(node, ns)
    docs = with_program([queued(for_this_node(d, ns), kind) for d in load(manifest)], holding_program("True"))
    (name,) = [d["metadata"]["name"] for d in docs if d["kind"] == kind]
    t0 = time.monotonic()
    apply(node, ns, docs)

    def head():
        pods = [p for p in node.pods(ns, head_of.format(name)) if not p["metadata"].get("deletionTimestamp")]
        return pods[0]["metadata"]["name"] if len(pods) == 1 else None
    first_uid, _ = log_with_result(node, ns, node.wait("the head's pod", head, 240))
    t_first = time.monotonic() - t0
    assert admitted(node, ns, name), workloads(node, ns, name)

    # A second cluster waits whole: no pod of it scheduled (a Job's are not even made).
    second = f"{name}-b"
    (doc,) = [queued(for_this_node(d, ns), kind, name=second) for d in load(manifest) if d["kind"] == kind]
    node.create(doc)
    node.wait("the second cluster's workload", lambda: workloads(node, ns, second), 60)
    for _ in range(15):
        (wl,) = workloads(node, ns, second)
        assert condition(wl, "QuotaReserved").get("status") != "True", wl["status"]
        for p in node.pods(ns, pods_of.format(second)):
            assert not p["spec"].get("nodeName"), p["metadata"]["name"]
            assert GATE in [g["name"] for g in p["spec"].get("schedulingGates", [])], p["spec"]
        if kind != "LeaderWorkerSet":
            assert not node.pods(ns, pods_of.format(second))
            obj = node.get(path(second))
            assert obj["spec"]["suspend"] is True, obj["spec"]
        time.sleep(1)
    print(f"{platform}: waiting: {wl['status'].get('conditions')}")
    node.delete(path(second), {"propagationPolicy": "Background"})

    # The preemption: every pod of the cluster followed until it is gone, the GCS's node table
    # recorded from outside.
    gcs_recorder(node, ns, gcs_of.format(name))
    running = {p["metadata"]["name"]: p for p in node.pods(ns, pods_of.format(name))}
    assert len(running) == 3, sorted(running)
    # The recorder pod runs before its Python has imported Ray's modules and made its first call:
    # the preemption waits until it has the cluster on record.
    node.wait("the recorder's first look", lambda: alive_nodes(node_record(node, ns)) == 3, 120, interval=0.5)
    head_name = head()
    if kind != "LeaderWorkerSet":  # an LWS leader restarts its container after a result: it holds
        node.patch(f"/api/v1/namespaces/{ns}/configmaps/{EXAMPLE_CONFIGMAP}",
                   {"data": {"job.py": SEED_PROGRAM.read_text()}})
    with concurrent.futures.ThreadPoolExecutor(2 * len(running)) as pool:
        ends = {n: pool.submit(node.follow_pod_until_gone, ns, n, 180) for n in running}
        said = {n: pool.submit(node.follow_log, ns, n, "ray", 180) for n in running}
        t_preempt = time.monotonic()
        node.create(urgent_job(ns))
        last = {n: f.result() for n, f in ends.items()}
        said = {n: f.result() for n, f in said.items()}
    t_gone = time.monotonic() - t_preempt
    print(f"{platform}: SIGTERM lag behind the head's (s): {sigterm_lags(said, head_name)}")
    (wl,) = workloads(node, ns, name)
    evicted = condition(wl, "Evicted")
    print(f"{platform}: evicted: {evicted}")
    assert evicted.get("reason") == "Preempted" or "Preempted" in str(wl["status"]), wl["status"]

    record = node_record(node, ns)
    print(f"{platform}: the GCS's record: {record}")

    def drained(ip):
        mine = [r for r in record if r[0] == ip]
        return bool(mine) and mine[-1][1] == "DEAD" and mine[-1][2].startswith("AUTOSCALER_DRAIN")
    assert drained(running[head_name]["status"]["podIP"]), f"{record}\nthe head's log:\n{said[head_name]}"
    undrained = []
    ips = {n: pod["status"]["podIP"] for n, pod in running.items()}  # a pod's last status may have none
    for n, pod in last.items():
        (ray,) = [c for c in pod["status"]["containerStatuses"] if c["name"] == "ray"]
        term = ray["state"].get("terminated") or ray.get("lastState", {}).get("terminated") or {}
        assert term.get("message", "").startswith("rayboot: SIGTERM: "), (n, term)
        assert not any(c["type"] == "DisruptionTarget" for c in pod["status"].get("conditions", [])), pod["status"]
        if n == head_name:  # it ends with its stopped command's outcome
            assert "node drained" in term["message"], (n, term)
            continue
        assert term.get("exitCode") == 0, (n, term)
        # Drained is what the GCS's table says; the worker says "node drained" when it saw its node
        # leave, or that its drain was accepted and the GCS went (the whole cluster going) first.
        said_drained = "node drained" in term["message"] or "node drain accepted" in term["message"]
        if not said_drained or not drained(ips[n]):
            undrained.append((n, term["message"].strip(), [r[1:3] for r in record if r[0] == ips[n]]))
    not_failed(node, ns, platform, name)

    # Re-admitted once the urgent Job is gone: the cluster whole again, its program to its result.
    assert not admitted(node, ns, name), workloads(node, ns, name)
    t_back = time.monotonic()
    node.delete(f"/apis/batch/v1/namespaces/{ns}/jobs/urgent", {"propagationPolicy": "Background"})
    node.wait("the cluster re-admitted", lambda: admitted(node, ns, name), 180, interval=1)
    _, log = log_with_result(node, ns, node.wait("the new head's pod", head, 240), other_than=first_uid)
    t_whole = time.monotonic() - t_back
    if platform == "indexed-job":
        node.wait("the Job Complete", lambda: condition(
            node.get(f"/apis/batch/v1/namespaces/{ns}/jobs/{name}"), "Complete").get("status") == "True", 240)
    elif platform == "jobset":
        node.wait("the JobSet Completed", lambda: node.get(
            f"/apis/jobset.x-k8s.io/v1alpha2/namespaces/{ns}/jobsets/{name}").get("status", {}).get(
            "terminalState") == "Completed", 240)
    not_failed(node, ns, platform, name)
    print(f"{platform} under Kueue: squares on 3 nodes {t_first:.0f} s after creation; preempted -> every "
          f"pod gone {t_gone:.1f} s after the preemptor's creation; re-admitted and its squares on 3 nodes "
          f"{t_whole:.1f} s after the preemptor's deletion")
    # The whole cluster is deleted at once: the head keeps its GCS up until the workers' drains are
    # through (before, it stopped it once its own drain was accepted, and they ended undrained).
    assert not undrained, f"workers not drained out of the GCS: {undrained}\n{said}"


def alive_nodes(record):
    """Nodes whose last line in a GCS record says ALIVE (by node id: a record may span heads)."""
    last = {line[4]: line[1] for line in record if len(line) > 4 and line[1] in ("ALIVE", "DEAD")}
    return sum(1 for state in last.values() if state == "ALIVE")


def test_a_kuberay_cluster_beside_a_rayboot_cluster_under_one_queue(node, namespace, kueue, kuberay):
    """KubeRay v1.6.2's sample RayCluster (2 workers) and the shipped Indexed Job (head and 2
    workers), both labelled for the same LocalQueue, created together with quota for both: each is
    one workload, admitted whole, and every one of its 3 nodes ALIVE in its own GCS (recorded from
    outside). Prints, for each, the seconds from creation to admission and to 3 nodes ALIVE."""
    ns = namespace
    queues(node, ns, cpu="2", memory="32Gi")  # 3 x 4Gi for rayboot's, 5Gi + 2 x 1Gi for KubeRay's
    manifest, kind, _, _, _, gcs_of = PLATFORMS["indexed-job"]
    docs = [queued(for_this_node(d, ns), kind) for d in load(manifest)]
    (name,) = [d["metadata"]["name"] for d in docs if d["kind"] == kind]
    rc = kuberay.sample_cluster()
    rc["spec"]["workerGroupSpecs"][0].update(replicas=2, minReplicas=2, maxReplicas=2)
    rc["metadata"].setdefault("labels", {}).update({QUEUE_LABEL: "ray", PRIORITY_LABEL: "ray-batch"})
    rc_name = rc["metadata"]["name"]
    create_auth_secret(node, ns)  # the recorder of rayboot's GCS holds its token
    gcs_recorder(node, ns, gcs_of.format(name), follow=True)
    gcs_recorder(node, ns, f"{rc_name}-head-svc:6379", follow=True, auth=False, name="gcs-record-kuberay")
    t0 = time.monotonic()
    for d in docs:
        node.create(d)
    kuberay.create(node, ns, rc, "rayclusters")
    clusters = {"rayboot": (name, "gcs-record"), "kuberay": (rc_name, "gcs-record-kuberay")}
    seen, whole = {}, {}

    def both_whole():
        now = time.monotonic() - t0
        for who, (owner, recorder) in clusters.items():
            if f"{who} admitted" not in seen and admitted(node, ns, owner):
                seen[f"{who} admitted"] = now
            if f"{who} ALIVE" not in seen and (n := alive_nodes(node_record(node, ns, recorder))) >= 3:
                seen[f"{who} ALIVE"], whole[who] = now, n
        return len(seen) == 4
    try:
        node.wait("both clusters admitted and every node ALIVE", both_whole, 300, interval=0.5)
    except TimeoutError as e:
        raise AssertionError(f"{e}: {seen}; workloads: {node.get(f'{KUEUE}/namespaces/{ns}/workloads')}") from None
    for who, (owner, recorder) in clusters.items():
        (wl,) = workloads(node, ns, owner)
        assert condition(wl, "Admitted").get("status") == "True", wl["status"]
        # Counted when first whole, not now: the Indexed Job runs its program to the end and
        # leaves, so a later count races with its own finish.
        assert whole[who] == 3, (whole, node_record(node, ns, recorder))
        assert seen[f"{who} admitted"] <= seen[f"{who} ALIVE"], seen
    print("one queue, created together: " + ", ".join(f"{k} {v:.1f} s" for k, v in sorted(seen.items())))
