"""Join latency (real Ray): head and worker pods start together, as gang scheduling starts them.
For each worker: the time from the head's GCS first answering Health/Check SERVING to the instant
the worker execs `ray` to start its node. rayboot workers are measured twice: woken by the head
rayboot's rendezvous (the default), and with the head offering none (RAYBOOT_RENDEZVOUS_PORT=0 on
the head: the workers find the port closed and poll the GCS, the fallback). An independent watcher on the cluster network
(tools/gcs_watch.py, a look about every millisecond) bounds the SERVING instant by a window, and
each latency is reported against both ends: `high` (from the earliest SERVING can have begun, the
figure the targets are read on) and `low` (from the latest). A join before the window fails the
run (MeasurementError). rayboot workers against workers that wait the way KubeRay's
`wait-gcs-ready` init container does (tools/kuberay-wait.sh). Runs alternate A B C A B C.

The workers' `ray` is the recording stand-in (tools/stamp.c), which then holds: the instant of the
exec is what is measured, and starting real raylets on the same two cores would slow the other
workers' measurement. The head is real Ray, started by rayboot in both modes."""
import subprocess

from common import (
    STAMP,
    TOOLS,
    VENV,
    join_latencies_ms,
    log,
    new_cluster,
    ratio,
    rayjobs,
    read_serving_window,
    read_stamps,
    remove_pods,
    summary_ms,
    wait_until,
)

GCS_PORT = 6379


def _job(mode, run, workers, stamps):
    job_name = f"join{mode[0]}{'f' if mode.endswith('fallback') else ''}{run}"
    manifest = rayjobs.ray_job(name=job_name, workers=workers, head_command=["sleep", "1000000"])
    worker = manifest["spec"]["tasks"][1]["template"]["spec"]["containers"][0]
    if mode == "rayboot_fallback":
        head = manifest["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
        head["env"].append({"name": "RAYBOOT_RENDEZVOUS_PORT", "value": "0"})
    worker["env"] += [{"name": "BENCH_STAMP_FILE", "value": str(stamps)}, {"name": "BENCH_HOLD", "value": "1"}]
    if mode.startswith("rayboot"):
        worker["env"].append({"name": "RAYBOOT_RAY", "value": str(STAMP)})
    else:
        fqdn = f"{job_name}-head-0.{job_name}.volcano-system.svc.cluster.local:{GCS_PORT}"
        worker["command"] = ["bash", str(TOOLS / "kuberay-wait.sh"), fqdn, "--block", "--num-cpus=1"]
        worker["env"].append({"name": "BENCH_RAY", "value": str(STAMP)})
    return manifest


def _one_run(cluster, mode, run, workers):
    stamps = cluster.dir / f"stamps-{mode}-{run}"
    serving = cluster.dir / f"serving-{mode}-{run}"
    job = cluster.job(_job(mode, run, workers, stamps))
    head_ip = cluster.address(cluster.next_host)  # the head pod is created first
    watcher = None
    try:
        job.start()
        assert job.pod("head").ip == head_ip, "the head pod did not get the address the watcher watches"
        # Started once the head's address exists: looks at an address nobody holds yet prove
        # nothing (ARP fails, and is retried only every second), which would widen the window.
        # Ray needs most of a second to bring its GCS up, so the first looks see it closed.
        watcher = subprocess.Popen(["ip", "netns", "exec", cluster.ns, str(VENV / "bin" / "python"),
                                    str(TOOLS / "gcs_watch.py"), f"{head_ip}:{GCS_PORT}", str(serving), "240"],
                                   stdout=subprocess.PIPE, text=True)
        watcher.stdout.readline()  # "watching"
        wait_until(lambda: len(read_stamps(stamps)) >= workers, 240, f"{workers} {mode} workers to exec ray",
                   interval=0.2)
        watcher.wait(timeout=30)
        window = read_serving_window(serving)
        return window, join_latencies_ms(read_stamps(stamps), window, f"join run {run + 1} {mode}")
    finally:
        if watcher and watcher.poll() is None:
            watcher.kill()
            watcher.wait()
        remove_pods(cluster, job)


RUNS = {"full": 10, "quick": 3, "smoke": 1}  # runs of each mode, per size
WORKERS = 2


def run(size):
    runs, workers = RUNS[size], WORKERS
    cluster = new_cluster("join")
    modes = ("rayboot", "rayboot_fallback", "kuberay")
    high = {mode: [] for mode in modes}
    low = {mode: [] for mode in modes}
    windows = []
    try:
        for i in range(runs):
            for mode in modes:
                (not_before, not_after), (lo, hi) = _one_run(cluster, mode, i, workers)
                windows.append((not_after - not_before) / 1e6)
                log(f"  join run {i + 1}/{runs} {mode}: " +
                    ", ".join(f"{a:.1f}..{b:.1f} ms" for a, b in zip(lo, hi, strict=True)) +
                    f" (SERVING known to {windows[-1]:.1f} ms)")
                high[mode] += hi
                low[mode] += lo
    finally:
        cluster.close()
    result = {mode: summary_ms(values) for mode, values in high.items()}
    for mode, values in low.items():
        result[mode]["low"] = summary_ms(values)
    result["serving_window_ms"] = summary_ms(windows)
    result["ratio_p50"] = ratio(result["kuberay"]["p50"], result["rayboot"]["p50"])
    result["ratio_p50_fallback"] = ratio(result["kuberay"]["p50"], result["rayboot_fallback"]["p50"])
    result["runs"], result["workers_per_run"] = runs, workers
    return {"join_latency_ms": result}
