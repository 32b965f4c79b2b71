"""Cost of waiting: a worker pod waits for a head that is absent, first with no DNS record (the
head pod does not exist), then with the head pod up and its GCS never serving. CPU time and peak
RSS of the worker pod's whole process tree over that window, rayboot against the KubeRay-style
loop (tools/kuberay-wait.sh: `ray health-check` then `sleep 5`).

rayboot is measured with the head rayboot's rendezvous held (`rayboot`: the head runs rayboot,
whose Ray is a stand-in that never brings a GCS up) and without one (`rayboot_fallback`: the head
pod runs `sleep`, so the port is closed and the worker polls the GCS). With BENCH_RAYBOOT_BEFORE
naming an older rayboot binary, that one is measured in the fallback too (`rayboot_before`): CPU
per attempt before and after the prober ran its own poll loop (issue 20 §3). An attempt is one
SYN at the head (an nftables counter in the head pod), counted in the second phase.

CPU: utime+stime of every process in the pod plus what they reaped (/proc/PID/stat). Peak RSS:
the largest sum of VmRSS over the pod's processes, sampled every 50 ms (a peak between samples can
be missed; `ray health-check` lives for seconds)."""
import os
import pathlib
import re
import threading
import time

import podsim
from common import (RAYBOOT, SIDECAR, STAMP, TOOLS, VENV, WORKDIR, log, new_cluster, pid_namespace, rayjobs, ratio,
                    remove_pods, tree_cpu_seconds, tree_rss_kb)

MODES = ("rayboot", "rayboot_fallback", "kuberay")


def _job(mode, stamps):
    name = {"rayboot": "waitr", "rayboot_fallback": "waitf", "rayboot_before": "waitb", "kuberay": "waitk"}[mode]
    manifest = rayjobs.ray_job(name=name, workers=1)
    head = manifest["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
    if mode == "rayboot":
        # rayboot on the head, its rendezvous open, its Ray a stand-in that holds: no GCS ever serves.
        head["env"] += [{"name": "RAYBOOT_RAY", "value": str(STAMP)}, {"name": "BENCH_HOLD", "value": "1"},
                        {"name": "BENCH_STAMP_FILE", "value": str(stamps)},
                        {"name": "RAYBOOT_WAIT_TIMEOUT", "value": "3600"}]
    else:
        head["command"] = ["sleep", "1000000"]  # the head pod exists, but nothing listens
    worker = manifest["spec"]["tasks"][1]["template"]["spec"]["containers"][0]
    worker["env"].append({"name": "RAYBOOT_WAIT_TIMEOUT", "value": "3600"})
    if mode == "kuberay":
        fqdn = f"{name}-head-0.{name}.volcano-system.svc.cluster.local:6379"
        worker["command"] = ["bash", str(TOOLS / "kuberay-wait.sh"), fqdn, "--block", "--num-cpus=1"]
        worker["env"].append({"name": "BENCH_RAY", "value": "/bin/false"})
    return manifest


def _syn_counter(pod, create=False):
    """SYNs that reached the head pod from outside it, on any port (not the head rayboot's own
    polls of its GCS on loopback)."""
    if create:
        for rule in (["add", "table", "inet", "bench"],
                     ["add", "chain", "inet", "bench", "in", "{", "type", "filter", "hook", "input", "priority", "0",
                      ";", "}"],
                     ["add", "rule", "inet", "bench", "in", "iifname", "!=", "lo", "tcp", "flags", "&", "(syn|ack)",
                      "==", "syn", "counter"]):
            podsim.run("ip", "netns", "exec", pod.ns, "nft", *rule)
        return 0
    out = podsim.run("ip", "netns", "exec", pod.ns, "nft", "list", "chain", "inet", "bench", "in").stdout
    return int(re.search(r"counter packets (\d+)", out).group(1))


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
    job = cluster.job(_job(mode, cluster.dir / f"stamps-{mode}"))
    worker, head = job.pod("worker", 0), job.pod("head", 0)
    try:
        worker.start()
        ns = pid_namespace(worker.pid1)
        sampler = PeakSampler(ns)
        sampler.start()
        time.sleep(phase_s)  # no DNS record for the head
        head.start()
        _syn_counter(head, create=True)
        cpu_mid = tree_cpu_seconds(ns)
        time.sleep(phase_s)  # the head's name resolves, its GCS never serves
        cpu_s = tree_cpu_seconds(ns)
        syns = _syn_counter(head)
        sampler.done.set()
        sampler.join()
        alive = worker.running()
        result = {"cpu_ms": round(cpu_s * 1000), "peak_rss_kb": sampler.peak_kb, "still_waiting": alive,
                  "seconds": 2 * phase_s, "cpu_ms_unresolved": round(cpu_mid * 1000),
                  "cpu_ms_resolved": round((cpu_s - cpu_mid) * 1000), "syns_resolved": syns}
        if syns and mode != "rayboot":  # held, a SYN is a safety probe every 5 s, not a poll
            result["cpu_us_per_attempt"] = round((cpu_s - cpu_mid) * 1e6 / syns)
        return result
    finally:
        remove_pods(cluster, job)


def run(quick):
    phase_s = 10 if quick else 30
    result = {}
    cluster = new_cluster("wait")
    try:
        for mode in MODES:
            result[mode] = _measure(cluster, mode, phase_s)
            log(f"  waiting {2 * phase_s} s, {mode}: {result[mode]}")
    finally:
        cluster.close()
    before = os.environ.get("BENCH_RAYBOOT_BEFORE")
    if before:
        # The same fallback wait with an older binary, in a cluster whose `rayboot` is that one.
        cluster = podsim.Cluster(WORKDIR / f"waitb-{os.getpid()}-{time.monotonic_ns()}", VENV, {
            "rayboot": pathlib.Path(before), "rayboot-sidecar": SIDECAR, "ray": VENV / "bin" / "ray",
            "python": VENV / "bin" / "python"})
        try:
            result["rayboot_before"] = _measure(cluster, "rayboot_before", phase_s)
            log(f"  waiting {2 * phase_s} s, rayboot_before ({before}): {result['rayboot_before']}")
        finally:
            cluster.close()
    result["ratio_cpu"] = ratio(result["kuberay"]["cpu_ms"], max(result["rayboot"]["cpu_ms"], 1))
    result["ratio_rss"] = ratio(result["kuberay"]["peak_rss_kb"], result["rayboot"]["peak_rss_kb"])
    result["ratio_cpu_fallback"] = ratio(result["kuberay"]["cpu_ms"], max(result["rayboot_fallback"]["cpu_ms"], 1))
    result["ratio_rss_fallback"] = ratio(result["kuberay"]["peak_rss_kb"], result["rayboot_fallback"]["peak_rss_kb"])
    return {"wait_cost": result}
