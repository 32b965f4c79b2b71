"""A worker keeps its Ray node through what GCS fault tolerance survives, and only that (issue 29
item 5): a Ray that dies under a head still up as the same cluster is started again (a bounded
number of times), a head that comes back as the same cluster leaves Ray alone, and a node that
cannot reach any GCS for RAY_gcs_rpc_server_reconnect_timeout_s is stopped and joined again.
Real rayboot, the fake GCS and the fake `ray` (tests/contract/fake_ray.py)."""
import json
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
