"""Every shipped job's NetworkPolicy, enforced by a real enforcer (kube-router's firewall,
tests/node/netpol.py) on the real node: a stranger pod's connections to Ray's ports (the GCS 6379,
the dashboard and its Jobs API 8265, rayboot's rendezvous 8079, the Ray client 10001) are
refused, while the job's own pods reach the same ports at the same moment and the kubelet's
probes keep every pod Ready. Two strangers: a pod in the job's own namespace without the job's
labels, and a pod in another namespace. Where the job keeps its GCS in Redis (the `-gcs-ft`
variants, with k8s/redis/redis.yaml), Redis is attacked too: refused to both, open to the head.

Each job runs as test_shipped_manifests.py runs it (the same two changes), but its program holds
the cluster up (it sleeps) instead of computing squares, so that there is a cluster to attack; the
namespace's deletion ends it. Without the enforcer the same checks fail: every stranger connects."""
import json
import pathlib
import subprocess
import time
import uuid

import pytest
import yaml

import cluster
import netpol
from test_gcs_ft_on_node import create_redis
from test_shipped_manifests import (
    RAY_IMAGES,
    _pod_specs,
    apply,
    apply_rbac_if_used,
    for_this_node,
    load,
    pod_logs,
    ships_program,
    with_program,
)

REPO = pathlib.Path(__file__).resolve().parents[2]
PORTS = {6379: "GCS", 8265: "dashboard / Jobs API", 8079: "rendezvous", 10001: "Ray client"}
# What every Ray head serves; the rendezvous only where rayboot runs the head.
HEAD_PORTS = {6379, 8265, 10001}
# Every shipped manifest that runs a Ray cluster, and the controller that makes its pods (None:
# Kubernetes' own Job controller).
SHIPPED = {
    "indexed-job/ray-cluster.yaml": None,
    "indexed-job/ray-cluster-gcs-ft.yaml": None,
    "indexed-job/ray-cluster-tls.yaml": None,
    "jobset/ray-cluster.yaml": "jobset",
    "lws/ray-cluster.yaml": "lws",
    "lws/ray-serve.yaml": "lws",
    "kuberay/ray-cluster.yaml": "kuberay",
    "volcano/ray-cluster.yaml": "volcano",
    "volcano/ray-cluster-gcs-ft.yaml": "volcano",
    "volcano/ray-cluster-tls.yaml": "volcano",
    "volcano/ray-plugin-compatible.yaml": "volcano",
    "volcano/ray-submitter.yaml": "volcano",
    "volcano/sidecar-only.yaml": "volcano",
    "volcano/stock-ray-image.yaml": "volcano",
}
STRANGER_LABEL = "rayboot.test/stranger"
REDIS_LABEL = ("app.kubernetes.io/name", "ray-redis")   # k8s/redis/redis.yaml's pod
FT_HEAD_LABEL = "rayboot.io/gcs-ft-head"                 # the pods its NetworkPolicy admits
HOLD = "import time\nprint('holding the cluster up for the NetworkPolicy test', flush=True)\ntime.sleep(900)\n"
# Opens a TCP connection to each (address, port) in argv[1] (JSON) at once and prints what came
# of each: open, refused, timeout or the error. Run by the machine's python3 inside a pod's
# network namespace (nsenter --net): the packets are the pod's.
PROBE = """
import concurrent.futures, json, socket, sys
def one(target):
    s = socket.socket()
    s.settimeout(3)
    try:
        s.connect(tuple(target))
        return "open"
    except ConnectionRefusedError:
        return "refused"
    except socket.timeout:
        return "timeout"
    except OSError as e:
        return e.strerror or str(e)
    finally:
        s.close()
targets = json.loads(sys.argv[1])
with concurrent.futures.ThreadPoolExecutor(len(targets)) as pool:
    print(json.dumps(list(pool.map(one, targets))))
"""


def test_every_shipped_cluster_has_a_policy_and_is_checked_here():
    """The list above is every manifest under k8s/ with Ray pods (a Ray image), and each has its
    NetworkPolicy."""
    with_pods, with_policy = set(), set()
    for path in sorted((REPO / "k8s").glob("*/*.yaml")):
        rel = str(path.relative_to(REPO / "k8s"))
        docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
        if any(c.get("image") in RAY_IMAGES for d in docs for spec in _pod_specs(d)
               for c in spec.get("containers", []) + spec.get("initContainers", [])):
            with_pods.add(rel)
        if any(d.get("kind") == "NetworkPolicy" for d in docs):
            with_policy.add(rel)
    assert with_pods == set(SHIPPED), with_pods ^ set(SHIPPED)
    assert with_pods <= with_policy, with_pods - with_policy   # (Redis' manifest has one too)


@pytest.fixture(scope="module")
def enforcer(node):
    netpol.start(node)
    try:
        yield netpol
    finally:
        netpol.stop()


def stranger_pod(node, namespace, name):
    """A pod of no job: Debian, sleeping, restricted (it may live in a restricted namespace)."""
    node.create({"apiVersion": "v1", "kind": "Pod",
                 "metadata": {"name": name, "namespace": namespace, "labels": {STRANGER_LABEL: "1"}},
                 "spec": {"terminationGracePeriodSeconds": 0, "automountServiceAccountToken": False,
                          "securityContext": {"runAsNonRoot": True, "runAsUser": 65534,
                                              "seccompProfile": {"type": "RuntimeDefault"}},
                          "containers": [{"name": "c", "image": cluster.IMAGE_NAMES["debian"],
                                          "imagePullPolicy": "Never", "command": ["sleep", "infinity"],
                                          "securityContext": {"allowPrivilegeEscalation": False,
                                                              "capabilities": {"drop": ["ALL"]}}}]}})
    node.wait_pod_ready(namespace, name, 120)
    return node.pod(namespace, name)


@pytest.fixture(scope="module")
def outsider(node, enforcer):
    """The stranger in a namespace of its own."""
    ns = f"netpol-outsider-{uuid.uuid4().hex[:5]}"
    node.create_namespace(ns)
    try:
        yield stranger_pod(node, ns, "outsider")
    finally:
        node.delete_namespace(ns, timeout=120)


def probe(pid, targets):
    """What a connection from the network namespace of PID to each (ip, port) comes to."""
    out = subprocess.run(["nsenter", f"--target={pid}", "--net", "python3", "-c", PROBE, json.dumps(targets)],
                         capture_output=True, text=True, timeout=30, check=True).stdout
    return dict(zip(map(tuple, targets), json.loads(out), strict=True))


def expected_pods(docs):
    count = 0
    for d in docs:
        if d["kind"] == "Job" and d["apiVersion"] == "batch/v1":
            count += d["spec"].get("parallelism", 1)
        elif d["kind"] == "Job":
            count += sum(t.get("replicas", 1) for t in d["spec"]["tasks"])
        elif d["kind"] == "LeaderWorkerSet":
            count += d["spec"].get("replicas", 1) * d["spec"]["leaderWorkerTemplate"]["size"]
        elif d["kind"] == "JobSet":
            count += sum(r.get("replicas", 1) * r["template"]["spec"].get("parallelism", 1)
                         for r in d["spec"]["replicatedJobs"])
        elif d["kind"] == "RayCluster":
            count += 1 + sum(g.get("replicas", 1) for g in d["spec"]["workerGroupSpecs"])
    return count


def job_pods_ready(node, namespace, count):
    def ready():
        pods = [p for p in node.pods(namespace) if STRANGER_LABEL not in p["metadata"].get("labels", {})
                and p["metadata"].get("labels", {}).get(REDIS_LABEL[0]) != REDIS_LABEL[1]
                and not p["metadata"].get("deletionTimestamp")]
        ok = [p for p in pods if p["status"].get("phase") == "Running" and p["status"].get("podIP") and
              any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions", []))]
        return ok if len(ok) >= count else None
    try:
        return node.wait(f"{count} job pods Ready", ready, 300, interval=1)
    except TimeoutError as e:
        raise AssertionError(f"{e}\n{pod_logs(node, namespace)}") from None


def members_view(pods, pids):
    """What each job pod reaches of the others' Ray ports (each target from another member), once
    the head serves the GCS, the dashboard and the Ray client (they start in that order, the last
    seconds after the GCS) and two looks agree (the enforcer's ipsets follow pods' events)."""
    ips = [p["status"]["podIP"] for p in pods]
    last = None
    deadline = time.monotonic() + 120
    while True:
        seen = {}
        for i, ip in enumerate(ips):
            member = ips[(i + 1) % len(ips)]
            seen.update(probe(pids[member], [[ip, port] for port in PORTS]))
        served = {port for (_, port), r in seen.items() if r == "open"}
        if seen == last and HEAD_PORTS <= served:
            return seen
        if time.monotonic() > deadline:
            raise AssertionError(f"the job's own pods never reached {sorted(HEAD_PORTS)} on one view: {seen}")
        last = seen
        time.sleep(1)


@pytest.mark.parametrize("manifest", sorted(SHIPPED))
def test_a_stranger_is_refused_the_jobs_ports_and_its_own_pods_are_not(
        node, restricted_namespace, enforcer, outsider, manifest, request):
    ns = restricted_namespace
    if SHIPPED[manifest]:
        request.getfixturevalue(SHIPPED[manifest])
    if "-tls" in manifest:
        request.getfixturevalue("ca_secret")  # the CA's Secret in this namespace (docs/tls.md)
    try:
        attack(node, ns, enforcer, outsider, manifest)
    finally:
        # Nothing here waits on a graceful end: the namespace goes, its pods at once.
        node.delete_unless_gone(f"/api/v1/namespaces/{ns}")
        node.delete(f"/api/v1/namespaces/{ns}/pods", {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0})


def attack(node, ns, enforcer, outsider, manifest):
    insider = stranger_pod(node, ns, "stranger")
    redis = None
    if "gcs-ft" in manifest:
        create_redis(node, ns)
        (redis,) = node.pods(ns, f"{REDIS_LABEL[0]}={REDIS_LABEL[1]}")
    docs = [for_this_node(d, ns) for d in load(manifest)]
    apply_rbac_if_used(node, ns, docs)
    # Where the manifest runs no program of its own (sidecar-only, KubeRay) its cluster stays up.
    apply(node, ns, with_program(docs, HOLD) if ships_program(docs) else docs)
    pods = job_pods_ready(node, ns, expected_pods(docs))
    names = [p["metadata"]["name"] for p in pods]
    node.wait("kube-router's firewall on every job pod", lambda: all(enforcer.pod_enforced(ns, n) for n in names),
              120, interval=1)
    pids = cluster.pod_sandboxes()
    members = members_view(pods, pids)
    opened = sorted(t for t, r in members.items() if r == "open")
    open_ports = {port for _, port in opened}

    if redis:
        redis_at = [redis["status"]["podIP"], 6379]
        # The head is the pod serving the GCS; Redis' policy admits it by its label (an Indexed
        # Job labels every pod so, as its pods share one template).
        (head_ip,) = {ip for (ip, port), r in members.items() if port == 6379 and r == "open"}
        (head,) = [p for p in pods if p["status"]["podIP"] == head_ip]
        assert head["metadata"]["labels"].get(FT_HEAD_LABEL) == "true", head["metadata"]["labels"]
        assert probe(pids[head_ip], [redis_at]) == {tuple(redis_at): "open"}
        opened.append(tuple(redis_at))
    def what(ip, port):
        return f"Redis {port}" if redis and ip == redis["status"]["podIP"] else f"{PORTS[port]} {port}"
    for who in (insider, outsider):
        pid = pids[who["status"]["podIP"]]
        # The stranger's network works: it reaches what no policy covers (the API server).
        assert probe(pid, [[cluster.NODE_IP, cluster.API_PORT]]) == {(cluster.NODE_IP, cluster.API_PORT): "open"}
        got = probe(pid, [list(t) for t in opened])
        let_in = {t: r for t, r in got.items() if r == "open"}
        assert not let_in, f"{who['metadata']['namespace']}/{who['metadata']['name']} reached {let_in}"
        print(f"{manifest}: {who['metadata']['name']} refused "
              f"{', '.join(f'{what(ip, p)} ({r})' for (ip, p), r in sorted(got.items(), key=lambda x: x[0][1]))}")
    print(f"{manifest}: the job's pods reach {sorted(open_ports)}; all {len(pods)} pods Ready through their probes")
