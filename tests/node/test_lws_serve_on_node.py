"""k8s/lws/ray-serve.yaml on the real node under the real LeaderWorkerSet controller (v0.9.0, its
webhooks live): the leader is Ready only while its group's Ray cluster is whole, which is read
here from the GCS's own node table (a recorder pod polls GetAllNodeInfo every 50 ms and keeps
every change, with the log's timestamps: test_shipped_manifests.gcs_recorder) and from the pod's
Ready condition, polled every 0.25 s, never from a log line. The Service in front of the leaders
answers with the whole cluster. A worker lost: with the shipped RecreateGroupOnPodRestart the
group is made again and the new leader is Ready only once its new cluster is whole; with
startupPolicy LeaderReady (and RAYBOOT_SIDECAR_READINESS=cluster-leader-ready, as the manifest
says) the workers are made (no deadlock), and with restartPolicy None the same leader goes
NotReady while a worker is gone and Ready once its replacement is ALIVE. Each is timed. And why
cluster-leader-ready is needed: LeaderReady with `cluster` alone makes no worker at all.

The one change to the manifest is test_shipped_manifests.py's (CPU requests for 2 cores)."""
import json
import subprocess
import time

import cluster
from test_shipped_manifests import (
    SQUARES,
    _rfc3339,
    apply,
    apply_rbac_if_used,
    for_this_node,
    gcs_recorder,
    load,
    pod_logs,
)

LEADER = "ray-serve-0"
SIZE = 3
# The recorder polls every 50 ms (slower under load): a node ALIVE before a look may be in its
# record up to this much after it.
RECORD_LAG_S = 0.5
# A GET of the Service's ClusterIP from a pod of the namespace (kube-proxy's rules are for pods):
# run by the machine's python3 in that pod's network namespace.
GET = """
import sys, urllib.request
print(urllib.request.urlopen(f"http://{sys.argv[1]}:8000/", timeout=60).read().decode())
"""


def create(node, ns, change=None):
    docs = [for_this_node(d, ns) for d in load("lws/ray-serve.yaml")]
    for d in docs:
        if change:
            change(d)
    apply_rbac_if_used(node, ns, docs)
    apply(node, ns, docs)
    gcs_recorder(node, ns, f"{LEADER}.ray-serve.{ns}:6379", follow=True)
    return docs


class Leader:
    """The leader pod's Ready condition, looked at every 0.25 s: (time, uid, ready) each look."""

    def __init__(self, node, ns):
        self.node, self.ns, self.seen = node, ns, []

    def look(self):
        try:
            p = self.node.pod(self.ns, LEADER)
        except Exception:  # noqa: BLE001 - not made yet, or between a deletion and the next
            return None
        if p["metadata"].get("deletionTimestamp"):
            return None
        ready = any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions", []))
        self.seen.append((time.time(), p["metadata"]["uid"], ready))
        return p["metadata"]["uid"], ready

    def wait(self, what, ready, uid=None, other_than=None, timeout=420):
        def check():
            got = self.look()
            if not got or got[1] != ready or (uid and got[0] != uid) or (other_than and got[0] == other_than):
                return None
            return got[0]
        try:
            uid_now = self.node.wait(what, check, timeout, interval=0.25)
        except TimeoutError as e:
            raise AssertionError(f"{e}\n{pod_logs(self.node, self.ns)}") from None
        return uid_now, self.seen[-1][0]


def record(node, ns):
    """The recorder's lines: (time, node id, state, role)."""
    out = []
    for line in node.log(ns, "gcs-record", "record", timestamps=True).splitlines():
        ts, _, rest = line.partition(" ")
        f = rest.split()
        if len(f) >= 5:
            out.append((_rfc3339(ts), f[4], f[1], f[3]))
    return out


def alive(rec, at, since=0.0):
    """The node ids ALIVE at time AT by the record, among nodes first seen after SINCE (a new
    cluster's: the old one's last lines stay ALIVE in the record when its GCS went)."""
    first, state = {}, {}
    for t, node_id, st, _role in rec:
        first.setdefault(node_id, t)
        if t <= at:
            state[node_id] = st
    return {i for i, st in state.items() if st == "ALIVE" and first[i] > since}


def whole_since(rec, since=0.0):
    """When the record first shows SIZE nodes ALIVE (of those first seen after SINCE), or None."""
    for t, *_ in rec:
        if t > since and len(alive(rec, t, since)) >= SIZE:
            return t
    return None


def assert_ready_only_when_whole(leader, rec, uid, after=0.0, since=0.0):
    """Every look after AFTER that saw leader UID Ready saw it when the record had its cluster
    (the nodes first seen after SINCE) whole. Returns the first such look's time."""
    readies = [t for t, u, r in leader.seen if u == uid and r and t > after]
    assert readies, leader.seen
    for t in readies:
        assert len(alive(rec, t + RECORD_LAG_S, since)) >= SIZE, (t, sorted(alive(rec, t, since)), rec)
    return readies[0]


def service_answer(node, ns):
    """The Service's answer, asked from the recorder pod's network namespace; asked again while
    refused (a leader Ready when its cluster is whole, the moment rayboot starts the server, which
    then imports Ray and listens)."""
    ip = node.get(f"/api/v1/namespaces/{ns}/services/ray-serve-http")["spec"]["clusterIP"]
    pid = cluster.pod_sandboxes()[node.pod(ns, "gcs-record")["status"]["podIP"]]

    def answer():
        out = subprocess.run(["nsenter", f"--target={pid}", "--net", "python3", "-c", GET, ip],
                             capture_output=True, text=True, timeout=90)
        if out.returncode != 0:
            assert "Connection refused" in out.stderr, out.stderr
            return None
        return json.loads(out.stdout)
    return node.wait("the Service's answer", answer, 120, interval=1)


def test_lws_serve_leader_is_ready_only_while_its_group_is_whole(node, restricted_namespace, lws):
    """The shipped manifest: the leader NotReady until the record shows all 3 nodes ALIVE, the
    Service then answers from the whole cluster; a worker deleted -> the group made again, the new
    leader Ready only once its new cluster is whole (timed). Before RAYBOOT_SIDECAR_READINESS the
    leader was Ready as soon as its GCS served, with no worker joined."""
    ns = restricted_namespace
    t0 = time.time()
    create(node, ns)
    leader = Leader(node, ns)
    first_uid, _ = leader.wait("the leader Ready", True)
    rec = record(node, ns)
    t_whole = whole_since(rec)
    t_ready = assert_ready_only_when_whole(leader, rec, first_uid)
    assert t_whole and t_whole <= t_ready, (t_whole, t_ready, rec)
    answer = service_answer(node, ns)
    assert answer == {"squares": json.loads(SQUARES), "nodes": SIZE}, answer

    t_delete = time.time()
    node.delete(f"/api/v1/namespaces/{ns}/pods/{LEADER}-1")
    second_uid, _ = leader.wait("the new leader Ready", True, other_than=first_uid)
    t_back = time.time()
    rec = record(node, ns)
    t_whole2 = whole_since(rec, t_delete)
    t_ready2 = assert_ready_only_when_whole(leader, rec, second_uid, t_delete, t_delete)
    assert t_whole2 and t_whole2 <= t_ready2, (t_whole2, t_ready2, rec)
    assert service_answer(node, ns)["nodes"] == SIZE
    print(f"LWS serving: leader Ready {t_ready - t0:.1f} s after creation, {t_ready - t_whole:.1f} s after the "
          f"GCS had all {SIZE} nodes ALIVE; a worker deleted -> the new group whole {t_whole2 - t_delete:.1f} s, "
          f"its leader Ready {t_ready2 - t_delete:.1f} s after the delete (seen {t_back - t_delete:.1f} s)")


def leader_ready_and_no_restart(d):
    """startupPolicy LeaderReady with the readiness the manifest names for it, and restartPolicy
    None: a worker lost is replaced alone, under the same leader."""
    if d["kind"] != "LeaderWorkerSet":
        return
    d["spec"]["startupPolicy"] = "LeaderReady"
    lwt = d["spec"]["leaderWorkerTemplate"]
    lwt["restartPolicy"] = "None"
    (sidecar,) = lwt["leaderTemplate"]["spec"]["initContainers"]
    (var,) = [e for e in sidecar["env"] if e["name"] == "RAYBOOT_SIDECAR_READINESS"]
    var["value"] = "cluster-leader-ready"


def test_lws_serve_with_leader_ready_forms_and_a_lost_worker_makes_the_leader_not_ready(
        node, restricted_namespace, lws):
    """startupPolicy LeaderReady: the workers are made (the leader Ready while none has joined),
    the group whole, the leader Ready; then (restartPolicy None) a worker deleted -> the same
    leader NotReady while the record has fewer than 3 nodes ALIVE, Ready again once the
    replacement is ALIVE (timed). Before, the leader stayed Ready through the loss."""
    ns = restricted_namespace
    t0 = time.time()
    create(node, ns, leader_ready_and_no_restart)
    leader = Leader(node, ns)

    def whole_and_ready():
        got = leader.look()
        return got if got and got[1] and whole_since(record(node, ns)) else None
    try:
        uid, _ = node.wait("the group whole and its leader Ready", whole_and_ready, 420, interval=0.5)
    except TimeoutError as e:
        raise AssertionError(f"{e}\n{pod_logs(node, ns)}") from None
    t_whole = whole_since(record(node, ns))
    # The workers' StatefulSet, which LeaderReady makes only once the leader is Ready.
    assert node.get(f"/apis/apps/v1/namespaces/{ns}/statefulsets/{LEADER}")["spec"]["replicas"] == SIZE - 1

    t_delete = time.time()
    node.delete(f"/api/v1/namespaces/{ns}/pods/{LEADER}-1")
    _, t_not_ready = leader.wait("the leader NotReady", False, uid=uid, timeout=120)
    rec = record(node, ns)
    assert len(alive(rec, t_not_ready)) < SIZE, rec
    _, t_again = leader.wait("the leader Ready again", True, uid=uid)
    rec = record(node, ns)
    assert_ready_only_when_whole(leader, rec, uid, after=t_not_ready)
    assert len(alive(rec, t_again)) >= SIZE, rec
    print(f"LWS serving, LeaderReady: group whole {t_whole - t0:.1f} s after creation; a worker deleted -> leader "
          f"NotReady {t_not_ready - t_delete:.1f} s, Ready again {t_again - t_delete:.1f} s after the delete")


# GET the sidecar's /readyz on 127.0.0.1 in the leader's network namespace: (status, body).
READYZ = """
import json, urllib.error, urllib.request
try:
    r = urllib.request.urlopen("http://127.0.0.1:8077/readyz", timeout=10)
    print(json.dumps([r.status, r.read().decode()]))
except urllib.error.HTTPError as e:
    print(json.dumps([e.code, e.read().decode()]))
"""


def test_lws_serve_cluster_readiness_alone_deadlocks_leader_ready_and_says_what_to_set(
        node, restricted_namespace, lws):
    """Why cluster-leader-ready exists: with startupPolicy LeaderReady and `cluster`, LeaderWorkerSet
    makes no worker while the leader is NotReady, and the leader waits for its workers. The
    leader's /readyz names the variable to set."""
    ns = restricted_namespace

    def leader_ready_only(d):
        if d["kind"] == "LeaderWorkerSet":
            d["spec"]["startupPolicy"] = "LeaderReady"
    create(node, ns, leader_ready_only)
    leader = node.wait("the leader Running", lambda: (lambda p: p if p["status"].get("podIP") and
                                                      p["status"].get("phase") == "Running" else None)(
        node.pod(ns, LEADER)), 180, interval=0.5)
    pid = cluster.pod_sandboxes()[leader["status"]["podIP"]]

    def says_what_to_set():
        out = subprocess.run(["nsenter", f"--target={pid}", "--net", "python3", "-c", READYZ],
                             capture_output=True, text=True, timeout=30)
        got = json.loads(out.stdout) if out.returncode == 0 else None
        # Once the head's own node is ALIVE (its GCS serves a moment before).
        return got if got and "set RAYBOOT_SIDECAR_READINESS=cluster-leader-ready" in got[1] and \
            "head ALIVE" in got[1] else None
    status, body = node.wait("the leader's /readyz naming cluster-leader-ready", says_what_to_set, 120, interval=1)
    assert status == 503 and "1 of the cluster's 3 nodes ALIVE" in body, body
    time.sleep(20)  # LeaderWorkerSet had its chances: the leader's every change reconciles it
    assert not node.exists(f"/apis/apps/v1/namespaces/{ns}/statefulsets/{LEADER}")
    assert [p["metadata"]["name"] for p in node.pods(ns, "leaderworkerset.sigs.k8s.io/name=ray-serve")] == [LEADER]
    assert not Leader(node, ns).look()[1]
