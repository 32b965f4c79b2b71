"""Start-up overhead and footprint, on one cluster whose head (real Ray, under rayboot, supervising
a command that sleeps) is healthy:

- startup_ms.rayboot: rayboot's own time from its exec to its exec of `ray`, in a worker pod, the
  head already SERVING: a launcher notes the instant before it execs rayboot, the `ray` stand-in
  (tools/stamp.c) notes the instant it is exec'd. Planning, DNS, the TCP probe and Health/Check
  are all inside it.
- startup_ms.ray_health_check: the wall time of one `ray health-check` against the same head, from
  the same pod (what a KubeRay worker pays at least once before `ray start`).
- binary_bytes: the stripped release binaries.
- idle_rss_kb: VmRSS of the supervising rayboot (PID 1 of the head pod, with its prober if one is
  alive) and of rayboot-sidecar (with its prober) beside the head, after they settle."""
import os
import statistics
import time

from common import (
    RAYBOOT,
    SIDECAR,
    STAMP,
    VENV,
    exe_of,
    log,
    new_cluster,
    pid_namespace,
    pids_in_namespace,
    rayjobs,
    read_stamps,
    rss_kb,
    wait_until,
)

LAUNCH = ("import os, sys, time\n"
          "open(sys.argv[1], 'a').write(f'{time.time_ns()}\\n')\n"
          "os.execv(sys.argv[2], sys.argv[2:])\n")
TIMED = ("import subprocess, sys, time\n"
         "t = time.perf_counter(); r = subprocess.run(sys.argv[1:], capture_output=True)\n"
         "print((time.perf_counter() - t) * 1000, r.returncode)\n")


def _cluster_job():
    manifest = rayjobs.ray_job(name="steady", workers=1, head_command=["sleep", "1000000"],
                               head_env=rayjobs.env(RAYBOOT_WORKERS_EXPECTED=0))
    worker = manifest["spec"]["tasks"][1]["template"]["spec"]["containers"][0]
    worker["command"] = ["sleep", "1000000"]  # a pod to run measurements in
    return manifest


def standin_env(stamps, stamp=STAMP):
    """What rayboot is run with here: the `ray` stand-in, holding, and a short grace period for
    the SIGTERM that ends each run (tests/bench/test_startup_standin.py checks rayboot execs it
    once and stops)."""
    return {"RAYBOOT_RAY": str(stamp), "BENCH_STAMP_FILE": str(stamps), "BENCH_HOLD": "1",
            "RAYBOOT_TERMINATION_LOG": "/dev/null", "RAYBOOT_GRACE_PERIOD": "5"}


def _rayboot_once(pod, stamps, launched, log_path):
    """One start-up in a container of POD of its own (rayboot its PID 1, as in a pod). The `ray`
    stand-in holds (BENCH_HOLD) as `ray start --block` does: one that returned at once would be
    started again under a healthy head (three times, seconds apart) before rayboot ended the pod.
    Once it has noted its instant, rayboot is stopped as a pod is (SIGTERM)."""
    env = pod.env()
    env.update(standin_env(stamps))
    before = len(read_stamps(stamps))
    c = pod.add_container([str(VENV / "bin" / "python"), "-c", LAUNCH, str(launched), str(RAYBOOT)], env, log_path)
    try:
        wait_until(lambda: len(read_stamps(stamps)) > before or c.proc.poll() is not None, 60, "rayboot's exec of ray")
    finally:
        c.signal(15)
        c.wait(30)
    if len(read_stamps(stamps)) != before + 1:
        raise RuntimeError(f"rayboot did not exec ray once: {c.log()[-2000:]}")
    return (read_stamps(stamps)[-1] - read_stamps(launched)[-1]) / 1e6


def _health_check_once(pod, head_fqdn):
    r = pod.exec([str(VENV / "bin" / "python"), "-c", TIMED, "ray", "health-check", "--address",
                  f"{head_fqdn}:6379"], timeout=120)
    ms, code = r.stdout.split()
    if code != "0":
        raise RuntimeError(f"ray health-check failed against a healthy head: exit {code}")
    return float(ms)


def _tree_rss(pid1_or_pid, exe):
    """Sum of VmRSS of the processes in pid's namespace that run exe (the process and its prober)."""
    ns = pid_namespace(pid1_or_pid)
    pids = [p for p in pids_in_namespace(ns) if exe_of(p) == str(exe)]
    return sum(rss_kb(p) for p in pids), len(pids)


RUNS = {"full": 30, "quick": 10, "smoke": 2}  # start-ups per size (run.py; smoke: tests/bench)


def run(size):
    runs = RUNS[size]
    cluster = new_cluster("steady")
    job = cluster.job(_cluster_job())
    try:
        job.start()
        head, probe = job.pod("head"), job.pod("worker", 0)
        wait_until(lambda: "started the command" in head.log() or not head.running(), 240, "the head's command")
        sidecar_env = head.env()
        sidecar_env.update({"RAYBOOT_SIDECAR_PORT": "8077", "RAYBOOT_POD_IP": head.ip})
        sidecar = head.add_container([str(SIDECAR)], sidecar_env, cluster.dir / "sidecar.log")
        stamps, launched = cluster.dir / "startup-stamps", cluster.dir / "startup-launched"
        rayboot_ms, check_ms = [], []
        for i in range(runs):  # A B A B
            rayboot_ms.append(_rayboot_once(probe, stamps, launched, cluster.dir / f"startup-{i}.log"))
            check_ms.append(_health_check_once(probe, head.fqdn))
            log(f"  start-up {i + 1}/{runs}: rayboot {rayboot_ms[-1]:.2f} ms, ray health-check {check_ms[-1]:.0f} ms")
        time.sleep(5)  # the sidecar has answered nothing and probed /readyz twice: idle
        rb_kb, rb_procs = _tree_rss(head.pid1, RAYBOOT)
        sc_kb, sc_procs = _tree_rss(sidecar.pid, SIDECAR)
        sidecar.signal(15)
        sidecar.wait(10)
    finally:
        cluster.close()
    return {
        "startup_ms": {"rayboot": round(statistics.median(rayboot_ms), 2),
                       "ray_health_check": round(statistics.median(check_ms), 1), "runs": runs,
                       "ratio": round(statistics.median(check_ms) / statistics.median(rayboot_ms), 1)},
        "binary_bytes": {"rayboot": os.path.getsize(RAYBOOT), "rayboot_sidecar": os.path.getsize(SIDECAR)},
        "idle_rss_kb": {"rayboot": rb_kb, "rayboot_processes": rb_procs,
                        "sidecar": sc_kb, "sidecar_processes": sc_procs},
    }
