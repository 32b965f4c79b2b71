"""A worker keeps its Ray node through what GCS fault tolerance survives, and only that (issue 29
item 5): a Ray that dies under a head still up as the same cluster is started again (a bounded
number of times), a head that comes back as the same cluster leaves Ray alone, and a node that
cannot reach any GCS for RAY_gcs_rpc_server_reconnect_timeout_s is stopped and joined again.
Real rayboot, the fake GCS and the fake `ray` (tests/contract/fake_ray.py)."""
import json
import os
import signal
import time

from fake_gcs import FakeGcs


def worker_env(gcs, **extra):
    env = {"RAYBOOT_ROLE": "worker", "RAYBOOT_HEAD_ADDRESS": f"127.0.0.1:{gcs.port}",
           "RAYBOOT_POD_IP": "127.0.0.1", "RAYBOOT_RENDEZVOUS_PORT": "0"}
    env.update(extra)
    return env


def ray_starts(tmp_path):
    log = tmp_path / "ray.log"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_ray_dying_under_its_head_is_started_again_a_bounded_number_of_times(run, gcs, tmp_path):
    """A Ray that exits at once, every time, under a head that is up: started again after 1, 2 and
    4 s, then the pod ends with Ray's code. Before, the first exit ended the pod (one start)."""
    worker = run(worker_env(gcs, FAKE_RAY_MODE="exit:1"))
    t0 = time.monotonic()
    assert worker.wait(60) == 1, worker.stderr
    took = time.monotonic() - t0
    assert len(ray_starts(tmp_path)) == 4, worker.stderr
    assert worker.stderr.count("Ray exited (1) while its head is up (same cluster): starting it again") == 3, \
        worker.stderr
    assert "after 3 starts again in a row: ending the pod" in worker.stderr, worker.stderr
    assert took >= 7, f"the restarts' delays (1 + 2 + 4 s) were not kept: {took:.1f} s"


def test_a_head_back_as_the_same_cluster_keeps_ray(run, gcs, tmp_path):
    """The head's GCS goes away and comes back on its address with the same cluster id (GCS fault
    tolerance with Redis): Ray is not stopped, and not started again."""
    worker = run(worker_env(gcs))
    worker.wait_for_log("started ray")
    gcs.stop()
    worker.wait_for_log("lost the head", timeout=10)
    again = FakeGcs(port=gcs.port)
    try:
        again.cluster_id = gcs.cluster_id
        worker.wait_for_log("as the same cluster: Ray keeps running", timeout=10)
        time.sleep(0.5)
        assert worker.proc.poll() is None, worker.stderr
        assert len(ray_starts(tmp_path)) == 1, worker.stderr
    finally:
        again.stop()


def test_a_node_that_cannot_reach_any_gcs_is_stopped_after_the_reconnect_timeout(run, gcs, tmp_path):
    """The head's GCS is gone and Ray (which here stays up, as a stuck raylet would) is left
    Running: after RAY_gcs_rpc_server_reconnect_timeout_s rayboot says so and stops it, waits
    RAYBOOT_HEAD_LOSS_TIMEOUT for the head, then ends the pod. Before, the worker waited for ever."""
    worker = run(worker_env(gcs, RAY_gcs_rpc_server_reconnect_timeout_s="3", RAYBOOT_HEAD_LOSS_TIMEOUT="1"))
    worker.wait_for_log("started ray")
    time.sleep(0.3)  # its cluster id is noted
    gcs.stop()
    t0 = time.monotonic()
    assert worker.wait(30) == 1, worker.stderr
    took = time.monotonic() - t0
    assert "has not answered for" in worker.stderr and "RAY_gcs_rpc_server_reconnect_timeout_s=3" in worker.stderr, \
        worker.stderr
    assert "the head did not come back" in worker.stderr, worker.stderr
    assert 3 <= took < 15, f"{took:.1f} s"
    assert len(ray_starts(tmp_path)) == 1, worker.stderr


def test_a_bad_reconnect_timeout_exits_2_naming_it(run):
    proc = run({"RAYBOOT_ROLE": "worker", "RAYBOOT_HEAD_ADDRESS": "127.0.0.1:1",
                "RAY_gcs_rpc_server_reconnect_timeout_s": "10s"}, ["plan"])
    assert proc.wait(10) == 2, proc.stderr
    assert "RAY_gcs_rpc_server_reconnect_timeout_s=10s" in proc.stderr, proc.stderr


def drained(gcs, ended_ms):
    """The GCS's record of this worker's node (named by its RAYBOOT_POD_IP) ended by a drain."""
    from fake_gcs import Node
    node = Node("127.0.0.1", node_id=os.urandom(28), name="127.0.0.1")
    node.alive, node.death, node.end_ms = False, 3, ended_ms  # AUTOSCALER_DRAIN_PREEMPTED
    gcs.nodes.append(node)


def end_ray(tmp_path, starts, drained_in=None):
    """Ends the latest Ray once it is the STARTS-th (fake_ray exits 1 on SIGTERM, as `ray start
    --block` does when its raylet left); with DRAINED_IN, a GCS, its node is drained first (the
    GCS records the drain before the raylet leaves)."""
    deadline = time.monotonic() + 20
    while len(ray_starts(tmp_path)) < starts:
        assert time.monotonic() < deadline, f"no start {starts} of Ray"
        time.sleep(0.05)
    if drained_in:
        drained(drained_in, int(time.time() * 1000))
    os.kill(ray_starts(tmp_path)[-1]["pid"], signal.SIGTERM)


def test_drains_no_deletion_follows_do_not_use_up_the_restart_limit(run, gcs, tmp_path):
    """The attack: a process of the pod asks the sidecar for a drain once per grace period (where it
    has no guard: no API access); each time the node is drained, its raylet leaves, and Ray exits.
    A drained Ray's end is no death: rayboot waits RAYBOOT_GRACE_PERIOD for the deletion that
    should follow, none comes, and Ray starts again without counting toward the limit. Before, the
    fourth drain ended the worker pod with exit 1 while the head's job ran."""
    worker = run(worker_env(gcs, RAYBOOT_GRACE_PERIOD="1"))
    for i in range(1, 5):
        end_ray(tmp_path, i, drained_in=gcs)
    deadline = time.monotonic() + 20
    while len(ray_starts(tmp_path)) < 5:
        assert worker.proc.poll() is None, f"the pod ended after drains:\n{worker.stderr}"
        assert time.monotonic() < deadline, worker.stderr
        time.sleep(0.05)
    assert worker.stderr.count("no deletion of this pod followed the drain") == 4, worker.stderr
    # A death after them is the first counted.
    end_ray(tmp_path, 5)
    worker.wait_for_log("Ray exited (1) while its head is up (same cluster): starting it again in 1 s (1 of at most 3")
    assert "ending the pod" not in worker.stderr, worker.stderr


def test_a_drain_then_sigterm_is_a_graceful_eviction(run, gcs, tmp_path):
    """The real path: the preStop drain makes Ray leave, then the kubelet's SIGTERM comes within
    the grace period: no new Ray in between, and the pod ends as evicted (0)."""
    worker = run(worker_env(gcs, RAYBOOT_GRACE_PERIOD="5"))
    end_ray(tmp_path, 1, drained_in=gcs)
    time.sleep(1.5)  # past the 1 s delay before a Ray that died is started again
    worker.proc.send_signal(signal.SIGTERM)
    assert worker.wait(15) == 0, worker.stderr
    assert len(ray_starts(tmp_path)) == 1, worker.stderr
    assert "node was drained" in worker.stderr, worker.stderr


def test_a_drain_of_an_earlier_ray_does_not_excuse_a_death(run, gcs, tmp_path):
    """The GCS's last record of the node's name is a drain that ended before this Ray started (an
    earlier Ray of the pod): this Ray's exit is a death, and counts."""
    drained(gcs, int(time.time() * 1000) - 60000)
    worker = run(worker_env(gcs))
    end_ray(tmp_path, 1)
    worker.wait_for_log("starting it again in 1 s (1 of at most 3 in a row)")
    assert "node was drained" not in worker.stderr, worker.stderr


def test_a_drained_node_whose_ray_start_stays_is_joined_again(run, gcs, tmp_path):
    """Ray 2.60's raylet leaves with exit 0 once its node is drained, and `ray start --block` takes
    that for graceful and stays (seen on real Ray): the pod would hold no node for good. rayboot
    sees the drain at its periodic look, waits RAYBOOT_GRACE_PERIOD for a deletion, then stops the
    Ray left without a node and joins again, uncounted. Before, nothing happened."""
    worker = run(worker_env(gcs, RAYBOOT_GRACE_PERIOD="1"))
    deadline = time.monotonic() + 20
    while not ray_starts(tmp_path):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    drained(gcs, int(time.time() * 1000))  # the raylet left; fake_ray (`ray start --block`) stays
    deadline = time.monotonic() + 20
    while len(ray_starts(tmp_path)) < 2:
        assert worker.proc.poll() is None and time.monotonic() < deadline, worker.stderr
        time.sleep(0.05)
    assert "its raylet has left while `ray start` runs on" in worker.stderr, worker.stderr
    assert "stopping the Ray left without a node" in worker.stderr, worker.stderr
    assert "in a row" not in worker.stderr, worker.stderr
