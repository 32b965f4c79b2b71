"""Evictions and head restarts with real Ray: a deleted worker drains instead of dying, and
workers rejoin a re-created head without being restarted themselves."""
import concurrent.futures
import subprocess
import time

import pytest

from podsim import wait_until
from rayjobs import PROGRAMS, RAY_VERSION, ray_job


def logs(job):
    return "\n".join(f"--- {name}\n{pod.log()}" for name, pod in job.pods.items())


def node_states(head):
    out = head.exec(["python", str(PROGRAMS / "node_states.py")], timeout=60)
    assert out.returncode == 0, out.stderr
    return [line.split() for line in out.stdout.splitlines()]


def alive_count(head):
    try:
        return sum(1 for n in node_states(head) if n[1] == "ALIVE")
    except AssertionError:
        return 0


@pytest.mark.ray_oldest
def test_deleted_worker_drains_and_the_job_finishes(cluster):
    """A worker deleted while tasks run drains (DrainNode, PREEMPTION, with a deadline: the form of
    Ray 2.10 and later) and ends 0 well within its grace; the GCS records a drain, not a death. The
    head counted its workers with the GetAllNodeInfo request its GCS's Ray reads (older than 2.36:
    the whole table, with a warning)."""
    job = cluster.job(ray_job(workers=2, head_command=["python", str(PROGRAMS / "busy.py"), "/tmp/stop"], grace=30))
    job.start()
    head, victim = job.pod("head"), job.pod("worker", 1)
    wait_until(lambda: "started the command" in head.log() or not head.running(), 180, "the head's command")
    assert f"runs Ray {RAY_VERSION[0]}.{RAY_VERSION[1]}." in head.log(), head.log()
    assert ("every node lookup pulls the whole node table" in head.log()) == (RAY_VERSION < (2, 36)), head.log()
    time.sleep(5)  # tasks are running on every node
    t0 = time.monotonic()
    code = victim.delete(grace=30)
    took = time.monotonic() - t0
    assert code == 0, logs(job)
    assert took < 20, f"the drained worker took {took:.1f} s of its 30 s grace"
    assert "drain of node" in victim.log() and "accepted" in victim.log(), victim.log()
    states = {n[0]: n for n in node_states(head)}
    assert states[victim.ip][1] == "DEAD", states
    assert states[victim.ip][2] != "UNEXPECTED_TERMINATION", f"the node died instead of draining: {states}"
    head.exec(["touch", "/tmp/stop"])
    assert head.wait(120) == 0, logs(job)
    assert "tasks done:" in head.log()
    assert job.pod("worker", 0).wait(30) == 0, logs(job)


def test_a_whole_cluster_deleted_at_once_drains_every_worker(cluster, tmp_path):
    """Kueue's preemption suspends the Job and every pod of the cluster is deleted at the same
    moment (as when a JobSet or an LWS group goes): each worker's drain goes through the head's GCS
    while the head itself is stopping. The head keeps its GCS up until the workers' nodes have left
    drained, and each worker sees its own leave: DEAD with AUTOSCALER_DRAIN_PREEMPTED in the GCS's
    record (kept from outside the cluster), "left the cluster" in its log, exit 0, every pod gone
    well within its grace. Before, the head stopped its GCS once its own drain was accepted, and a
    worker lost it mid-drain: "stopped without a drain" after half its grace period."""
    job = cluster.job(ray_job(workers=2, grace=30))
    job.start()
    head = job.pod("head")
    wait_until(lambda: alive_count(head) == 3, 180, "3 ALIVE nodes")
    pods = [head, job.pod("worker", 0), job.pod("worker", 1)]
    record = tmp_path / "gcs-record"
    with open(record, "w") as out:
        recorder = subprocess.Popen(["ip", "netns", "exec", cluster.ns, str(cluster.venv / "bin" / "python"),
                                     str(PROGRAMS / "node_states.py"), f"{head.ip}:6379", "--watch"],
                                    stdout=out, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: len(record.read_text().splitlines()) >= 3, 30, "the GCS's record")

        def delete(pod):
            t0 = time.monotonic()
            return pod.delete(grace=30), time.monotonic() - t0
        with concurrent.futures.ThreadPoolExecutor(len(pods)) as pool:
            ends = dict(zip([p.name for p in pods], pool.map(delete, pods), strict=True))
    finally:
        recorder.kill()
        recorder.wait()
    print(f"deleted at once: (exit, seconds to gone) {ends}")
    lines = [line.split() for line in record.read_text().splitlines()]
    for w in pods[1:]:
        assert ends[w.name][0] == 0, logs(job)
        assert "left the cluster after" in w.log() and "without a drain" not in w.log(), w.log()
        last = [line for line in lines if line[0] == w.ip][-1]
        assert last[1:3] == ["DEAD", "AUTOSCALER_DRAIN_PREEMPTED"], (w.name, lines)
    assert max(seconds for _, seconds in ends.values()) < 10, ends
    assert "drains are through" in head.log() or "no worker is ALIVE" in head.log(), head.log()


def test_workers_rejoin_a_recreated_head(cluster):
    job = cluster.job(ray_job(workers=2))
    job.start()
    head = job.pod("head")
    wait_until(lambda: alive_count(head) == 3, 180, "3 ALIVE nodes")
    workers = [job.pod("worker", i) for i in range(2)]
    worker_pids = [w.pid1 for w in workers]
    old_ip = head.ip
    head.delete(grace=10)
    head.recreate()
    assert head.ip != old_ip
    wait_until(lambda: alive_count(head) == 3, 240, "the workers to rejoin the new head", interval=2)
    assert [w.pid1 for w in workers] == worker_pids and all(w.running() for w in workers), \
        "workers must rejoin without being restarted"
    for w in workers:
        assert "joining the head again" in w.log(), w.log()


def test_head_killed_while_the_workers_join(cluster):
    """The head's pod is SIGKILLed (its node failed) while both workers' `ray start` is joining
    it, and Volcano re-creates it with a new IP: the workers' pods are not restarted, they wait
    for the new head and join it."""
    job = cluster.job(ray_job(workers=2))
    head, workers = job.pod("head"), [job.pod("worker", i) for i in range(2)]
    head.start()
    wait_until(lambda: "is SERVING" in head.log() or not head.running(), 180, "the head's GCS")
    for w in workers:
        w.start()
    wait_until(lambda: all("started ray" in w.log() or not w.running() for w in workers), 120,
               "the workers' ray start")
    worker_pids = [w.pid1 for w in workers]
    time.sleep(1)  # inside ray start: Python is up and dialling the GCS
    old_ip = head.ip
    head.kill()
    time.sleep(3)
    head.recreate()
    assert head.ip != old_ip
    wait_until(lambda: alive_count(head) == 3, 300, "the workers to join the new head", interval=2)
    assert [w.pid1 for w in workers] == worker_pids and all(w.running() for w in workers), \
        "workers must join the new head without being restarted\n" + logs(job)
    for w in workers:
        assert "joining the head again" in w.log(), w.log()
        assert w.log().count("the head is a new cluster") <= 1, w.log()
