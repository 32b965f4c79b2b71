"""Shutdown (real Ray): a worker pod whose node runs tasks is deleted (SIGTERM to PID 1, SIGKILL at
the end of its 30 s grace period, as the kubelet does). Measured: the time until every process of
the pod is gone, the pod's exit code, and whether the GCS recorded the node as drained (DEAD,
not UNEXPECTED_TERMINATION). rayboot as the worker's PID 1 against `ray start --block` as PID 1
(what the Volcano ray plugin and KubeRay run). The head is rayboot in both cases, running
tests/e2e/programs/busy.py, which keeps every node busy with short tasks."""
import time

from common import log, new_cluster, pid_namespace, pids_in_namespace, rayjobs, remove_pods, wait_until

GRACE_S = 30


def _node_states(head):
    out = head.exec(["python", str(rayjobs.PROGRAMS / "node_states.py")], timeout=60)
    if out.returncode != 0:
        return {}
    return {line.split()[0]: line.split() for line in out.stdout.splitlines()}


def _job(mode):
    name = {"rayboot": "stop-rayboot", "ray_start_block": "stop-block"}[mode]
    manifest = rayjobs.ray_job(name=name, workers=1, grace=GRACE_S,
                               head_command=["python", str(rayjobs.PROGRAMS / "busy.py"), "/tmp/stop"])
    if mode == "ray_start_block":
        worker = manifest["spec"]["tasks"][1]["template"]["spec"]["containers"][0]
        worker["command"] = ["ray", "start", "--block", f"--address={name}-head-0.{name}:6379", "--num-cpus=1"]
    return manifest


def _measure(cluster, mode):
    job = cluster.job(_job(mode))
    head, victim = job.pod("head"), job.pod("worker", 0)
    try:
        job.start()
        wait_until(lambda: "started the command" in head.log() or not head.running(), 240, "the head's command")
        wait_until(lambda: victim.ip in _node_states(head) and _node_states(head)[victim.ip][1] == "ALIVE", 120,
                   "the worker's node", interval=1)
        time.sleep(5)  # tasks are running on the worker
        ns = pid_namespace(victim.pid1)
        t0 = time.monotonic()
        code = victim.delete(grace=GRACE_S)
        wait_until(lambda: not pids_in_namespace(ns), 30, "the worker pod's processes to be gone", interval=0.01)
        seconds = time.monotonic() - t0
        node = _node_states(head).get(victim.ip, ["?", "?", "?"])
        return {"seconds": round(seconds, 2), "exit_code": code,
                "graceful": node[1] == "DEAD" and node[2] != "UNEXPECTED_TERMINATION",
                "gcs_state": node[1], "gcs_death_reason": node[2]}
    finally:
        remove_pods(cluster, job)


def run(size):
    del size  # one deletion per mode at every size: nothing to make smaller
    cluster = new_cluster("stop")
    result = {}
    try:
        for mode in ("rayboot", "ray_start_block"):
            result[mode] = _measure(cluster, mode)
            log(f"  shutdown, {mode}: {result[mode]}")
    finally:
        cluster.close()
    result["grace_period_s"] = GRACE_S
    return {"shutdown": result}
