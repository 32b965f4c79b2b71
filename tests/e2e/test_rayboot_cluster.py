"""rayboot as the entrypoint of every pod, with real Ray, in simulated Volcano pods."""
import re
import time

from podsim import wait_until
from rayjobs import PROGRAMS, env, ray_job

SQUARES = "[0, 1, 4, 9, 16, 25, 36, 49, 64, 81]"


def logs(job):
    return "\n".join(f"--- {name}\n{pod.log()}" for name, pod in job.pods.items())


def test_seed_job_runs_and_every_pod_completes(cluster):
    """The seed scenario: the head runs the squares program once both workers joined; it exits 0,
    and the workers then stop by themselves with 0, told by the head's rendezvous (its FINISHED)."""
    job = cluster.job(ray_job(head_command=["python", str(PROGRAMS / "squares.py")]))
    job.start()
    head = job.pod("head")
    assert head.wait(180) == 0, logs(job)
    assert SQUARES in head.log() and "nodes: 3" in head.log(), logs(job)
    for i in range(2):
        assert job.pod("worker", i).wait(30) == 0, logs(job)
        assert "the head's command finished (told by its rendezvous)" in job.pod("worker", i).log(), logs(job)


def test_head_command_exit_code_is_the_pods(cluster):
    job = cluster.job(ray_job(workers=1, head_command=["python", str(PROGRAMS / "squares.py"), "3"]))
    job.start()
    assert job.pod("head").wait(180) == 3, logs(job)
    assert job.pod("worker").wait(30) == 0, logs(job)


def test_worker_started_long_before_its_head_joins(cluster):
    """The worker starts 20 s before the head; its DNS name does not even exist yet (NXDOMAIN).
    It waits, then joins: the head's program sees 2 nodes."""
    job = cluster.job(ray_job(workers=1, head_command=["python", str(PROGRAMS / "squares.py")]))
    worker, head = job.pod("worker"), job.pod("head")
    worker.start()
    time.sleep(20)
    assert worker.running(), worker.log()
    assert "NXDOMAIN" in worker.log()
    head.start()
    assert head.wait(180) == 0, logs(job)
    assert "nodes: 2" in head.log(), logs(job)
    assert worker.wait(30) == 0, logs(job)


def test_worker_rides_through_a_dns_outage(cluster):
    """The cluster DNS is down for 10 s while the worker waits; it still joins."""
    job = cluster.job(ray_job(workers=1, head_command=["python", str(PROGRAMS / "squares.py")]))
    worker, head = job.pod("worker"), job.pod("head")
    cluster.dns_stop()
    worker.start()
    time.sleep(10)
    assert worker.running(), worker.log()
    cluster.dns_start()
    head.start()
    assert head.wait(180) == 0, logs(job)
    assert "nodes: 2" in head.log(), logs(job)
    assert re.search(r"DNS: (DNS timeout|nameserver)", worker.log()), worker.log()


def test_head_that_never_comes_gives_75(cluster):
    job = cluster.job(ray_job(workers=1, worker_env=env(RAYBOOT_WAIT_TIMEOUT=3)))
    worker = job.pod("worker")
    worker.start()
    assert worker.wait(30) == 75, worker.log()
    assert "ray-cluster-head-0.ray-cluster.volcano-system.svc.cluster.local:6379" in worker.log()
    assert "NXDOMAIN" in worker.log()


def test_dropped_packets_are_timeouts_and_the_wait_moves_on(cluster):
    """The head's GCS port silently drops the worker's packets for a while: per-attempt
    timeouts keep the wait moving (the log says "timeout"), and the worker joins afterwards."""
    job = cluster.job(ray_job(workers=1, head_command=["python", str(PROGRAMS / "squares.py")]))
    head, worker = job.pod("head"), job.pod("worker")
    head.start()
    head.drop_incoming(6379)
    worker.start()
    wait_until(lambda: "timeout" in worker.log() or not worker.running(), 60, "a timeout in the worker's log")
    assert worker.running(), worker.log()
    head.allow_packets()
    assert head.wait(180) == 0, logs(job)
    assert "nodes: 2" in head.log(), logs(job)
    assert worker.wait(30) == 0, logs(job)
