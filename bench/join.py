"""Join latency (real Ray): head and worker pods start together, as gang scheduling starts them.
For each worker: the time from the head's GCS first answering Health/Check SERVING (seen by an
independent watcher polling every ~2 ms from the cluster network) to the instant the worker
execs `ray` to start its node. rayboot workers against workers that wait the way KubeRay's
`wait-gcs-ready` init container does (tools/kuberay-wait.sh). Runs alternate A B A B.

The workers' `ray` is the recording stand-in (tools/stamp.c), which then holds: the instant of the
exec is what is measured, and starting real raylets on the same two cores would slow the other
workers' measurement. The head is real Ray, started by rayboot in both modes."""
import subprocess

from common import (STAMP, TOOLS, VENV, log, new_cluster, read_stamps, remove_pods, rayjobs, summary_ms,
                    ratio, wait_until)

GCS_PORT = 6379


def _job(mode, run, workers, stamps):
    job_name = f"join{mode[0]}{run}"
    manifest = rayjobs.ray_job(name=job_name, workers=workers, head_command=["sleep", "1000000"])
    worker = manifest["spec"]["tasks"][1]["template"]["spec"]["containers"][0]
    worker["env"] += [{"name": "BENCH_STAMP_FILE", "value": str(stamps)}, {"name": "BENCH_HOLD", "value": "1"}]
    if mode == "rayboot":
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
    watcher = subprocess.Popen(["ip", "netns", "exec", cluster.ns, str(VENV / "bin" / "python"),
                                str(TOOLS / "gcs_watch.py"), f"{head_ip}:{GCS_PORT}", str(serving), "240"],
                               stdout=subprocess.PIPE, text=True)
    try:
        watcher.stdout.readline()  # "watching": its imports are done
        job.start()
        assert job.pod("head").ip == head_ip, "the head pod did not get the address the watcher watches"
        wait_until(lambda: len(read_stamps(stamps)) >= workers, 240, f"{workers} {mode} workers to exec ray",
                   interval=0.2)
        watcher.wait(timeout=30)
        t_serving = int(serving.read_text())
        return [(t - t_serving) / 1e6 for t in read_stamps(stamps)]
    finally:
        if watcher.poll() is None:
            watcher.kill()
            watcher.wait()
        remove_pods(cluster, job)


def run(quick):
    runs, workers = (3, 2) if quick else (10, 2)
    cluster = new_cluster("join")
    samples = {"rayboot": [], "kuberay": []}
    try:
        for i in range(runs):
            for mode in ("rayboot", "kuberay"):
                got = _one_run(cluster, mode, i, workers)
                log(f"  join run {i + 1}/{runs} {mode}: " + ", ".join(f"{ms:.1f} ms" for ms in got))
                samples[mode] += got
    finally:
        cluster.close()
    result = {mode: summary_ms(values) for mode, values in samples.items()}
    result["ratio_p50"] = ratio(result["kuberay"]["p50"], result["rayboot"]["p50"])
    result["runs"], result["workers_per_run"] = runs, workers
    return {"join_latency_ms": result}
