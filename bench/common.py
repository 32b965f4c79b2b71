"""What every benchmark shares: the pod simulator, the recording `ray` stand-in, process-tree
accounting from /proc, and the statistics. Benchmarks print figures; the one thing checked here is
that a figure can be true (a join before its head could answer is a broken measurement)."""
import os
import pathlib
import platform
import re
import statistics
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
BUILD = REPO / "build"
VENV = BUILD / "venv"
TOOLS = pathlib.Path(__file__).resolve().parent / "tools"
STAMP = BUILD / "bench" / "stamp"  # built by `make bench` from tools/stamp.c
RAYBOOT = BUILD / "bin" / "rayboot"
SIDECAR = BUILD / "bin" / "rayboot-sidecar"
WORKDIR = BUILD / "bench" / "work"  # under the repository: pods see it (podsim keeps the repo visible)

sys.path.insert(0, str(REPO / "tests" / "e2e"))
import podsim  # noqa: E402
import rayjobs  # noqa: E402,F401 (the benchmarks take it from here)
from podsim import wait_until  # noqa: E402,F401

CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def new_cluster(name):
    """A simulated cluster (network, dnsmasq) under build/bench/work/NAME; close() it."""
    return podsim.Cluster(WORKDIR / f"{name}-{os.getpid()}-{time.monotonic_ns()}", VENV, {
        "rayboot": RAYBOOT, "rayboot-sidecar": SIDECAR, "ray": VENV / "bin" / "ray",
        "python": VENV / "bin" / "python"})


def remove_pods(cluster, job):
    """Kills every pod of job and gives back its network namespace, so that one cluster can host
    many runs in turn."""
    for pod in job.pods.values():
        pod.kill()
        if pod.ns:
            cluster._drop_netns(pod.ns)
        cluster.pods.remove(pod)
    cluster._write_dns()


def read_stamps(path):
    """The instants (ns) the `ray` stand-in recorded, in order."""
    p = pathlib.Path(path)
    if not p.exists():
        return []
    return [int(line.split()[0]) for line in p.read_text().splitlines() if line.strip()]


class MeasurementError(Exception):
    """A figure that cannot be true: the run fails instead of averaging it in."""


def read_serving_window(path):
    """(not_before_ns, not_after_ns): the window in which a GCS began to serve, as
    tools/gcs_watch.py and tools/standin_gcs.py write it."""
    fields = pathlib.Path(path).read_text().split()
    not_before, not_after = int(fields[0]), int(fields[1])
    if not_after < not_before:
        raise MeasurementError(f"{path}: the serving window ends before it begins ({fields})")
    return not_before, not_after


def join_latencies_ms(joins_ns, window, what):
    """Each join's latency after SERVING, bounded on both sides: (low, high) lists in ms, where
    low counts from the window's end (the latest SERVING can have begun) and high from its start
    (the earliest). A join before the window's start is impossible: MeasurementError."""
    not_before, not_after = window
    early = [t for t in joins_ns if t < not_before]
    if early:
        raise MeasurementError(f"{what}: {len(early)} join(s) up to {(not_before - min(early)) / 1e6:.1f} ms "
                               "before the GCS could have been serving: the clock, not the worker, is wrong")
    return [(t - not_after) / 1e6 for t in joins_ns], [(t - not_before) / 1e6 for t in joins_ns]


# Process trees ----------------------------------------------------------------------------------
def pid_namespace(pid):
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def pids_in_namespace(ns):
    """Every live process whose PID namespace is ns (a pod's whole process tree)."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and pid_namespace(entry.name) == ns:
            found.append(int(entry.name))
    return found


def stat_fields(pid):
    """/proc/PID/stat after the command name: fields 3.. as strings."""
    raw = pathlib.Path(f"/proc/{pid}/stat").read_text()
    return raw[raw.rindex(")") + 2:].split()


def process_cpu_ns(pid):
    """Nanoseconds on CPU of pid's every thread, the exited ones too: the process's CPU clock
    (clock_getcpuclockid(3)'s id, computed: the kernel's sum_exec_runtime of the live threads plus
    what exited threads left in the process). /proc/PID/task/*/schedstat counts the same
    nanoseconds but only for threads still alive."""
    return time.clock_gettime_ns(((~pid) << 3) | 2)  # MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)


def threads_schedstat_ns(pid):
    """The first field of /proc/PID/task/TID/schedstat (ns on CPU), summed over live threads."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            total += int(pathlib.Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()[0])
        except (OSError, IndexError):
            pass
    return total


def tree_cpu(ns):
    """CPU of a whole pod, exactly: {"ns": live processes' CPU clocks + what each reaped (cutime +
    cstime: the exact sum of the reaped children's run time, each field cut to a tick by /proc, so
    under two ticks short per reaper, not per child), "ticks_s": the same tree the old way (utime+stime+cutime+cstime in ticks, in seconds),
    "pid1": {"ns", "reaped_ticks"} of the pod's PID 1 alone, "procs": how many were read,
    "schedstat_ns": the live threads' schedstat, a lower bound checked against each clock,
    "reaped_ticks": the part reaped}. A
    process that exited unreaped is lost, as before; in a pod every process is reaped."""
    total_ns, ticks, pid1, procs, schedstat_ns, reaped_total = 0, 0, None, 0, 0, 0
    for pid in pids_in_namespace(ns):
        try:
            f = stat_fields(pid)
            schedstat = threads_schedstat_ns(pid)
            cpu_ns = process_cpu_ns(pid)  # read second: never below the threads' sum
            reaped = int(f[13]) + int(f[14])
            nspid = [line.split()[-1] for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines()
                     if line.startswith("NSpid:")]
        except (OSError, IndexError):
            continue  # it exited while being read: its parent's reaped ticks have it next time
        total_ns += cpu_ns + reaped * 1_000_000_000 // CLK_TCK
        ticks += int(f[11]) + int(f[12]) + reaped
        schedstat_ns += schedstat
        reaped_total += reaped
        procs += 1
        if cpu_ns < schedstat:
            raise MeasurementError(f"pid {pid}: its CPU clock says {cpu_ns} ns, its threads' schedstat {schedstat} ns")
        if nspid == ["1"]:
            pid1 = {"ns": cpu_ns, "reaped_ticks": reaped}
    return {"ns": total_ns, "ticks_s": ticks / CLK_TCK, "pid1": pid1, "procs": procs, "schedstat_ns": schedstat_ns,
            "reaped_ticks": reaped_total}


def _proc_kb(path, key):
    """The kB figure on the line `key:` of a /proc file; 0 when the process is gone."""
    try:
        for line in pathlib.Path(path).read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def rss_kb(pid):
    return _proc_kb(f"/proc/{pid}/status", "VmRSS")


def pss_kb(pid):
    """Proportional set size: each shared page split among the processes that map it (what the
    pod adds to the node, where RSS counts a shared page once per process)."""
    return _proc_kb(f"/proc/{pid}/smaps_rollup", "Pss")


def tree_memory_kb(ns):
    """(sum of VmRSS, sum of Pss) over a pod's processes."""
    pids = pids_in_namespace(ns)
    return sum(rss_kb(pid) for pid in pids), sum(pss_kb(pid) for pid in pids)


def exe_of(pid):
    try:
        return os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return None


# The head pod's SYN counter ---------------------------------------------------------------
def syn_counter(pod, create=False):
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


# Statistics ------------------------------------------------------------------------------------
def percentile(values, p):
    """Nearest-rank percentile: a value that was measured, never an interpolation."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * p // 100))  # ceil(n * p / 100)
    return ordered[int(rank) - 1]


def summary_ms(values_ms):
    return {"p50": round(statistics.median(values_ms), 1) if values_ms else None,
            "p99": round(percentile(values_ms, 99), 1) if values_ms else None,
            "n": len(values_ms)}


def ratio(a, b):
    """a / b, rounded, or None when either is missing or b is zero."""
    if a is None or b in (None, 0):
        return None
    return round(a / b, 1)


def machine():
    cpu = "unknown"
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_kb = 0
    for line in pathlib.Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            mem_kb = int(line.split()[1])
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gib": round(mem_kb / 1048576, 1),
            "kernel": platform.release(), "os": _os_name()}


def _os_name():
    try:
        for line in pathlib.Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip('"')
    except OSError:
        pass
    return platform.system()


def ray_version():
    r = subprocess.run([str(VENV / "bin" / "python"), "-c", "import ray; print(ray.__version__)"],
                       capture_output=True, text=True, timeout=120)
    return r.stdout.strip() or None
