"""Scale: many rayboot workers wait in one shared pod for a stand-in head (tools/standin_gcs.py, a
grpcio health server) whose port is closed until t=10 s (t=0: every worker is running) and which
then answers SERVING, as a head does once its GCS is up. Twice: with a head rayboot in the head
pod (its Ray a stand-in that holds; it polls the stand-in GCS on loopback and wakes the workers
holding its rendezvous), and without (`fallback`: the head pod runs nothing of ours, the workers
find the rendezvous port closed and poll the GCS).

While they wait: DNS queries per second per worker (dnsmasq's query log) and connection attempts
per second per worker at the head (SYNs from outside the head pod, any port, counted by an
nftables counter in the head pod). After
SERVING: the join latency of every worker, from the instant the stand-in began serving to the
instant the worker exec'd `ray` (the stand-in tools/stamp.c, which records and exits); and the CPU
the workers' rayboots (and their probers) spent to wake and join, per worker: read from
/proc/PID/schedstat (time on CPU in ns, exact) 0.3 s before SERVING and once the last worker
has exec'd `ray`, less what the same processes spend waiting over as long (measured the same way
while they wait). The calls a worker makes after its exec (its Ray version, the cluster id) count
as far as they ran by then. /proc/PID/stat counts in 10 ms ticks: a thousand wakes of about a millisecond each
read there as nothing, or as a few ticks that happened to land.
All workers share the two cores of this machine with each other and with the stand-in head: on
a real cluster each would have a node of its own."""
import pathlib
import subprocess
import time

from common import (
    RAYBOOT,
    STAMP,
    TOOLS,
    VENV,
    exe_of,
    join_latencies_ms,
    log,
    new_cluster,
    percentile,
    pid_namespace,
    pids_in_namespace,
    rayjobs,
    read_serving_window,
    read_stamps,
    remove_pods,
    syn_counter,
    wait_until,
)

NAME = "scale"
GCS_PORT = 6379
SERVE_AFTER_S = 10

# Runs inside the workers' pod: starts N rayboot workers, says when all run, reaps them. Their `ray`
# holds after recording, so each worker execs it once; the pod is killed afterwards.
LAUNCHER = """
import os, subprocess, sys, time
n, rayboot = int(sys.argv[1]), sys.argv[2]
procs = [subprocess.Popen([rayboot], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL) for _ in range(n)]
print("running", time.time_ns(), flush=True)
for p in procs:
    p.wait()
"""


def _manifest(name, rendezvous, head_stamps):
    manifest = rayjobs.ray_job(name=name, workers=1)
    for task in manifest["spec"]["tasks"]:
        task["template"]["spec"]["containers"][0]["command"] = ["sleep", "1000000"]
    if rendezvous:
        head = manifest["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
        head["command"] = ["rayboot"]
        head["env"] += [{"name": "RAYBOOT_RAY", "value": str(STAMP)}, {"name": "BENCH_HOLD", "value": "1"},
                        {"name": "BENCH_STAMP_FILE", "value": str(head_stamps)},
                        {"name": "RAYBOOT_WAIT_TIMEOUT", "value": "3600"}]
    return manifest


def _rayboot_pids(pod):
    """The worker pod's rayboots and their probers (the same executable); not the `ray` stand-ins."""
    ns = pid_namespace(pod.pid1)
    return [pid for pid in pids_in_namespace(ns) if exe_of(pid) == str(RAYBOOT)]


def _cpu_ns(pids):
    """Time on CPU of pids, in ns (the first field of /proc/PID/schedstat: exact, not in ticks)."""
    total = 0
    for pid in pids:
        try:
            total += int(pathlib.Path(f"/proc/{pid}/schedstat").read_text().split()[0])
        except (OSError, IndexError, ValueError):
            pass
    return total


WORKERS = {"full": 1000, "quick": 200, "smoke": 20}  # per size


def run(size):
    workers = WORKERS[size]
    result = _one(workers, rendezvous=True)
    result["fallback"] = _one(workers, rendezvous=False)
    return {"scale": result}


def _one(workers, rendezvous):
    name = NAME if rendezvous else f"{NAME}f"
    cluster = new_cluster(name)
    job = cluster.job(_manifest(name, rendezvous, cluster.dir / "head-stamps"))
    launcher = standin = None
    try:
        job.start()
        head, pod = job.pod("head"), job.pod("worker", 0)
        syn_counter(head, create=True)
        head_fqdn = f"{name}-head-0.{name}.volcano-system.svc.cluster.local"
        stamps, serving = cluster.dir / "scale-stamps", cluster.dir / "scale-serving"
        env = pod.env()
        env.update({"RAYBOOT_ROLE": "worker", "RAYBOOT_HEAD_ADDRESS": f"{head_fqdn}:{GCS_PORT}",
                    "RAYBOOT_RAY": str(STAMP), "BENCH_STAMP_FILE": str(stamps), "BENCH_HOLD": "1",
                    "RAYBOOT_WAIT_TIMEOUT": "300",
                    "RAYBOOT_TERMINATION_LOG": "/dev/null"})
        launcher = subprocess.Popen(["nsenter", "-t", str(pod.pid1), "-n", "-p", "-m", "-u", "--",
                                     str(VENV / "bin" / "python"), "-c", LAUNCHER, str(workers), str(RAYBOOT)],
                                    env=env, stdout=subprocess.PIPE, text=True)
        t0 = time.monotonic()
        line = launcher.stdout.readline().split()
        log(f"  {workers} workers running after {time.monotonic() - t0:.1f} s"
            f" ({'rendezvous' if rendezvous else 'fallback: no rendezvous'})")
        standin = subprocess.Popen(["ip", "netns", "exec", head.ns, str(VENV / "bin" / "python"),
                                    str(TOOLS / "standin_gcs.py"), str(GCS_PORT), str(SERVE_AFTER_S), str(serving)])
        t_running = time.monotonic()
        time.sleep(2)  # the workers' first lookups and connects are behind them
        pids = _rayboot_pids(pod)
        q0, c0, w0, cpu0 = len(cluster.dns_queries(head_fqdn)), syn_counter(head), time.monotonic(), _cpu_ns(pids)
        time.sleep(SERVE_AFTER_S - 2 - 2 - (time.monotonic() - t_running))
        q1, c1, w1, cpu1 = len(cluster.dns_queries(head_fqdn)), syn_counter(head), time.monotonic(), _cpu_ns(pids)
        time.sleep(max(0.0, SERVE_AFTER_S - 0.3 - (time.monotonic() - t_running)))
        t_before, cpu_before = time.monotonic(), _cpu_ns(pids)
        wait_until(lambda: serving.exists() and serving.read_text().strip(), 60, "the stand-in GCS to serve")
        wait_until(lambda: len(read_stamps(stamps)) >= workers, 120, f"{workers} workers to exec ray", interval=0.02)
        t_after, cpu_after = time.monotonic(), _cpu_ns(pids)
        waiting_ns_per_s = (cpu1 - cpu0) / (w1 - w0)
        wake_ns = cpu_after - cpu_before - waiting_ns_per_s * (t_after - t_before)
        window = read_serving_window(serving)
        _, joins = join_latencies_ms(read_stamps(stamps), window, "scale")
        window = w1 - w0
        assert line[0] == "running", line
        return {
            "workers": workers,
            "dns_qps": round((q1 - q0) / window / workers, 2),
            "connect_per_s": round((c1 - c0) / window / workers, 1),
            "join_p50_ms": round(percentile(joins, 50), 1),
            "join_p99_ms": round(percentile(joins, 99), 1),
            "join_max_ms": round(max(joins), 1),
            "waiting_cpu_us_per_s": round(waiting_ns_per_s / workers / 1000, 1),  # per worker
            "wake_cpu_us": round(wake_ns / workers / 1000, 1),  # per worker: SERVING to the last exec
            "processes": len(pids),
            "window_s": round(window, 1),
        }
    finally:
        for proc in (standin, launcher):
            if proc and proc.poll() is None:
                proc.kill()
                proc.wait()
        remove_pods(cluster, job)
        cluster.close()
