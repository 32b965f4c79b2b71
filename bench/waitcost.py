"""Cost of waiting: a worker pod waits for a head that is absent, first with no DNS record (the
head pod does not exist), then with the port closed (the head pod exists and is Ready, nothing
listens). CPU time and peak RSS of the worker pod's whole process tree over that window, rayboot
against the KubeRay-style loop (tools/kuberay-wait.sh: `ray health-check` then `sleep 5`).

CPU: utime+stime of every process in the pod plus what they reaped (/proc/PID/stat), read at
the end of the window. Peak RSS: the largest sum of VmRSS over the pod's processes, sampled
every 50 ms (a peak between samples can be missed; `ray health-check` lives for seconds)."""
import threading
import time

from common import TOOLS, log, new_cluster, pid_namespace, rayjobs, ratio, remove_pods, tree_cpu_seconds, tree_rss_kb


def _job(mode):
    name = f"wait{mode[0]}"
    manifest = rayjobs.ray_job(name=name, workers=1)
    head = manifest["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
    head["command"] = ["sleep", "1000000"]  # the head pod exists, but no GCS ever listens
    worker = manifest["spec"]["tasks"][1]["template"]["spec"]["containers"][0]
    worker["env"].append({"name": "RAYBOOT_WAIT_TIMEOUT", "value": "3600"})
    if mode == "kuberay":
        fqdn = f"{name}-head-0.{name}.volcano-system.svc.cluster.local:6379"
        worker["command"] = ["bash", str(TOOLS / "kuberay-wait.sh"), fqdn, "--block", "--num-cpus=1"]
        worker["env"].append({"name": "BENCH_RAY", "value": "/bin/false"})
    return manifest


class PeakSampler(threading.Thread):
    def __init__(self, ns, interval=0.05):
        super().__init__(daemon=True)
        self.ns, self.interval, self.peak_kb = ns, interval, 0
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            self.peak_kb = max(self.peak_kb, tree_rss_kb(self.ns))
            self.done.wait(self.interval)


def _measure(cluster, mode, phase_s):
    job = cluster.job(_job(mode))
    worker, head = job.pod("worker", 0), job.pod("head", 0)
    try:
        worker.start()
        ns = pid_namespace(worker.pid1)
        sampler = PeakSampler(ns)
        sampler.start()
        time.sleep(phase_s)  # no DNS record for the head
        head.start()
        time.sleep(phase_s)  # the head's name resolves, its port is closed
        cpu_s = tree_cpu_seconds(ns)
        sampler.done.set()
        sampler.join()
        alive = worker.running()
        return {"cpu_ms": round(cpu_s * 1000), "peak_rss_kb": sampler.peak_kb, "still_waiting": alive,
                "seconds": 2 * phase_s}
    finally:
        remove_pods(cluster, job)


def run(quick):
    phase_s = 10 if quick else 30
    cluster = new_cluster("wait")
    result = {}
    try:
        for mode in ("rayboot", "kuberay"):
            result[mode] = _measure(cluster, mode, phase_s)
            log(f"  waiting {2 * phase_s} s, {mode}: {result[mode]}")
    finally:
        cluster.close()
    result["ratio_cpu"] = ratio(result["kuberay"]["cpu_ms"], max(result["rayboot"]["cpu_ms"], 1))
    result["ratio_rss"] = ratio(result["kuberay"]["peak_rss_kb"], result["rayboot"]["peak_rss_kb"])
    return {"wait_cost": result}
