"""The simulator itself, before rayboot does anything: a head and a worker running bare
`ray start --block`, the worker started once the head's DNS record exists (bare `ray start`
gives up after ~20 s without a head). Ray itself must see 2 ALIVE nodes."""
import time

from podsim import run, wait_until

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


def _bridge_mac(cluster):
    out = run("ip", "-n", cluster.ns, "-o", "link", "show", "br0").stdout
    return out.split("link/ether ")[1].split()[0]


def test_bridge_keeps_its_mac_as_pods_come_and_go(cluster):
    """A pod's cached ARP entry for the cluster DNS must stay right: a bridge left to itself takes
    its lowest port's MAC, so it changed with every pod added or removed, and a worker that had
    resolved it early lost its DNS queries for up to 52 s."""
    before = _bridge_mac(cluster)
    made = [cluster._new_pod_network()[0] for _ in range(6)]
    seen = {_bridge_mac(cluster)}
    for ns in made[:4]:
        cluster._drop_netns(ns)
    deadline = time.monotonic() + 2  # a namespace's veth goes away asynchronously
    while time.monotonic() < deadline:
        seen.add(_bridge_mac(cluster))
        time.sleep(0.1)
    assert seen == {before}, f"br0 changed its MAC from {before} to {sorted(seen - {before})}"
