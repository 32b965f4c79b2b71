"""rayboot-sidecar beside Ray containers it does not own, with real Ray: workers run the Volcano
ray plugin's literal command (`sh -c "ray start --block --address=J-head-0.J:6379"`), the
sidecar runs as a second container of each worker pod, and the harness plays the kubelet. One
worker is drained through the preStop path (/drain, then SIGTERM), the other through the
sidecar's own SIGTERM path. The GCS must record both as drained, not dead unexpectedly."""
import json
import signal
import time

from podsim import wait_until
from rayjobs import ray_job
from test_rayboot_lifecycle import node_states

JOB = "ray-plugin"
SIDECAR_PORT = 8077


def literal_plugin_job():
    job = ray_job(name=JOB, workers=2, grace=30)
    worker = job["spec"]["tasks"][1]["template"]["spec"]["containers"][0]
    # What the plugin writes into the worker's container (facts/volcano.md), plus one CPU per
    # node to keep the simulated nodes light.
    worker["command"] = ["sh", "-c", f"ray start --block --address={JOB}-head-0.{JOB}:6379 --num-cpus=1"]
    worker["env"] = []
    return job


def start_sidecar(pod, sidecar_bin, tmp_path):
    env = pod.env()
    env.update({"RAYBOOT_POD_IP": pod.ip, "RAYBOOT_POD_NAME": pod.name, "RAYBOOT_POD_NAMESPACE": pod.job.namespace,
                "RAYBOOT_GRACE_PERIOD": "30", "RAYBOOT_TERMINATION_LOG": str(tmp_path / f"{pod.name}.termination-log")})
    (tmp_path / f"{pod.name}.termination-log").write_text("")
    sidecar = pod.add_container([str(sidecar_bin)], env, tmp_path / f"{pod.name}.sidecar.log")
    wait_until(lambda: "serving on port" in sidecar.log(), 10, "the sidecar to listen")
    return sidecar


def http(pod, path, timeout=60):
    """(status, body) of a request to the sidecar, made from inside the pod, as the kubelet does."""
    out = pod.exec(["curl", "-sS", "-m", str(timeout), "-w", "\n%{http_code}", f"http://127.0.0.1:{SIDECAR_PORT}{path}"],
                   timeout=timeout + 5)
    assert out.returncode == 0, out.stderr
    body, _, code = out.stdout.rpartition("\n")
    return int(code), body


def test_sidecar_drains_plugin_workers(cluster, sidecar_bin, tmp_path):
    job = cluster.job(literal_plugin_job())
    for i in range(2):
        job.pod("worker", i).keep.append(tmp_path)  # where the termination logs are
    job.start()
    head, prestop, sigterm = job.pod("head"), job.pod("worker", 0), job.pod("worker", 1)
    sidecars = [start_sidecar(w, sidecar_bin, tmp_path) for w in (prestop, sigterm)]
    try:
        # /readyz follows the real node: not ready before Ray has joined, ready once it has.
        code, body = http(prestop, "/readyz")
        assert code == 503, body
        for w in (prestop, sigterm):
            wait_until(lambda: http(w, "/readyz")[0] == 200, 180, f"{w.name} to be ready", interval=1)
        states = {n[0]: n for n in node_states(head)}
        assert states[prestop.ip][1] == "ALIVE" and states[sigterm.ip][1] == "ALIVE", states

        # preStop: the kubelet calls /drain, then SIGTERMs the containers.
        t0 = time.monotonic()
        code, body = http(prestop, "/drain?deadline=20")
        took = time.monotonic() - t0
        answer = json.loads(body)
        assert code == 200 and answer["accepted"] and answer["outcome"] == "left", body
        assert answer["reason"].startswith("reason unknown") and len(answer["node_id"]) == 56
        assert took < 20, f"the drain took {took:.1f} s"
        prestop.delete(grace=30)
        sidecars[0].signal(signal.SIGTERM)
        assert sidecars[0].wait(30) == 0, sidecars[0].log()
        assert "node drained" in (tmp_path / f"{prestop.name}.termination-log").read_text()

        # SIGTERM to the sidecar alone (nobody called /drain): it drains, then leaves.
        sidecars[1].signal(signal.SIGTERM)
        assert sidecars[1].wait(30) == 0, sidecars[1].log()
        assert "drained: it left the cluster" in sidecars[1].log(), sidecars[1].log()
        assert "on SIGTERM" in (tmp_path / f"{sigterm.name}.termination-log").read_text()
        sigterm.delete(grace=30)

        states = {n[0]: n for n in node_states(head)}
        for w in (prestop, sigterm):
            assert states[w.ip][1] == "DEAD", states
            assert states[w.ip][2] != "UNEXPECTED_TERMINATION", f"{w.name} died instead of draining: {states}"
    finally:
        for s in sidecars:
            s.kill()
