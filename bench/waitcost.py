"""Cost of waiting: a worker pod waits for a head that is absent, first with no DNS record (the
head pod does not exist), then with the head pod up and its GCS never serving. CPU time and peak
RSS of the worker pod's whole process tree over that window, rayboot against the KubeRay-style
loop (tools/kuberay-wait.sh: `ray health-check` then `sleep 5`).

rayboot is measured with the head rayboot's rendezvous held (`rayboot`: the head runs rayboot,
whose Ray is a stand-in that never brings a GCS up) and without one (`rayboot_fallback`: the head
pod runs `sleep`, so the port is closed and the worker polls the GCS). With BENCH_RAYBOOT_BEFORE
naming an older rayboot binary, that one is measured in the fallback too (`rayboot_before`): CPU
per attempt before and after the prober ran its own poll loop (issue 20 §3). An attempt is one
SYN at the head (an nftables counter in the head pod), counted in the second phase. The older
binary is measured with its head's rendezvous held as well (`rayboot_before_held`, its head also
running the older binary), for ratios before and after side by side.

CPU, exactly: every live process's CPU clock (clock_getcpuclockid(3): the kernel's nanoseconds on
CPU, its exited threads included; checked against /proc/PID/task/*/schedstat, which counts the
live threads alone), plus what each process reaped (cutime+cstime: the exact sum of the reaped
children's run time, each field shown cut to a 10 ms tick: under two ticks per reaper). The pod's
PID 1 began as tests/e2e/podinit.py (Python, making the pod's mounts) and exec'd the entrypoint
with its counters: what podinit recorded just before the exec is subtracted. The old figure, whole
10 ms ticks from /proc/PID/stat without that subtraction, is printed next to it (`cpu_ms_ticks`).
A figure that cannot be true fails the run: no podinit record, a negative or zero CPU time, a
clock below its threads' schedstat, ticks and clocks that disagree beyond the ticks' resolution.

Memory: the largest sum of VmRSS over the pod's processes, and apart from it the largest sum of Pss
(/proc/PID/smaps_rollup: a page shared by n processes counts 1/n, other pods' too: the held
head's rayboot maps the same binary), sampled every 50 ms (a peak between samples can be missed;
`ray health-check` lives for seconds). `processes` is the pod at the end: VmRSS, RssAnon and Pss
of each process."""
import json
import os
import pathlib
import threading
import time

import podsim
from common import (
    CLK_TCK,
    SIDECAR,
    STAMP,
    TOOLS,
    VENV,
    WORKDIR,
    MeasurementError,
    log,
    new_cluster,
    pid_namespace,
    pids_in_namespace,
    pss_kb,
    ratio,
    rayjobs,
    remove_pods,
    syn_counter,
    tree_cpu,
    tree_memory_kb,
)

MODES = ("rayboot", "rayboot_fallback", "kuberay")
BEFORE_MODES = ("rayboot_before", "rayboot_before_held")
HELD = ("rayboot", "rayboot_before_held")  # the head runs rayboot and holds the rendezvous
TICK_NS = 1_000_000_000 // CLK_TCK


def _job(mode, stamps):
    name = {"rayboot": "waitr", "rayboot_fallback": "waitf", "rayboot_before": "waitb", "rayboot_before_held": "waith",
            "kuberay": "waitk"}[mode]
    manifest = rayjobs.ray_job(name=name, workers=1)
    head = manifest["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
    if mode in HELD:
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


class PeakSampler(threading.Thread):
    def __init__(self, ns, interval=0.05):
        super().__init__(daemon=True)
        self.ns, self.interval, self.peak_kb, self.peak_pss_kb = ns, interval, 0, 0
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            rss, pss = tree_memory_kb(self.ns)
            self.peak_kb, self.peak_pss_kb = max(self.peak_kb, rss), max(self.peak_pss_kb, pss)
            self.done.wait(self.interval)


def _status_kb(pid, *keys):
    values = dict.fromkeys(keys, 0)
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in values:
            values[key] = int(value.split()[0])
    return values


def _processes(ns):
    """The pod's processes now: name, VmRSS, RssAnon and Pss in kB."""
    out = []
    for pid in sorted(pids_in_namespace(ns)):
        try:
            kb = _status_kb(pid, "VmRSS", "RssAnon")
            name = pathlib.Path(f"/proc/{pid}/comm").read_text().strip()
            out.append({"name": name, "rss_kb": kb["VmRSS"], "rss_anon_kb": kb["RssAnon"], "pss_kb": pss_kb(pid)})
        except OSError:
            pass
    return out


def _before_exec(pod):
    """What the pod's PID 1 had spent as podinit.py before it exec'd the entrypoint, in ns."""
    path = pod.dir / f"spec-{pod.incarnation}.json.cpu"
    try:
        rec = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise MeasurementError(f"{path}: podinit's CPU before the exec is unknown ({e})") from e
    if rec["cpu_ns"] <= 0 or rec["clk_tck"] != CLK_TCK:
        raise MeasurementError(f"{path}: {rec}: no CPU before the exec is impossible (a zero baseline)")
    return rec


def _check(cpu, rec, what):
    """The pod's CPU now, net of podinit, in ns; MeasurementError if it cannot be true."""
    if cpu["pid1"] is None:
        raise MeasurementError(f"{what}: the pod's PID 1 is gone: nothing to measure")
    if cpu["pid1"]["ns"] < rec["cpu_ns"] or cpu["pid1"]["reaped_ticks"] < rec["reaped_ticks"]:
        raise MeasurementError(f"{what}: PID 1 spent less ({cpu['pid1']}) than podinit before the exec ({rec})")
    # /proc/PID/stat's utime and stime are the same run time, scaled and cut to ticks: the two
    # sums may differ by two ticks a process (and a tick for the read between), no more.
    slack = (2 * cpu["procs"] + 1) * TICK_NS
    if abs(cpu["ticks_s"] * 1e9 - cpu["ns"]) > slack:
        raise MeasurementError(f"{what}: {cpu['ns'] / 1e6:.2f} ms by the CPU clocks, {cpu['ticks_s'] * 1e3:.0f} ms "
                               f"in ticks: more apart than {slack / 1e6:.0f} ms of ticks allow")
    net = cpu["ns"] - rec["cpu_ns"] - rec["reaped_ticks"] * TICK_NS
    if net <= 0:
        raise MeasurementError(f"{what}: {net} ns of CPU after the exec: impossible for a running pod")
    return net


def _measure(cluster, mode, phase_s):
    job = cluster.job(_job(mode, cluster.dir / f"stamps-{mode}"))
    worker, head = job.pod("worker", 0), job.pod("head", 0)
    try:
        worker.start()
        ns = pid_namespace(worker.pid1)
        rec = _before_exec(worker)
        sampler = PeakSampler(ns)
        sampler.start()
        time.sleep(phase_s)  # no DNS record for the head
        head.start()
        syn_counter(head, create=True)
        cpu_mid = tree_cpu(ns)
        time.sleep(phase_s)  # the head's name resolves, its GCS never serves
        cpu_end = tree_cpu(ns)
        syns = syn_counter(head)
        processes = _processes(ns)
        sampler.done.set()
        sampler.join()
        alive = worker.running()
        mid_ns, end_ns = _check(cpu_mid, rec, f"{mode} at {phase_s} s"), _check(cpu_end, rec, f"{mode} at the end")
        if end_ns < mid_ns:
            raise MeasurementError(f"{mode}: the pod's CPU went down, {mid_ns} ns then {end_ns} ns")
        result = {"cpu_ms": round(end_ns / 1e6, 2), "cpu_ms_ticks": round(cpu_end["ticks_s"] * 1000),
                  "cpu_ms_podinit": round((rec["cpu_ns"] + rec["reaped_ticks"] * TICK_NS) / 1e6, 2),
                  "cpu_ms_reaped": (cpu_end["reaped_ticks"] - rec["reaped_ticks"]) * TICK_NS // 1_000_000,
                  "peak_rss_kb": sampler.peak_kb, "peak_pss_kb": sampler.peak_pss_kb, "processes": processes,
                  "still_waiting": alive, "seconds": 2 * phase_s, "cpu_ms_unresolved": round(mid_ns / 1e6, 2),
                  "cpu_ms_resolved": round((end_ns - mid_ns) / 1e6, 2), "syns_resolved": syns}
        if syns and mode not in HELD:  # held, a SYN is a safety probe every 5 s, not a poll
            result["cpu_us_per_attempt"] = round((end_ns - mid_ns) / 1e3 / syns, 1)
        return result
    finally:
        remove_pods(cluster, job)


def _ratios(result, reference, name, suffix):
    """KubeRay's cost over rayboot's (mode name), exact and in ticks, RSS and PSS."""
    kuberay, ours = result[reference], result[name]
    result["ratio_cpu" + suffix] = ratio(kuberay["cpu_ms"], ours["cpu_ms"])
    result["ratio_cpu_ticks" + suffix] = ratio(kuberay["cpu_ms_ticks"], max(ours["cpu_ms_ticks"], 1))
    result["ratio_rss" + suffix] = ratio(kuberay["peak_rss_kb"], ours["peak_rss_kb"])
    result["ratio_pss" + suffix] = ratio(kuberay["peak_pss_kb"], ours["peak_pss_kb"])


PHASE_S = {"full": 30, "quick": 10, "smoke": 3}  # each of the two waits, per size


def run(size):
    phase_s = PHASE_S[size]
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
        # The same waits with an older binary, in a cluster whose `rayboot` is that one.
        cluster = podsim.Cluster(WORKDIR / f"waitb-{os.getpid()}-{time.monotonic_ns()}", VENV, {
            "rayboot": pathlib.Path(before), "rayboot-sidecar": SIDECAR, "ray": VENV / "bin" / "ray",
            "python": VENV / "bin" / "python"})
        try:
            for mode in BEFORE_MODES:
                result[mode] = _measure(cluster, mode, phase_s)
                log(f"  waiting {2 * phase_s} s, {mode} ({before}): {result[mode]}")
        finally:
            cluster.close()
    if result["kuberay"]["cpu_ms"] <= 0:
        raise MeasurementError(f"kuberay: {result['kuberay']['cpu_ms']} ms of CPU: no reference to compare with")
    _ratios(result, "kuberay", "rayboot", "")
    _ratios(result, "kuberay", "rayboot_fallback", "_fallback")
    if before:
        _ratios(result, "kuberay", "rayboot_before_held", "_before")
    return {"wait_cost": result}
