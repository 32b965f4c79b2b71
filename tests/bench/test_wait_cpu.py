"""The waiting-cost benchmark's CPU accounting (bench/common.py's tree_cpu, bench/waitcost.py's
checks): nanoseconds that include a process's exited threads and its reaped children, and a run
that fails rather than print a figure that cannot be true."""
import json
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(REPO / "bench"))
import common  # noqa: E402
import waitcost  # noqa: E402

# PID 1 of a fresh PID namespace: burns CPU in a thread that exits and in a child it reaps, tells
# what it spent by its own clocks, then waits to be measured.
WORKLOAD = r"""
import os, resource, sys, threading, time
def burn(s):
    end = time.thread_time() + s
    while time.thread_time() < end:
        pass
t = threading.Thread(target=burn, args=(0.15,)); t.start(); t.join()
pid = os.fork()
if pid == 0:
    burn(0.1)
    os._exit(0)
os.waitpid(pid, 0)
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
print(time.clock_gettime_ns(time.CLOCK_PROCESS_CPUTIME_ID), int((kids.ru_utime + kids.ru_stime) * 1e9), flush=True)
time.sleep(60)
"""


def test_tree_cpu_counts_exited_threads_and_reaped_children():
    proc = subprocess.Popen(["unshare", "--pid", "--fork", "--kill-child", "--mount-proc", sys.executable, "-c", WORKLOAD],
                            stdout=subprocess.PIPE, text=True)
    try:
        own_ns, reaped_ns = (int(x) for x in proc.stdout.readline().split())
        pid1 = int(pathlib.Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()[0])
        cpu = common.tree_cpu(common.pid_namespace(pid1))
    finally:
        proc.kill()
        proc.wait()
    assert cpu["procs"] == 1 and cpu["pid1"] is not None
    assert own_ns >= 150e6 and reaped_ns >= 90e6, (own_ns, reaped_ns)
    # The exited thread's 150 ms: in the process's clock, not in its live threads' schedstat.
    assert cpu["pid1"]["ns"] >= own_ns and cpu["pid1"]["ns"] - own_ns < 20e6, (cpu, own_ns)
    assert cpu["schedstat_ns"] < own_ns - 140e6, cpu
    # The reaped child, less what /proc's two tick-cut fields (cutime, cstime) drop.
    total = cpu["pid1"]["ns"] + reaped_ns
    assert 0 <= total - cpu["ns"] < 2 * waitcost.TICK_NS, (cpu, total)


REC = {"cpu_ns": 20_000_000, "reaped_ticks": 0, "clk_tck": common.CLK_TCK}
GOOD = {"ns": 26_000_000, "ticks_s": 0.02, "pid1": {"ns": 23_000_000, "reaped_ticks": 0}, "procs": 2}


def test_check_gives_the_cpu_after_the_exec():
    assert waitcost._check(GOOD, REC, "pod") == 6_000_000


@pytest.mark.parametrize("cpu, why", [
    (dict(GOOD, pid1=None), "PID 1 is gone"),
    (dict(GOOD, pid1={"ns": 1, "reaped_ticks": 0}), "spent less"),
    (dict(GOOD, ticks_s=0.5), "more apart"),
    (dict(GOOD, ns=20_000_000), "impossible"),
])
def test_check_refuses_what_cannot_be_true(cpu, why):
    with pytest.raises(common.MeasurementError, match=why):
        waitcost._check(cpu, REC, "pod")


class _Pod:
    def __init__(self, where):
        self.dir, self.incarnation = where, 1


def test_podinit_record_missing_or_zero_fails(tmp_path):
    with pytest.raises(common.MeasurementError, match="unknown"):
        waitcost._before_exec(_Pod(tmp_path))
    (tmp_path / "spec-1.json.cpu").write_text(json.dumps(dict(REC, cpu_ns=0)))
    with pytest.raises(common.MeasurementError, match="zero baseline"):
        waitcost._before_exec(_Pod(tmp_path))
    (tmp_path / "spec-1.json.cpu").write_text(json.dumps(REC))
    assert waitcost._before_exec(_Pod(tmp_path)) == REC
