"""rayboot-sidecar as a black box against a fake GCS and a local HTTPS "API server" with a CA made
here: readiness, the drain on its loopback port through `rayboot-sidecar drain` (idempotent,
its deadline the sidecar's own whatever a caller asks, retried after a failure, forgotten when no
deletion follows it), never on the probes port, the SIGTERM drain, the disruption reason read over real TLS, and bad requests that must not disturb a drain
in progress; the drain's guard (with API access a /drain drains only a Pod that is going, without
it any, said at start) and what the guard's read adds to a drain. The sidecar runs as
tests/contract/sidecars.py starts it."""
import http.server
import json
import os
import pathlib
import re
import socket
import ssl
import subprocess
import threading
import time

import pytest

from fake_gcs import ALL_NODES, DRAIN, Node, parse
from procs import children, eventually
from sidecars import SIDECAR_NODE_IP as NODE_IP

NODE_ID = bytes([7]) * 28
SA_DIR = "var/run/secrets/kubernetes.io/serviceaccount"


@pytest.fixture
def worker_node(gcs):
    node = Node(NODE_IP, node_id=NODE_ID)
    gcs.nodes.append(node)
    return node


def drain_requests(gcs):
    with gcs.lock:
        return [parse(req) for method, req in gcs.calls if method == DRAIN]


def test_readyz_tracks_the_node(sidecar, gcs, worker_node):
    s = sidecar()
    assert s.get("/healthz") == (200, "ok\n")
    eventually(lambda: s.get("/readyz")[0] == 200)
    assert NODE_IP in s.get("/readyz")[1]
    # The readiness look asks for this node only (node_selectors.node_name: its pod IP, Ray's own
    # default name), not the cluster.
    with gcs.lock:
        looks = [parse(req) for method, req in gcs.calls if method == ALL_NODES]
    assert parse(looks[-1][2][0]) == {2: [NODE_IP.encode()]}
    worker_node.alive = False
    code, body = eventually(lambda: (lambda r: r if r[0] == 503 else None)(s.get("/readyz")))
    assert "no ALIVE node named 10.9.9.9" in body
    assert "rayboot_sidecar_ready 0" in s.get("/metrics")[1]


def test_without_a_pod_ip_the_node_is_found_by_hostname(sidecar, gcs, tmp_path):
    """Outside Kubernetes (a VM, docker run) nothing gives the pod IP: rayboot names the node by
    the hostname, and the sidecar finds it by that name, whatever address Ray registered."""
    gcs.nodes.append(Node("192.168.50.4", node_id=NODE_ID, name="ray-job-worker-1"))
    s = sidecar({"RAYBOOT_POD_IP": ""})
    assert "node ray-job-worker-1" in s.stderr
    eventually(lambda: s.get("/readyz")[0] == 200)
    assert "node ray-job-worker-1 is ALIVE" in s.get("/readyz")[1]
    code, answer, err = s.drain("--deadline=5")
    assert code == 0 and answer["outcome"] == "left" and answer["node_id"] == NODE_ID.hex(), err


def test_a_gcs_that_ignores_the_selector_does_not_misdirect_the_drain(sidecar, gcs):
    """Every node comes back, one at this pod's address under another name first: only the node
    named as this pod's is drained."""
    gcs.honour_selector = False
    gcs.nodes.append(Node(NODE_IP, node_id=b"\x66" * 28, name="someone-else"))
    gcs.nodes.append(Node("10.1.1.1", node_id=NODE_ID, name=NODE_IP))
    s = sidecar()
    code, answer, err = s.drain("--deadline=5")
    assert code == 0 and answer["node_id"] == NODE_ID.hex(), err
    (req,) = drain_requests(gcs)
    assert req[1] == [NODE_ID]


@pytest.mark.parametrize("version", ["2.40.0", "2.30.0", "2.10.0", None])  # 2.10: the oldest promised
def test_readyz_and_drain_speak_the_gcs_ray_version(sidecar, gcs, worker_node, version):
    """The sidecar asks the GCS's Ray version once before any node lookup and then uses the
    request form that version reads: on 2.36-2.48 the 2.49 form's state_filter would be read as
    `limit: 0` and the node never found, so the pod never Ready."""
    from fake_gcs import CHECK_ALIVE
    gcs.ray_version = version
    gcs.nodes.append(Node("10.0.0.9", node_id=b"\x43" * 28))
    s = sidecar()
    eventually(lambda: s.get("/readyz")[0] == 200)
    code, answer, err = s.drain("--deadline=5")
    assert code == 0 and answer["node_id"] == NODE_ID.hex(), err
    methods = gcs.methods()
    # Once, before the first lookup; a GCS that did not say is asked again only every 10 s.
    assert methods.count(CHECK_ALIVE) == 1 and methods.index(CHECK_ALIVE) < methods.index(ALL_NODES), methods
    if version:
        assert f"runs Ray {version}" in s.stderr, s.stderr
    else:
        assert "could not read the Ray version" in s.stderr, s.stderr
    with gcs.lock:
        looks = [parse(req) for method, req in gcs.calls if method == ALL_NODES]
    if version == "2.40.0":
        assert all(3 not in look and parse(look[4][0])[3] == [NODE_IP.encode()] for look in looks), looks
    elif version in ("2.30.0", "2.10.0"):
        assert all(look == {} for look in looks), looks


def test_head_readyz_follows_gcs_health(sidecar, gcs):
    s = sidecar(role="head")
    eventually(lambda: s.get("/readyz")[0] == 200)
    assert "rayboot_sidecar_ready 1" in s.get("/metrics")[1]
    gcs.serving = False
    code, body = eventually(lambda: (lambda r: r if r[0] == 503 else None)(s.get("/readyz")))
    assert "NOT_SERVING" in body


def readyz_after_a_look(s, gcs):
    """/readyz once a look begun after now has been answered: two more GetAllNodeInfo calls."""
    with gcs.lock:
        seen = sum(1 for method, _ in gcs.calls if method == ALL_NODES)
    eventually(lambda: sum(1 for method, _ in list(gcs.calls) if method == ALL_NODES) >= seen + 2)
    return s.get("/readyz")


def cluster_head(sidecar, gcs, readiness, workers=2):
    """A head sidecar with RAYBOOT_SIDECAR_READINESS=READINESS for a cluster of WORKERS workers,
    its own node ALIVE in the fake GCS (its first), and the worker nodes to add (not there yet)."""
    assert [n.head for n in gcs.nodes] == [True]
    nodes = [Node(f"10.9.0.{i + 2}", node_id=bytes([i + 2]) * 28) for i in range(workers)]
    s = sidecar({"RAYBOOT_SIDECAR_READINESS": readiness, "RAYBOOT_WORKERS_EXPECTED": str(workers)}, role="head")
    return s, nodes


def test_cluster_readiness_is_ready_only_while_every_node_is_alive(sidecar, gcs):
    """RAYBOOT_SIDECAR_READINESS=cluster (k8s/lws/ray-serve.yaml): the head is Ready only with
    every node of its cluster ALIVE in its GCS, NotReady again when one goes, Ready when it is back.
    Before it (the GCS SERVING was enough) the head was Ready alone."""
    s, workers = cluster_head(sidecar, gcs, "cluster")
    code, body = readyz_after_a_look(s, gcs)
    assert code == 503 and "1 of the cluster's 3 nodes ALIVE" in body, body
    assert "startupPolicy LeaderReady" in body, body  # no worker yet: the hint for LeaderReady
    gcs.nodes.append(workers[0])
    code, body = readyz_after_a_look(s, gcs)
    assert code == 503 and "2 of the cluster's 3 nodes ALIVE" in body and "LeaderReady" not in body, body
    gcs.nodes.append(workers[1])
    code, body = eventually(lambda: (lambda r: r if r[0] == 200 else None)(s.get("/readyz")))
    assert "all 3 nodes of the cluster are ALIVE" in body, body
    assert "rayboot_sidecar_ready 1" in s.get("/metrics")[1]
    workers[0].alive = False  # a worker lost
    code, body = eventually(lambda: (lambda r: r if r[0] == 503 else None)(s.get("/readyz")))
    assert "2 of the cluster's 3 nodes ALIVE" in body, body
    assert "not ready any more: 2 of the cluster's 3 nodes ALIVE" in s.stderr, s.stderr
    workers[0].alive = True
    eventually(lambda: s.get("/readyz")[0] == 200)


def test_cluster_readiness_needs_the_head_node_alive(sidecar, gcs):
    """Workers ALIVE but not the head's own node: not whole."""
    s, workers = cluster_head(sidecar, gcs, "cluster", workers=1)
    gcs.nodes.append(workers[0])
    eventually(lambda: s.get("/readyz")[0] == 200)
    gcs.nodes[0].alive = False
    code, body = eventually(lambda: (lambda r: r if r[0] == 503 else None)(s.get("/readyz")))
    assert "head not ALIVE" in body, body


def test_leader_ready_readiness_is_ready_until_the_first_worker_then_whole_only(sidecar, gcs):
    """RAYBOOT_SIDECAR_READINESS=cluster-leader-ready: LeaderWorkerSet's LeaderReady makes the
    workers only once the leader is Ready, so the head is Ready while no worker has joined; from the
    first worker on only a whole cluster is, even when every worker has gone again."""
    s, workers = cluster_head(sidecar, gcs, "cluster-leader-ready")
    code, body = eventually(lambda: (lambda r: r if r[0] == 200 else None)(s.get("/readyz")))
    assert "no worker has joined" in body, body
    gcs.nodes.append(workers[0])
    code, body = eventually(lambda: (lambda r: r if r[0] == 503 else None)(s.get("/readyz")))
    assert "2 of the cluster's 3 nodes ALIVE" in body, body
    gcs.nodes.append(workers[1])
    eventually(lambda: s.get("/readyz")[0] == 200)
    for w in workers:
        w.alive = False
    code, body = eventually(lambda: (lambda r: r if r[0] == 503 else None)(s.get("/readyz")))
    assert "1 of the cluster's 3 nodes ALIVE" in body, body
    code, body = readyz_after_a_look(s, gcs)
    assert code == 503, body


def test_cluster_readiness_leaves_a_worker_as_it_was(sidecar, gcs, worker_node):
    """A worker's readiness is its own node ALIVE whatever the variable says: one look, for it."""
    s = sidecar({"RAYBOOT_SIDECAR_READINESS": "cluster"})
    eventually(lambda: s.get("/readyz")[0] == 200)
    with gcs.lock:
        looks = [parse(req) for method, req in gcs.calls if method == ALL_NODES]
    assert parse(looks[-1][2][0]) == {2: [NODE_IP.encode()]}


def test_prestop_drain_then_sigterm(sidecar, gcs, worker_node, tmp_path):
    s = sidecar()
    t0 = time.monotonic()
    code, answer, err = s.drain()
    assert code == 0, err
    assert answer["accepted"] is True and answer["outcome"] == "left"
    assert answer["node_id"] == NODE_ID.hex()
    assert answer["trigger"] == "preStop" and answer["reason"] == "reason unknown"
    assert 0 <= answer["drained_in_ms"] <= (time.monotonic() - t0) * 1000 + 50
    (req,) = drain_requests(gcs)
    assert req[1] == [NODE_ID] and req[2] == [2]  # PREEMPTION
    assert b"preStop" in req[3][0] and b"ml/ray-job-worker-1" in req[3][0]
    assert 5 <= req[4][0] / 1000 - time.time() <= 7.5  # the deadline given to the GCS: 10 s less 3
    assert "node drained" in (tmp_path / "termination-log").read_text()
    metrics = s.get("/metrics")[1]
    assert "rayboot_sidecar_drains_started_total 1" in metrics
    assert 'rayboot_sidecar_drains_finished_total{outcome="left"} 1' in metrics
    # A later call answers at once with the same drain; SIGTERM then drains nothing more.
    assert s.drain()[:2] == (0, answer)
    assert s.terminate() == 0
    assert len(drain_requests(gcs)) == 1


def test_concurrent_drains_wait_for_the_same_one(sidecar, gcs, worker_node):
    gcs.drain_removes_node = False
    s = sidecar()
    answers = []
    threads = [threading.Thread(target=lambda: answers.append(s.drain("--deadline=8")[:2])) for _ in range(3)]
    for t in threads:
        t.start()
    eventually(lambda: drain_requests(gcs))
    time.sleep(0.5)
    # Waiting clients do not block anyone else.
    assert s.get("/healthz", timeout=2) == (200, "ok\n")
    worker_node.alive = False
    for t in threads:
        t.join(timeout=10)
    assert len(answers) == 3 and all(a == answers[0] for a in answers), answers
    code, answer = answers[0]
    assert code == 0 and answer["outcome"] == "left"
    assert len(drain_requests(gcs)) == 1


def test_drain_deadline(sidecar, gcs, worker_node, tmp_path):
    gcs.drain_removes_node = False
    s = sidecar({"RAYBOOT_GRACE_PERIOD": "5"})  # a drain of 5 - 3 s
    t0 = time.monotonic()
    code, answer, err = s.drain()
    took = time.monotonic() - t0
    assert code == 0 and answer["accepted"] is True, err
    assert answer["outcome"] == "deadline" and answer["drained_in_ms"] is None
    assert 1.9 <= took <= 4, took
    assert "not finished within its deadline" in (tmp_path / "termination-log").read_text()


@pytest.mark.parametrize("how", ["client", "stranger"])
def test_no_caller_chooses_the_drain_deadline(sidecar, gcs, worker_node, how):
    """The drain's deadline is the sidecar's own (RAYBOOT_GRACE_PERIOD less the 3 s the kubelet
    needs after the drain), for the wait and for the GCS's deadline: `--deadline=60` (what older
    manifests pass) is not sent, and a stranger's `POST /drain?deadline=1` is not read. Before,
    the first caller chose it: the stranger's DrainNode was due 1 s later, and it answered then."""
    gcs.drain_removes_node = False
    s = sidecar({"RAYBOOT_GRACE_PERIOD": "7"})
    t0, sent = time.monotonic(), time.time()
    if how == "client":
        code, answer, err = s.drain("--deadline=60")
        assert code == 0 and answer["outcome"] == "deadline", err
    else:
        code, body = s.post_drain("/drain?deadline=1")
        assert code == 200 and json.loads(body)["outcome"] == "deadline", body
    took = time.monotonic() - t0
    assert 3.9 <= took <= 6, took
    (req,) = drain_requests(gcs)
    assert 3.5 <= req[4][0] / 1000 - sent <= 5, req[4][0] / 1000 - sent  # 4 s after the request


def test_drain_of_unknown_node_is_refused_with_reason(sidecar, gcs):
    s = sidecar()
    code, answer, err = s.drain("--deadline=3")
    assert code == 1, err
    assert answer["accepted"] is False and answer["outcome"] == "failed"
    assert "no ALIVE node named 10.9.9.9" in answer["detail"]


def test_failed_drain_is_retried_and_readiness_comes_back(sidecar, gcs):
    """A drain that could not be made (the node is not in the GCS yet) leaves readiness to the
    next look, and the next /drain (or SIGTERM) drains again instead of answering the old failure."""
    s = sidecar()
    code, answer, _ = s.drain("--deadline=2")
    assert code == 1 and answer["outcome"] == "failed"
    gcs.nodes.append(Node(NODE_IP, node_id=NODE_ID))
    eventually(lambda: s.get("/readyz")[0] == 200)
    code, answer, err = s.drain("--deadline=5")
    assert code == 0 and answer["outcome"] == "left" and answer["node_id"] == NODE_ID.hex(), err
    assert len(drain_requests(gcs)) == 1
    assert "draining again (preStop): the last drain failed" in s.stderr
    assert 'rayboot_sidecar_drains_finished_total{outcome="failed"} 1' in s.get("/metrics")[1]


def test_a_node_seen_joining_is_drained_only_once_ray_start_can_have_seen_it(sidecar, gcs):
    """Ray's `ray start` looks for its own node once a second, in C++ that runs no signal handler,
    for up to 30 s; a node drained before that look saw it leaves at once, and `ray start` (PID 1
    of KubeRay's pods) then keeps the kubelet's SIGTERM waiting for the rest of the 30 s (28 s to
    gone on the node). So a node this sidecar saw join gets its DrainNode no sooner than 1.5 s
    after it was first seen ALIVE; a node ALIVE at the sidecar's first look is drained at once."""
    s = sidecar()
    eventually(lambda: "no ALIVE node named" in s.get("/readyz")[1])
    gcs.nodes.append(Node(NODE_IP, node_id=NODE_ID))
    eventually(lambda: s.get("/readyz")[0] == 200)
    seen = time.monotonic()
    code, answer, err = s.drain()
    assert code == 0 and answer["outcome"] == "left", err
    waited = time.monotonic() - seen
    assert waited >= 1.3, f"DrainNode {waited:.2f} s after the node was seen joining"
    assert answer["drained_in_ms"] >= 1300, answer
    assert "holding the drain" in s.stderr and "has just joined" in s.stderr
    assert len(drain_requests(gcs)) == 1


def test_a_joining_node_whose_ray_start_is_rayboots_is_drained_at_once(sidecar, gcs, tmp_path):
    """Where the hook's container runs rayboot as its PID 1 (the vcjob's, LWS's and JobSet's pods),
    `ray start` is rayboot's child, stopped 1 s after SIGTERM once its node is drained, whatever
    Ray's start-up is doing: the hook says so, and the drain of a node that has just joined is not
    held (held, a vcjob worker evicted 0.5 s after it joined took 2.73 s to go on the node)."""
    s = sidecar()
    eventually(lambda: "no ALIVE node named" in s.get("/readyz")[1])
    gcs.nodes.append(Node(NODE_IP, node_id=NODE_ID))
    eventually(lambda: s.get("/readyz")[0] == 200)
    seen = time.monotonic()
    code, answer, err = s.drain(pid1=tmp_path)
    assert code == 0 and answer["outcome"] == "left", err
    waited = time.monotonic() - seen
    assert waited < 1.0, f"DrainNode {waited:.2f} s after the node was seen joining"
    assert "holding the drain" not in s.stderr, s.stderr
    assert len(drain_requests(gcs)) == 1


@pytest.mark.parametrize("blocks_after", [0.4, None])
def test_a_joining_node_is_drained_once_kuberays_ray_start_has_seen_it(sidecar, gcs, tmp_path, blocks_after):
    """On KubeRay's pods PID 1 is Ray's own `ray start --block`, which opens ray_process_exit.log
    once its wait for its node is over (Ray 2.60's scripts.py) and holds it while it blocks. The
    hook, seeing a drain that would be held for a node that has just joined, watches PID 1 for as
    long as the hold and asks for the drain as soon as it holds that file: here 0.4 s in, not at the
    hold's 1.5 s (held to its end, a KubeRay worker evicted 0.5 s after it joined took 3.08 s to
    go on the node). A `ray start` that never gets there is held as before."""
    s = sidecar()
    eventually(lambda: "no ALIVE node named" in s.get("/readyz")[1])
    gcs.nodes.append(Node(NODE_IP, node_id=NODE_ID))
    eventually(lambda: s.get("/readyz")[0] == 200)
    seen = time.monotonic()
    code, answer, err = s.drain(pid1=tmp_path, pid1_name="ray", pid1_blocks_after=blocks_after)
    assert code == 0 and answer["outcome"] == "left", err
    waited = time.monotonic() - seen
    assert len(drain_requests(gcs)) == 1
    if blocks_after is None:
        # watched for the whole hold: the drain is asked as it ends
        assert waited >= 1.3, f"DrainNode {waited:.2f} s after the node was seen joining"
    else:
        assert blocks_after <= waited < 1.1, f"DrainNode {waited:.2f} s after the node was seen joining"
        assert "holding the drain" not in s.stderr, s.stderr


def test_a_node_alive_at_the_first_look_is_drained_at_once(sidecar, gcs, worker_node):
    s = sidecar()
    eventually(lambda: s.get("/readyz")[0] == 200)
    t0 = time.monotonic()
    code, answer, err = s.drain()
    assert code == 0 and answer["outcome"] == "left", err
    assert time.monotonic() - t0 < 1.0 and "holding the drain" not in s.stderr


def test_readyz_is_503_from_the_moment_a_drain_starts(sidecar, gcs, worker_node):
    gcs.drain_removes_node = False
    s = sidecar({"RAYBOOT_GRACE_PERIOD": "6"})  # a drain of 3 s, forgotten 11 s after it began
    eventually(lambda: s.get("/readyz")[0] == 200)
    waiter = threading.Thread(target=lambda: s.drain())
    waiter.start()
    code, body = eventually(lambda: (lambda r: r if r[0] == 503 else None)(s.get("/readyz")), timeout=2)
    assert "draining (preStop)" in body, body
    waiter.join(timeout=10)
    # Still draining at its deadline: the node is going, readiness does not come back (while the
    # pod may still be deleted: see test_a_drain_no_deletion_follows_is_forgotten).
    time.sleep(2.5)  # past one more readiness interval
    code, body = s.get("/readyz")
    assert code == 503 and "drained (deadline on preStop)" in body, body
    assert "rayboot_sidecar_ready 0" in s.get("/metrics")[1]
    # The GCS accepted that drain (the node is draining): a later call gets its result at once,
    # and no second DrainNode is made.
    t0 = time.monotonic()
    code, answer, _ = s.drain()
    assert code == 0 and answer["outcome"] == "deadline" and time.monotonic() - t0 < 1, answer
    assert len(drain_requests(gcs)) == 1


def test_a_drain_no_deletion_follows_is_forgotten(sidecar, gcs, worker_node):
    """A stray local caller's drain (any process of the pod, as the same UID as the preStop hook):
    once the sidecar has outlived it by the grace period and 5 s, no deletion of this pod followed
    it, so readiness comes back (the node is still ALIVE), and the real preStop, later, drains
    again instead of getting the stray drain's result at once. Before, /readyz stayed 503 for
    good and the preStop returned at once."""
    gcs.drain_removes_node = False
    s = sidecar({"RAYBOOT_GRACE_PERIOD": "4"})  # a drain of 1 s, forgotten 9 s after it began
    eventually(lambda: s.get("/readyz")[0] == 200)
    code, body = s.post_drain("/drain")
    assert code == 200 and json.loads(body)["outcome"] == "deadline", body
    assert s.get("/readyz")[0] == 503
    code, body = eventually(lambda: (lambda r: r if r[0] == 200 else None)(s.get("/readyz")), timeout=30)
    assert "ALIVE" in body, body
    assert "was not followed by this pod's deletion" in s.stderr
    assert "rayboot_sidecar_drains_forgotten_total 1" in s.get("/metrics")[1]
    code, answer, err = s.drain("--deadline=25")
    assert code == 0 and answer["outcome"] == "deadline", err
    assert len(drain_requests(gcs)) == 2


def test_what_the_hook_said_of_ray_start_is_forgotten_with_its_drain(sidecar, gcs, tmp_path):
    """`X-Rayboot-Ray-Start: blocking` says where a `ray start` was when the drain was asked: a drain
    no deletion followed is forgotten, the pod lives on, and a Ray that starts again in it (its node
    gone, then ALIVE again) has its next drain held as any node that has just joined."""
    gcs.drain_removes_node = False
    s = sidecar({"RAYBOOT_GRACE_PERIOD": "4"})  # a drain of 1 s, forgotten 9 s after it began
    eventually(lambda: "no ALIVE node named" in s.get("/readyz")[1])
    gcs.nodes.append(Node(NODE_IP, node_id=NODE_ID))
    eventually(lambda: s.get("/readyz")[0] == 200)
    code, answer, err = s.drain(pid1=tmp_path, pid1_name="ray", pid1_blocks_after=0)
    assert answer and answer["outcome"] == "deadline", err
    assert "holding the drain" not in s.stderr
    eventually(lambda: "was not followed by this pod's deletion" in s.stderr, timeout=30)
    with gcs.lock:
        gcs.nodes.clear()  # Ray starts again: its node gone, then ALIVE again
    eventually(lambda: "no ALIVE node named" in s.get("/readyz")[1])
    gcs.nodes.append(Node(NODE_IP, node_id=NODE_ID))
    eventually(lambda: s.get("/readyz")[0] == 200)
    s.drain()  # held past this short grace period's budget: how it ends does not matter here
    assert "holding the drain" in s.stderr, s.stderr


@pytest.mark.parametrize("value", ["0", "x", "3601", "-1", ""])
def test_bad_deadline_flag_is_exit_2_naming_it(sidecar, gcs, value):
    """--deadline, which older manifests pass, is still checked (and never sent)."""
    s = sidecar()
    code, answer, err = s.drain(f"--deadline={value}")
    assert code == 2 and answer is None and "--deadline=" in err, err
    assert not drain_requests(gcs)


def test_sigterm_drains_when_nobody_did(sidecar, gcs, worker_node, tmp_path):
    s = sidecar()
    eventually(lambda: s.get("/readyz")[0] == 200)
    assert s.terminate() == 0
    (req,) = drain_requests(gcs)
    assert b"SIGTERM" in req[3][0]
    assert "node drained" in (tmp_path / "termination-log").read_text()
    assert "SIGTERM" in s.stderr


def test_bad_requests_do_not_disturb_a_drain(sidecar, gcs, worker_node):
    gcs.drain_removes_node = False
    s = sidecar()
    result = []
    waiter = threading.Thread(target=lambda: result.append(s.drain()))
    waiter.start()
    eventually(lambda: drain_requests(gcs))
    slow = socket.create_connection(("127.0.0.1", s.port))
    slow.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # and never finishes
    for port in (s.port, s.drain_port):
        for junk in (b"GARBAGE\r\n\r\n", b"GET /" + b"a" * 100000 + b" HTTP/1.1\r\n\r\n",
                     b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 100000 + b"\r\n\r\n",
                     b"\x00\xff" * 50 + b"\r\n\r\n"):
            # Answered with an error, dropped, or (a request line that never parses) left to the
            # connection deadline like a slow client: any of these, as long as nothing else is disturbed.
            with socket.create_connection(("127.0.0.1", port), timeout=4) as c:
                try:
                    c.sendall(junk)
                    reply = c.recv(200)
                except (ConnectionResetError, BrokenPipeError, TimeoutError):
                    reply = b""
                assert reply == b"" or re.match(rb"HTTP/1\.[01] (400|413|414|431)", reply), reply
    assert s.get("/nope")[0] == 404
    assert s.get("/healthz", method="DELETE")[0] == 405
    assert s.get("/healthz", timeout=2) == (200, "ok\n")
    worker_node.alive = False
    waiter.join(timeout=10)
    slow.close()
    assert result and result[0][0] == 0 and result[0][1]["outcome"] == "left", result


def test_configuration_errors_exit_2(sidecar_bin, pod_root):
    base = {"RAYBOOT_ROOT": str(pod_root), "HOSTNAME": "w", "RAYBOOT_ROLE": "worker",
            "RAYBOOT_HEAD_ADDRESS": "127.0.0.1:6379", "RAYBOOT_SIDECAR_PORT": "0", "RAYBOOT_SIDECAR_DRAIN_PORT": "0"}
    for env, needle in (({"RAYBOOT_SIDECAR_PORT": "99999"}, "RAYBOOT_SIDECAR_PORT"),
                        ({"RAYBOOT_SIDECAR_DRAIN_PORT": "x"}, "RAYBOOT_SIDECAR_DRAIN_PORT"),
                        ({"RAYBOOT_GRACE_PERIOD": "soon"}, "RAYBOOT_GRACE_PERIOD"),
                        ({"RAYBOOT_ROLE": "boss"}, "RAYBOOT_ROLE"),
                        ({"RAYBOOT_SIDECAR_READINESS": "whole"},
                         "RAYBOOT_SIDECAR_READINESS=whole: expected node, cluster or cluster-leader-ready"),
                        # A head that cannot count its workers could never be Ready.
                        ({"RAYBOOT_SIDECAR_READINESS": "cluster", "RAYBOOT_ROLE": "head"},
                         "RAYBOOT_SIDECAR_READINESS=cluster: this head's number of workers is not known")):
        out = subprocess.run([str(sidecar_bin)], env={**base, **env}, capture_output=True, text=True, timeout=5)
        assert out.returncode == 2 and needle in out.stderr, out.stderr
    # The probes port taken: no probes can be served, exit 2. (The drain port taken is survived:
    # test_sidecar_limits.py::test_a_taken_drain_port_leaves_the_probes_up.)
    with socket.socket() as taken:
        taken.bind(("0.0.0.0", 0))
        taken.listen()
        out = subprocess.run([str(sidecar_bin)], env={**base, "RAYBOOT_SIDECAR_PORT": str(taken.getsockname()[1])},
                             capture_output=True, text=True, timeout=5)
    assert out.returncode == 2 and "RAYBOOT_SIDECAR_PORT: could not listen on 0.0.0.0:" in out.stderr, out.stderr


def test_sidecar_prober_outside_its_seccomp_allowlist_is_reported(sidecar_bin, pod_root, gcs):
    """The sidecar's prober is confined by the same filter as rayboot's: a call outside it kills the
    prober with SIGSYS, and the sidecar exits 70 saying so instead of serving blind."""
    env = {"RAYBOOT_ROOT": str(pod_root), "HOSTNAME": "w", "RAYBOOT_ROLE": "worker",
           "RAYBOOT_HEAD_ADDRESS": f"127.0.0.1:{gcs.port}", "RAYBOOT_SIDECAR_PORT": "0",
           "RAYBOOT_SIDECAR_DRAIN_PORT": "0", "RAYBOOT_PROBER_SELFTEST": "forbidden-syscall"}
    out = subprocess.run([str(sidecar_bin)], env=env, capture_output=True, text=True, timeout=10)
    assert out.returncode == 70, out.stderr
    assert "SIGSYS" in out.stderr and "seccomp" in out.stderr, out.stderr

# --- The reason the pod ends, from a local API server over TLS ---------------------------------

def make_ca(directory: pathlib.Path, name: str, key="ec", san=True):
    """A CA and an API server certificate signed by it, with the names kubeadm gives it (EC P-256, or
    RSA 2048 as kubeadm makes them); san=False: the server's name in its CN alone, no
    subjectAltName (what Go's client and kubectl refuse)."""
    directory.mkdir(parents=True, exist_ok=True)
    ec = (["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"] if key == "ec"
          else ["-newkey", "rsa:2048", "-nodes"])
    run = lambda *a: subprocess.run(["openssl", *a], check=True, capture_output=True, cwd=directory)  # noqa: E731
    run("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "2", "-subj", f"/CN={name}")
    run("req", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj",
        "/CN=kube-apiserver" if san else "/CN=kubernetes.default.svc")
    names = "subjectAltName=DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:127.0.0.1\n"
    (directory / "ext").write_text((names if san else "") + "basicConstraints=CA:FALSE\n")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
        "-out", "server.crt", "-days", "2", "-extfile", "ext")
    return directory


class ApiServer:
    """GET /api/v1/namespaces/ml/pods/ray-job-worker-1 with a bearer token, over TLS (TLS 1.2 and
    1.3 as Python's defaults allow, or only from tls_min, or up to tls_max); each answer after `delay`
    seconds. `versions` has the TLS version of each request's connection, as the server saw it."""

    def __init__(self, certs: pathlib.Path, token: str, pod: dict, tls_max=None, tls_min=None):
        outer = self
        self.pod = pod
        self.seen = []
        self.versions = []
        self.delay = 0

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                outer.seen.append((self.path, self.headers.get("Authorization")))
                outer.versions.append(self.connection.version())
                pod_then = outer.pod  # the Pod as it was when the request came, whenever it is answered
                time.sleep(outer.delay)
                if self.headers.get("Authorization") != f"Bearer {token}":
                    body, code = b'{"kind":"Status","code":401,"reason":"Unauthorized"}', 401
                elif self.path != "/api/v1/namespaces/ml/pods/ray-job-worker-1":
                    body, code = b'{"kind":"Status","code":404}', 404
                else:
                    body, code = json.dumps(pod_then).encode(), 200
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(certs / "server.crt", certs / "server.key")
        if tls_max:  # OpenSSL 3 refuses TLS 1.0 and 1.1 at its default security level
            ctx.set_ciphers("DEFAULT:@SECLEVEL=0")
            ctx.minimum_version, ctx.maximum_version = ssl.TLSVersion.TLSv1, tls_max
        if tls_min:
            ctx.minimum_version = tls_min
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


EVICTED_POD = json.loads((pathlib.Path(__file__).parents[1] / "unit/data/pods/evicted.json").read_text())


def mount_service_account(pod_root, certs):
    sa = pod_root / SA_DIR
    sa.mkdir(parents=True)
    (sa / "token").write_text("t0ken.for.the-sidecar\n")
    (sa / "ca.crt").write_bytes((certs / "ca.crt").read_bytes())
    (sa / "namespace").write_text("ml")
    return certs


@pytest.fixture
def api_certs(tmp_path, pod_root):
    return mount_service_account(pod_root, make_ca(tmp_path / "pki", "test-kubernetes-ca"))


@pytest.fixture
def api(api_certs):
    server = ApiServer(api_certs, "t0ken.for.the-sidecar", EVICTED_POD)
    yield server
    server.close()


def api_env(port):
    return {"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": str(port),
            "RAYBOOT_POD_NAME": "ray-job-worker-1"}


def test_disruption_reason_read_over_tls(sidecar, gcs, worker_node, api, tmp_path):
    s = sidecar(api_env(api.port))
    code, answer, err = s.drain("--deadline=5")
    assert code == 0 and answer["outcome"] == "left", err
    assert answer["reason"] == "EvictionByEvictionAPI: Eviction API: evicting"
    # Read at start (is the Pod readable?), then at the ask (is it going?), which gives the reason.
    assert api.seen == [("/api/v1/namespaces/ml/pods/ray-job-worker-1", "Bearer t0ken.for.the-sidecar")] * 2
    (req,) = drain_requests(gcs)
    assert b"EvictionByEvictionAPI: Eviction API: evicting" in req[3][0]
    assert "EvictionByEvictionAPI" in (tmp_path / "termination-log").read_text()


def test_an_api_server_that_refuses_the_token_leaves_the_drain_unguarded(sidecar, gcs, worker_node, api, pod_root):
    """A token the API server refuses (401; a 403 for want of RBAC is the same) is no API access:
    the sidecar says at start that its drain port is unguarded, and drains on any ask, as before,
    with the reason unknown."""
    (pod_root / SA_DIR / "token").write_text("stale")
    s = sidecar(api_env(api.port))
    eventually(lambda: "no guard on the drain port" in s.stderr)
    assert "HTTP 401" in s.stderr and "rayboot_sidecar_drain_guarded 0" in s.get("/metrics")[1], s.stderr
    code, answer, err = s.drain("--deadline=6")
    assert code == 0 and answer["outcome"] == "left", err
    assert "HTTP 401" in answer["reason"], answer["reason"]


@pytest.mark.parametrize("fault,needle", [
    ("ca", "API server 127.0.0.1"),
    ("down", "API server 127.0.0.1"),
])
def test_an_unreadable_pod_is_not_drained_on_an_ask(sidecar, gcs, worker_node, api, pod_root, tmp_path, closed_port,
                                                    fault, needle):
    """With API access, a read that fails (a certificate of another CA, no API server) cannot show
    the pod going: the ask is refused, nothing is drained, and SIGTERM (the kubelet's, or whoever
    may signal the sidecar's UID) still drains. Failing open would let a process of the pod that
    makes the read fail (its ephemeral ports all bound, say) drain the node."""
    port = api.port
    if fault == "ca":
        other = make_ca(tmp_path / "other-pki", "someone-else")
        (pod_root / SA_DIR / "ca.crt").write_bytes((other / "ca.crt").read_bytes())
    else:
        port = closed_port
    s = sidecar(api_env(port))
    eventually(lambda: "could not read this Pod from the API server at start" in s.stderr)
    code, answer, err = s.drain("--deadline=6")
    assert code == 77 and answer["outcome"] == "refused" and needle in answer["detail"], (code, answer, err)
    assert "could not be read" in answer["detail"] and "refused to drain" in err, err
    assert not drain_requests(gcs)
    assert s.terminate() == 0
    (req,) = drain_requests(gcs)
    assert b"SIGTERM" in req[3][0]


def test_an_api_server_named_in_its_cn_alone_is_refused(sidecar, gcs, worker_node, pod_root, tmp_path):
    """Issue 40: an API server certificate that names kubernetes.default.svc only in its CN (no
    subjectAltName) was accepted, as mbedTLS 3.6 falls back to the CN, and the pod's token went to
    it; Go's client and kubectl refuse it. Now the handshake is refused before the token is sent
    (the server sees no request), with a line that says why. The Pod is then not read, so a /drain
    is refused (the drain's guard), and SIGTERM drains without the reason. On the old code the
    server got the request and its token."""
    certs = mount_service_account(pod_root, make_ca(tmp_path / "pki", "test-kubernetes-ca", san=False))
    server = ApiServer(certs, "t0ken.for.the-sidecar", EVICTED_POD)
    try:
        s = sidecar(api_env(server.port))
        code, answer, err = s.drain("--deadline=5")
        assert code == 77 and answer["outcome"] == "refused", (answer, err)
        assert server.seen == [], server.seen
        why = "names kubernetes.default.svc in its CN only, with no subjectAltName"
        assert why in answer["detail"], answer["detail"]
        assert why in s.stderr, s.stderr
        assert s.terminate() == 0
        (req,) = drain_requests(gcs)
        assert b"(SIGTERM): reason unknown (API server 127.0.0.1: its certificate names" in req[3][0], req
        assert server.seen == []
    finally:
        server.close()


@pytest.mark.parametrize("where,value,needle", [
    ("host", "127.0.0.1/api/v1/namespaces/ml/secrets/x?", "KUBERNETES_SERVICE_HOST"),
    ("host", "someone@127.0.0.1", "KUBERNETES_SERVICE_HOST"),
    ("port", "{port}/../../secrets/x", "KUBERNETES_SERVICE_PORT"),
    ("token", "t0ken.for.the-sidecar\r\nX-Injected: 1", "token"),
])
def test_api_request_is_built_from_checked_values_only(sidecar, gcs, worker_node, api, pod_root, where, value,
                                                       needle):
    """The API read's URL and header come from the environment and the token file: a value holding
    URL or header syntax is refused (the reason stays unknown, the drain still happens) and never
    reaches the API server."""
    env = api_env(api.port)
    if where == "token":
        (pod_root / SA_DIR / "token").write_text(value)
    else:
        env[f"KUBERNETES_SERVICE_{where.upper()}"] = value.format(port=api.port)
    s = sidecar(env)
    code, answer, err = s.drain("--deadline=6")
    assert code == 0 and answer["outcome"] == "left", err
    assert answer["reason"] == "reason unknown" and api.seen == [], (answer, api.seen)
    assert "the reason this pod ends is unknown" in s.stderr and needle in s.stderr, s.stderr


def speaks(certs, port, version):
    """Whether the server on port finishes a handshake with a client that offers only `version`."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(certs / "ca.crt")
    ctx.minimum_version = ctx.maximum_version = version
    with socket.create_connection(("127.0.0.1", port)) as raw:
        try:
            with ctx.wrap_socket(raw, server_hostname="kubernetes.default.svc"):
                return True
        except ssl.SSLError:
            return False


@pytest.mark.filterwarnings("ignore:ssl.TLSVersion:DeprecationWarning")
@pytest.mark.parametrize("only,key", [("TLSv1_3", "ec"), ("TLSv1_3", "rsa"), ("TLSv1_2", "ec"), ("TLSv1_2", "rsa")])
def test_an_api_server_that_speaks_one_tls_version_is_read(sidecar, gcs, worker_node, pod_root, tmp_path, only, key):
    """An API server restricted to TLS 1.3 (kube-apiserver --tls-min-version=VersionTLS13) is read
    over TLS 1.3, and one that stops at TLS 1.2 still over 1.2, with an EC or an RSA certificate
    (kubeadm's; a TLS 1.2 server signs its key exchange with RSA-PSS when the client offers it):
    the version is the one the server saw the request on."""
    certs = mount_service_account(pod_root, make_ca(tmp_path / "pki", "test-kubernetes-ca", key=key))
    version = getattr(ssl.TLSVersion, only)
    limit = {"tls_min": version} if only == "TLSv1_3" else {"tls_max": version}
    server = ApiServer(certs, "t0ken.for.the-sidecar", EVICTED_POD, **limit)
    try:
        # The control: the server speaks the one version and refuses the other.
        other = ssl.TLSVersion.TLSv1_2 if only == "TLSv1_3" else ssl.TLSVersion.TLSv1_3
        assert speaks(certs, server.port, version) and not speaks(certs, server.port, other)
        s = sidecar(api_env(server.port))
        code, answer, err = s.drain("--deadline=6")
        assert code == 0 and answer["reason"] == "EvictionByEvictionAPI: Eviction API: evicting", (answer, err)
        assert server.versions == [only.replace("_", ".")] * 2, server.versions  # at start, and at the ask
    finally:
        server.close()


@pytest.mark.filterwarnings("ignore:ssl.TLSVersion:DeprecationWarning")
def test_an_api_server_below_tls_1_2_is_refused(sidecar, gcs, worker_node, api_certs):
    """An API server (or whoever answers in its place) that speaks TLS 1.1 at most gets no request:
    the reader asks for TLS 1.2 at least, the handshake fails, the token is never sent."""
    old = ApiServer(api_certs, "t0ken.for.the-sidecar", EVICTED_POD, tls_max=ssl.TLSVersion.TLSv1_1)
    try:
        # The control: that server does speak TLS 1.1 to a client that asks for it.
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.load_verify_locations(api_certs / "ca.crt")
        ctx.set_ciphers("DEFAULT:@SECLEVEL=0")
        ctx.minimum_version = ssl.TLSVersion.TLSv1
        with socket.create_connection(("127.0.0.1", old.port)) as raw:
            with ctx.wrap_socket(raw, server_hostname="kubernetes.default.svc") as tls:
                assert tls.version() == "TLSv1.1"
        s = sidecar(api_env(old.port))
        code, answer, err = s.drain("--deadline=6")
        # Nothing read, so the pod is not known to be going: refused, and nothing drained.
        assert code == 77 and answer["outcome"] == "refused", (answer, err)
        assert "(reason unknown (API server 127.0.0.1: SSL connect error))" in answer["detail"], answer
        assert old.seen == [] and not drain_requests(gcs)
    finally:
        old.close()


def test_the_api_reader_is_confined_and_holds_nothing_of_the_sidecar(sidecar, gcs, worker_node, api):
    """The reader parses TLS from the network: while it waits for the API server's answer it runs
    under a seccomp filter, with no environment, a core limit of 0 and none of the sidecar's
    descriptors (its listening and client sockets, the prober's socket), and the reason still
    arrives."""
    api.delay = 1.5
    s = sidecar(api_env(api.port))
    eventually(lambda: "drains only while this pod is going" in s.stderr, timeout=5)  # the start-up read
    api.seen.clear()
    sidecar_pid = s.pid()
    before = set(children(sidecar_pid))
    result = []
    waiter = threading.Thread(target=lambda: result.append(s.drain("--deadline=8")))
    waiter.start()
    eventually(lambda: api.seen, timeout=5)
    (reader,) = set(children(sidecar_pid)) - before
    status = pathlib.Path(f"/proc/{reader}/status").read_text()
    assert re.search(r"^Seccomp:\s+2$", status, re.M) and re.search(r"^NoNewPrivs:\s+1$", status, re.M), status
    assert set(pathlib.Path(f"/proc/{reader}/environ").read_bytes()) <= {0}
    limits = pathlib.Path(f"/proc/{reader}/limits").read_text()
    assert re.search(r"^Max core file size\s+0\s+0\s", limits, re.M), limits  # it may write no core
    mine = {int(fd.name): os.readlink(fd) for fd in pathlib.Path(f"/proc/{reader}/fd").iterdir()}
    parents = {os.readlink(fd) for fd in pathlib.Path(f"/proc/{sidecar_pid}/fd").iterdir()}
    assert {mine.get(n) for n in (0, 1, 2)} == {"/dev/null"}, mine
    shared = {link for n, link in mine.items() if n > 2} & parents
    # Only the pipe to the parent, whose other end the parent holds.
    assert len(shared) == 1 and next(iter(shared)).startswith("pipe:"), (mine, parents)
    waiter.join(timeout=15)
    code, answer, _ = result[0]
    assert code == 0 and answer["reason"] == "EvictionByEvictionAPI: Eviction API: evicting", answer


def test_an_api_server_by_name_is_looked_up_under_the_filter(sidecar, gcs, worker_node, api):
    """KUBERNETES_SERVICE_HOST is an IP in every cluster, but a name works as before: the confined
    reader's look into /etc/hosts is answered "no such file" and it goes on to DNS (here a name no
    DNS has), instead of being killed."""
    env = dict(api_env(api.port), KUBERNETES_SERVICE_HOST="api.invalid")
    s = sidecar(env)
    code, answer, err = s.drain("--deadline=8")
    # Read, and not resolved: the pod is not known to be going, so nothing is drained.
    assert code == 77 and answer["outcome"] == "refused", (answer, err)
    assert "(reason unknown (API server api.invalid: Could not resolve" in answer["detail"], answer


# --- The drain's guard: a /drain drains only a pod that is going (sidecar/guard.c) --------------

RUNNING_POD = json.loads((pathlib.Path(__file__).parents[1] / "unit/data/pods/running.json").read_text())
STRANGER_UID = 65534


def post_as(uid, port, path="/drain"):
    """POST PATH on the loopback port as another UID, with no token (what any process of the pod
    can do): (HTTP status, body)."""
    out = subprocess.run(["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--",
                          "curl", "-sS", "-m", "30", "-X", "POST", "-w", "\n%{http_code}", f"http://127.0.0.1:{port}{path}"],
                         capture_output=True, text=True, timeout=40)
    assert out.returncode == 0, out.stderr
    body, _, code = out.stdout.rpartition("\n")
    return int(code), body


@pytest.fixture
def running_api(api_certs):
    server = ApiServer(api_certs, "t0ken.for.the-sidecar", RUNNING_POD)
    yield server
    server.close()


def test_a_drain_is_refused_while_the_pod_is_not_going(sidecar, gcs, worker_node, running_api):
    """The attack: a process of the pod (another UID, no token) POSTs /drain on 127.0.0.1:8078, once
    per grace period. Its Pod is not being deleted: each ask is refused (409, `rayboot-sidecar drain`
    exits 77), no DrainNode is sent, and the pod stays Ready. Once the Pod is being deleted, the
    preStop drains at once. Before, a single POST drained the node."""
    s = sidecar(api_env(running_api.port))
    eventually(lambda: s.get("/readyz")[0] == 200)
    for _ in range(4):
        code, body = post_as(STRANGER_UID, s.drain_port)
        assert code == 409, (code, body)
        answer = json.loads(body)
        assert answer["outcome"] == "refused" and answer["accepted"] is False, answer
        assert "this pod is not being deleted" in answer["detail"], answer
    assert not drain_requests(gcs)
    assert s.get("/readyz")[0] == 200
    assert "a drain asked on 127.0.0.1:" in s.stderr and "is refused: this pod is not being deleted" in s.stderr
    metrics = s.get("/metrics")[1]
    assert "rayboot_sidecar_drain_asks_refused_total 4" in metrics and "rayboot_sidecar_drain_guarded 1" in metrics
    code, answer, err = s.drain()
    assert code == 77 and answer["outcome"] == "refused" and "refused to drain" in err, (code, answer, err)
    running_api.pod = EVICTED_POD  # the eviction: deletionTimestamp and DisruptionTarget
    code, answer, err = s.drain()
    assert code == 0 and answer["outcome"] == "left", (answer, err)
    assert answer["reason"] == "EvictionByEvictionAPI: Eviction API: evicting"
    assert len(drain_requests(gcs)) == 1


def test_an_ask_waits_for_a_read_that_began_after_it(sidecar, gcs, worker_node, running_api):
    """A stray ask's read is under way when the pod's deletion comes, and the preStop asks: the read
    that began before the preStop cannot answer it (it may have read the Pod before the deletion);
    a read after it does, and the node is drained. A stray caller asking in a loop cannot make the
    preStop's ask be refused by a stale read."""
    s = sidecar(api_env(running_api.port))
    eventually(lambda: "drains only while this pod is going" in s.stderr)
    running_api.delay = 1.0
    stray = []
    threading.Thread(target=lambda: stray.append(s.post_drain("/drain")), daemon=True).start()
    eventually(lambda: len(running_api.seen) == 2, timeout=5)  # the stray ask's read has begun
    running_api.pod = EVICTED_POD
    code, answer, err = s.drain()
    assert code == 0 and answer["outcome"] == "left", (answer, err)
    eventually(lambda: stray, timeout=5)
    assert stray[0][0] == 200, stray  # the stray caller waited too, and got the drain's result
    assert len(drain_requests(gcs)) == 1 and len(running_api.seen) == 3


def test_a_pod_the_kubelet_ends_without_a_deletion_is_drained(sidecar, gcs, worker_node, running_api):
    """A node-pressure eviction or a node shutdown ends the pod with no deletion, only a
    DisruptionTarget condition (TerminationByKubelet): the pod is going, and is drained."""
    running_api.pod = json.loads((pathlib.Path(__file__).parents[1] / "unit/data/pods/kubelet.json").read_text())
    assert "deletionTimestamp" not in running_api.pod["metadata"]
    s = sidecar(api_env(running_api.port))
    code, answer, err = s.drain()
    assert code == 0 and answer["reason"].startswith("TerminationByKubelet"), (answer, err)


def test_without_api_access_any_ask_drains_and_the_sidecar_says_so(sidecar, gcs, worker_node):
    """No KUBERNETES_SERVICE_HOST (or no token): the sidecar cannot tell a pod that is going, so it
    drains on any ask, as before, and says at start that its drain port is unguarded."""
    s = sidecar()
    assert "no guard on the drain port: KUBERNETES_SERVICE_HOST is not set" in s.stderr, s.stderr
    assert "rayboot_sidecar_drain_guarded 0" in s.get("/metrics")[1]
    code, body = post_as(STRANGER_UID, s.drain_port)
    assert code == 200 and json.loads(body)["outcome"] == "left", body


def test_the_guard_adds_one_read_to_the_drain(sidecar, gcs, api, capsys):
    """The normal path stays fast: with the guard, a drain waits for one read of the Pod (over TLS,
    by a forked reader) before its DrainNode; without it, the drain starts at once (its reason is
    read meanwhile, or not at all). Measured from the hook's start to the DrainNode the GCS gets,
    and to the hook's end, n=5 drains each; the medians are printed, and the added time must stay
    under 1 s."""
    took = {k: [] for k in ("guarded", "unguarded")}
    to_drain = {k: [] for k in ("guarded", "unguarded")}
    for i in range(10):
        node_id = bytes([40 + i]) * 28
        gcs.nodes.append(Node(NODE_IP, node_id=node_id))
        kind = "guarded" if i % 2 == 0 else "unguarded"
        s = sidecar(api_env(api.port) if kind == "guarded" else None)
        if kind == "guarded":
            eventually(lambda s=s: "drains only while this pod is going" in s.stderr)
        eventually(lambda s=s: s.get("/readyz")[0] == 200)
        before, result = len(drain_requests(gcs)), []
        t0 = time.monotonic()
        hook = threading.Thread(target=lambda s=s, result=result: result.append(s.drain()))
        hook.start()
        while len(drain_requests(gcs)) == before and time.monotonic() - t0 < 10:
            time.sleep(0.001)
        to_drain[kind].append(time.monotonic() - t0)
        hook.join(timeout=20)
        took[kind].append(time.monotonic() - t0)
        code, answer, err = result[0]
        assert code == 0 and answer["node_id"] == node_id.hex(), (answer, err)
        s.close()
    med = {k: sorted(v)[len(v) // 2] * 1000 for k, v in to_drain.items()}
    end = {k: sorted(v)[len(v) // 2] * 1000 for k, v in took.items()}
    with capsys.disabled():
        print(f"\n[drain latency, n=5 each] hook start to DrainNode: guarded {med['guarded']:.0f} ms, unguarded "
              f"{med['unguarded']:.0f} ms, added {med['guarded'] - med['unguarded']:.0f} ms; hook start to its end: "
              f"guarded {end['guarded']:.0f} ms, unguarded {end['unguarded']:.0f} ms "
              f"({ {k: [round(x * 1000) for x in v] for k, v in to_drain.items()} })")
    assert med["guarded"] - med["unguarded"] < 1000, to_drain


def test_a_refused_ask_after_a_failed_drain_is_told_it_was_refused(sidecar, gcs, running_api):
    """A drain that failed earlier (the node was not in the GCS) is not the answer to a later ask
    the guard refuses: that one is told 409, not the old failure."""
    running_api.pod = EVICTED_POD
    s = sidecar(api_env(running_api.port))
    code, answer, err = s.drain()
    assert code == 1 and answer["outcome"] == "failed", (answer, err)
    running_api.pod = RUNNING_POD
    code, answer, err = s.drain()
    assert code == 77 and answer["outcome"] == "refused", (answer, err)
