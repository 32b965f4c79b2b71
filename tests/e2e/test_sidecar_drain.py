"""rayboot-sidecar beside Ray containers it does not own, with real Ray: workers run the Volcano
ray plugin's literal command (`sh -c "ray start --block --address=J-head-0.J:6379"`), the
sidecar runs as a second container of each worker pod, and the harness plays the kubelet. One
worker is drained through the preStop path (the Ray container's exec hook `rayboot-sidecar
drain`, then SIGTERM), the other through the sidecar's own SIGTERM path. The GCS must record both
as drained, not dead unexpectedly. Before that, another pod (and the node's own address) try to
drain a worker over the network, with every method, on both ports: nothing drains, the node
stays ALIVE and Ready."""
import signal
import time

from podsim import wait_until
from rayjobs import ray_job
from test_rayboot_lifecycle import node_states

JOB = "ray-plugin"
SIDECAR_PORT = 8077
DRAIN_PORT = 8078
DRAIN_HOOK = ["rayboot-sidecar", "drain", "--deadline=20"]


def literal_plugin_job():
    job = ray_job(name=JOB, workers=2, grace=30)
    worker = job["spec"]["tasks"][1]["template"]["spec"]["containers"][0]
    # What the plugin writes into the worker's container (facts/volcano.md), plus one CPU per
    # node to keep the simulated nodes light; the preStop hook of k8s/volcano/sidecar-only.yaml.
    worker["command"] = ["sh", "-c", f"ray start --block --address={JOB}-head-0.{JOB}:6379 --num-cpus=1"]
    worker["env"] = []
    worker["lifecycle"] = {"preStop": {"exec": {"command": DRAIN_HOOK}}}
    return job


def start_sidecar(pod, sidecar_bin, tmp_path, grace=30):
    env = pod.env()
    env.update({"RAYBOOT_POD_IP": pod.ip, "RAYBOOT_POD_NAME": pod.name, "RAYBOOT_POD_NAMESPACE": pod.job.namespace,
                "RAYBOOT_GRACE_PERIOD": str(grace), "RAYBOOT_TERMINATION_LOG": str(tmp_path / f"{pod.name}.termination-log")})
    (tmp_path / f"{pod.name}.termination-log").write_text("")
    sidecar = pod.add_container([str(sidecar_bin)], env, tmp_path / f"{pod.name}.sidecar.log")
    wait_until(lambda: "serving on port" in sidecar.log(), 10, "the sidecar to listen")
    return sidecar


def http(pod, path, timeout=60):
    """(status, body) of a request to the sidecar's probes port, made from inside the pod."""
    out = pod.exec(["curl", "-sS", "-m", str(timeout), "-w", "\n%{http_code}", f"http://127.0.0.1:{SIDECAR_PORT}{path}"],
                   timeout=timeout + 5)
    assert out.returncode == 0, out.stderr
    body, _, code = out.stdout.rpartition("\n")
    return int(code), body


def curl_from(run_in, target_ip, port, method, path="/drain?deadline=20"):
    """A request to target_ip:port from another network namespace: (curl's exit code, HTTP status)."""
    out = run_in(["curl", "-sS", "-o", "/dev/null", "-m", "5", "-w", "%{http_code}", "-X", method,
                  *(["-I"] if method == "HEAD" else []), f"http://{target_ip}:{port}{path}"])
    return out.returncode, out.stdout.strip()


def test_strangers_cannot_drain(cluster, sidecar_bin, tmp_path):
    """Another pod, and the node's address on the pod network (what the kubelet's httpGet comes
    from), ask a worker's sidecar to drain: the probes port answers 403 to every method, the drain
    port is not there at all (it listens on the pod's loopback), and the worker's node stays
    ALIVE in the GCS with its pod Ready."""
    job = cluster.job(literal_plugin_job())
    job.start()
    head, victim = job.pod("head"), job.pod("worker", 0)
    sidecar = start_sidecar(victim, sidecar_bin, tmp_path)
    try:
        wait_until(lambda: http(victim, "/readyz")[0] == 200, 180, f"{victim.name} to be ready", interval=1)
        node = lambda argv: cluster_exec(cluster, argv)  # noqa: E731
        for who, run_in in (("another pod", lambda argv: head.exec(argv, timeout=20)), ("the node", node)):
            for method in ("GET", "HEAD", "POST", "PUT"):
                assert curl_from(run_in, victim.ip, SIDECAR_PORT, method) == (0, "403"), (who, method)
                code, status = curl_from(run_in, victim.ip, DRAIN_PORT, method)
                assert code == 7 and status == "000", f"{who} reached the drain port: curl {code}, HTTP {status}"
        time.sleep(3)  # past one more readiness look
        states = {n[0]: n for n in node_states(head)}
        assert states[victim.ip][1] == "ALIVE", states
        assert http(victim, "/readyz")[0] == 200
        metrics = http(victim, "/metrics")[1]
        assert "rayboot_sidecar_drains_started_total 0" in metrics
        assert "rayboot_sidecar_drain_refused_total 8" in metrics, metrics
        assert "draining" not in sidecar.log(), sidecar.log()
    finally:
        sidecar.kill()


def cluster_exec(cluster, argv):
    import subprocess
    return subprocess.run(["ip", "netns", "exec", cluster.ns, *argv], capture_output=True, text=True, timeout=20)


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
            wait_until(lambda w=w: http(w, "/readyz")[0] == 200, 180, f"{w.name} to be ready", interval=1)
        states = {n[0]: n for n in node_states(head)}
        assert states[prestop.ip][1] == "ALIVE" and states[sigterm.ip][1] == "ALIVE", states

        # preStop: the kubelet runs the Ray container's exec hook (the drain, through the sidecar's
        # loopback port), then SIGTERMs the Ray container (`sh` as PID 1 ignores it: SIGKILL at the
        # end of the grace period); the sidecar goes after it.
        prestop.delete(grace=30)
        ((container, code, took),) = prestop.hook_results
        assert (container, code) == ("ray", 0), (prestop.hook_results, sidecars[0].log())
        assert took < 20, f"the preStop drain took {took:.1f} s"
        assert "node drained" in (tmp_path / f"{prestop.name}.termination-log").read_text(), sidecars[0].log()
        assert "(preStop; reason unknown)" in sidecars[0].log(), sidecars[0].log()
        sidecars[0].signal(signal.SIGTERM)
        assert sidecars[0].wait(30) == 0, sidecars[0].log()

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


def test_a_stray_drain_no_deletion_follows_leaves_the_worker_running(cluster, sidecar_bin, tmp_path):
    """Real Ray, rayboot as the worker's entrypoint, the sidecar beside it with no API access (no
    guard: any ask drains, as the sidecar warns at start): a process of the worker pod POSTs
    /drain. The drained raylet leaves with exit 0 (the GCS records AUTOSCALER_DRAIN_PREEMPTED),
    which Ray 2.60's `ray start --block` takes for graceful: it stays, with no node. rayboot sees
    the drain at its periodic look, waits RAYBOOT_GRACE_PERIOD for a deletion that does not come,
    stops that Ray and joins again, uncounted: the node is ALIVE again and the pod runs on. Before,
    the pod stayed Running with no Ray node for good. (contract/test_worker_keeps_ray.py: where
    `ray start` exits instead, the fourth such drain no longer ends the pod.)"""
    job = cluster.job(ray_job(name="stray", workers=1, grace=5))
    job.start()
    head, worker = job.pod("head"), job.pod("worker", 0)
    sidecar = start_sidecar(worker, sidecar_bin, tmp_path, grace=5)
    try:
        assert "no guard on the drain port" in sidecar.log(), sidecar.log()
        wait_until(lambda: http(worker, "/readyz")[0] == 200, 180, f"{worker.name} to be ready", interval=1)
        out = worker.exec(["curl", "-sS", "-m", "30", "-X", "POST", f"http://127.0.0.1:{DRAIN_PORT}/drain"], timeout=40)
        assert out.returncode == 0 and '"accepted":true' in out.stdout, (out.stdout, out.stderr)
        try:
            wait_until(lambda: "node was drained (the GCS says AUTOSCALER_DRAIN" in worker.log(), 60,
                       "rayboot to see its Ray drained")
            wait_until(lambda: "no deletion of this pod followed the drain" in worker.log(), 30, "Ray to start again")
            wait_until(lambda: any(n[0] == worker.ip and n[1] == "ALIVE" for n in node_states(head)), 120,
                       "the node to be ALIVE again", interval=2)
        except TimeoutError as e:
            raise AssertionError(f"{e}\n--- rayboot:\n{worker.log()}\n--- sidecar:\n{sidecar.log()}\n"
                                 f"--- nodes: {node_states(head)}") from None
        assert worker.running(), worker.log()
        assert "ending the pod" not in worker.log(), worker.log()
    finally:
        sidecar.kill()
