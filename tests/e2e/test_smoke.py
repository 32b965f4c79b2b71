"""The simulator itself, before rayboot does anything: a head and a worker running bare
`ray start --block`, the worker started once the head's DNS record exists (bare `ray start`
gives up after ~20 s without a head). Ray itself must see 2 ALIVE nodes."""
import time

from podsim import wait_until

SMOKE = {
    "apiVersion": "batch.volcano.sh/v1alpha1",
    "kind": "Job",
    "metadata": {"name": "smoke", "namespace": "default"},
    "spec": {
        "plugins": {"svc": [], "env": []},
        "tasks": [
            {"name": "head", "replicas": 1, "template": {"spec": {"containers": [{"name": "ray", "command": [
                "ray", "start", "--head", "--port=6379", "--dashboard-host=0.0.0.0", "--num-cpus=1",
                "--include-dashboard=false", "--disable-usage-stats", "--block"]}]}}},
            {"name": "worker", "replicas": 1, "template": {"spec": {"containers": [{"name": "ray", "command": [
                "ray", "start", "--address=smoke-head-0.smoke.default.svc.cluster.local:6379", "--num-cpus=1",
                "--block"]}]}}},
        ],
    },
}

COUNT_ALIVE = """
import ray, time
ray.init(address="auto", logging_level="ERROR")
deadline = time.time() + 60
while time.time() < deadline:
    alive = [n for n in ray.nodes() if n["Alive"]]
    if len(alive) >= 2:
        break
    time.sleep(0.5)
print("ALIVE", len(alive))
"""


def test_bare_ray_cluster_in_simulated_pods(cluster):
    job = cluster.job(SMOKE)
    head, worker = job.pod("head"), job.pod("worker")
    head.start()
    wait_until(lambda: "Ray runtime started" in head.log() or not head.running(), 90, "the head's Ray")
    assert head.running(), head.log()
    worker.start()
    out = head.exec(["python", "-c", COUNT_ALIVE], timeout=120)
    assert "ALIVE 2" in out.stdout, f"{out.stdout}\n{out.stderr}\nhead:\n{head.log()}\nworker:\n{worker.log()}"
    for pod in (worker, head):
        pod.delete(grace=10)
        assert not pod.running()
