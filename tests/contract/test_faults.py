"""Rows of the fault matrix (tests/FAULTS.md) that the other contract tests do not already cover:
signals at awkward moments, Ray killed under the command, commands that ignore SIGTERM, daemonize
or leave their process group. rayboot runs as PID 1 of a PID namespace of its own where what is
left running matters, as in a pod."""
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

from test_pid1 import head_env, ray_started

PY = sys.executable
SLEEP = ["--", PY, "-c", "import time; time.sleep(120)"]


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def host_pid(ns_pid, pid1_host):
    """The PID, as this test sees it, of the process that is ns_pid inside pid1_host's namespace."""
    ns = os.readlink(f"/proc/{pid1_host}/ns/pid")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.readlink(f"/proc/{entry}/ns/pid") != ns:
                continue
            for line in open(f"/proc/{entry}/status"):
                if line.startswith("NSpid:") and int(line.split()[-1]) == ns_pid:
                    return int(entry)
        except OSError:
            continue
    raise AssertionError(f"no process {ns_pid} in the namespace of {pid1_host}")


def wait_for_file(path, timeout=15):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().endswith("\n"):
            return path.read_text()
        time.sleep(0.02)
    raise AssertionError(f"{path} never written")


HERE = pathlib.Path(__file__).resolve().parent


@pytest.fixture
def pod_env(pod_root, tmp_path, gcs):
    """What the `run` fixture gives rayboot: a pod's files, the fake ray, head of the fake GCS."""
    def make(**extra):
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOSTNAME": "pod-0", "RAYBOOT_ROOT": str(pod_root),
               "RAYBOOT_RAY": str(HERE / "fake_ray.py"), "FAKE_RAY_LOG": str(tmp_path / "ray.log"),
               "RAYBOOT_GRACE_PERIOD": "8"}
        env.update(head_env(gcs, **extra))
        return env
    return make


@pytest.fixture
def pid1(rayboot_bin, tmp_path):
    """rayboot as PID 1 of a fresh PID namespace with its own /proc (unshare), as in a pod; its
    stderr in a file."""
    procs = []

    def start(env, args):
        err = open(tmp_path / f"rayboot-{len(procs)}.err", "w")
        proc = subprocess.Popen(["unshare", "--pid", "--fork", "--mount", "--mount-proc", "--kill-child", str(rayboot_bin), *args],
                                env=env, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
        proc.err_path = tmp_path / f"rayboot-{len(procs)}.err"
        procs.append(proc)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            kids = open(f"/proc/{proc.pid}/task/{proc.pid}/children").read().split()
            if kids:
                proc.rayboot_pid = int(kids[0])
                return proc
            time.sleep(0.01)
        raise AssertionError("rayboot did not start")

    yield start
    for proc in procs:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def wait_log(proc, needle, timeout=15):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = proc.err_path.read_text()
        if needle in text:
            return text
        if proc.poll() is not None:
            break
        time.sleep(0.02)
    raise AssertionError(f"no {needle!r} in:\n{proc.err_path.read_text()}")


# A command that takes a second to stop on SIGTERM: the pod is still stopping at the second one.
SLOW_STOP = ["--", PY, "-c", "import signal, sys, time\n"
             "signal.signal(signal.SIGTERM, lambda *_: (time.sleep(1), sys.exit(128 + signal.SIGTERM)))\n"
             "print('handler set', file=sys.stderr, flush=True)\n"
             "time.sleep(120)\n"]


def test_sigterm_twice_is_one_graceful_stop(pid1, pod_env, tmp_path):
    env = pod_env()
    p = pid1(env, SLOW_STOP)
    wait_log(p, "handler set")
    t0 = time.monotonic()
    os.kill(p.rayboot_pid, signal.SIGTERM)
    time.sleep(0.1)
    os.kill(p.rayboot_pid, signal.SIGTERM)
    assert p.wait(20) == 128 + signal.SIGTERM, p.err_path.read_text()  # the head's command, stopped
    assert time.monotonic() - t0 < 10


def test_sigkill_of_ray_start_ends_the_pod_naming_ray(pid1, pod_env, tmp_path):
    env = pod_env()
    p = pid1(env, SLEEP)
    wait_log(p, "started the command")
    os.kill(host_pid(ray_started(tmp_path)["pid"], p.rayboot_pid), signal.SIGKILL)
    code = p.wait(20)
    text = p.err_path.read_text()
    assert code != 0, text
    assert "Ray exited" in text or "ray start exited" in text, text


def test_command_ignoring_sigterm_is_killed_at_the_grace_period(pid1, pod_env, tmp_path):
    ignore = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); time.sleep(120)"
    env = pod_env(RAYBOOT_GRACE_PERIOD="6")
    p = pid1(env, ["--", PY, "-c", ignore])
    wait_log(p, "started the command")
    time.sleep(0.5)
    t0 = time.monotonic()
    os.kill(p.rayboot_pid, signal.SIGTERM)
    code = p.wait(20)
    took = time.monotonic() - t0
    assert 1.0 < took < 6.0, f"the stubborn command must be SIGKILLed inside the 6 s grace, took {took:.1f} s"
    assert code == 128 + signal.SIGKILL, p.err_path.read_text()  # the head's command, killed


DAEMONIZE = """
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        open(sys.argv[1], "w").write(f"{os.getpid()}\\n")
        time.sleep(300)
    os._exit(0)
time.sleep(0.5)
sys.exit(int(sys.argv[2]))
"""


def test_command_that_daemonizes_does_not_keep_the_pod(pid1, pod_env, tmp_path):
    """The command leaves a daemon in a session of its own and exits 5: the pod ends with 5 and the
    daemon does not outlive it."""
    env = pod_env()
    p = pid1(env, ["--", PY, "-c", DAEMONIZE, str(tmp_path / "daemon.pid"), "5"])
    daemon = host_pid(int(wait_for_file(tmp_path / "daemon.pid")), p.rayboot_pid)
    assert p.wait(30) == 5, p.err_path.read_text()
    deadline = time.monotonic() + 5
    while alive(daemon) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(daemon), "the daemon outlived the pod"


LEAVER = """
import os, sys, time
pid = os.fork()
if pid == 0:
    os.setpgid(0, 0)
    open(sys.argv[1], "w").write(f"{os.getpid()}\\n")
    time.sleep(300)
time.sleep(120)
"""


def test_child_that_left_the_process_group_is_stopped_on_sigterm(pid1, pod_env, tmp_path):
    env = pod_env(RAYBOOT_GRACE_PERIOD="6")
    p = pid1(env, ["--", PY, "-c", LEAVER, str(tmp_path / "leaver.pid")])
    leaver = host_pid(int(wait_for_file(tmp_path / "leaver.pid")), p.rayboot_pid)
    os.kill(p.rayboot_pid, signal.SIGTERM)
    assert p.wait(20) == 128 + signal.SIGTERM, p.err_path.read_text()
    assert not alive(leaver), "a child in its own process group outlived the pod"


# PID 1 of the namespace blocks SIGTERM, sends it to itself and execs rayboot: the signal is
# pending when rayboot starts, as a kubelet's SIGTERM is when it lands while rayboot plans.
SIGTERM_THEN_EXEC = ("import os, signal, sys\n"
                     "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})\n"
                     "os.kill(os.getpid(), signal.SIGTERM)\n"
                     "os.execv(sys.argv[1], sys.argv[1:])\n")


@pytest.mark.parametrize("role", ["head", "worker"])
def test_sigterm_while_planning_stops_before_ray_starts(pod_env, gcs, tmp_path, rayboot_bin, role):
    env = pod_env()
    if role == "worker":
        env.update({"RAYBOOT_ROLE": "worker", "RAYBOOT_HEAD_ADDRESS": f"127.0.0.1:{gcs.port}",
                    "RAYBOOT_POD_IP": "127.0.0.1"})
        del env["RAYBOOT_PLUGIN_ARGS"]
    proc = subprocess.run(["unshare", "--pid", "--fork", "--mount", "--mount-proc", "--kill-child",
                           PY, "-c", SIGTERM_THEN_EXEC, str(rayboot_bin), *(SLEEP if role == "head" else [])],
                          env=env, capture_output=True, text=True, timeout=20)
    # A worker's is the eviction code; the head's, whose command never ran, is no success.
    assert proc.returncode == (0 if role == "worker" else 128 + signal.SIGTERM), proc.stderr
    assert "SIGTERM: stopping" in proc.stderr, proc.stderr
    assert not (tmp_path / "ray.log").exists(), "Ray was started after a SIGTERM"


def test_sigterm_while_draining_keeps_the_one_drain_going(run, gcs, tmp_path):
    """The node never leaves (the drain runs to its deadline); a second SIGTERM in the middle of
    the drain neither restarts it nor cuts it short, and the pod still ends inside its grace."""
    from fake_gcs import DRAIN, Node
    from test_pid1 import worker_env
    gcs.nodes.append(Node("127.0.0.1", node_id=b"\x42" * 28))
    gcs.nodes[0].ip = "10.0.0.1"
    gcs.drain_removes_node = False
    r = run(worker_env(gcs.port, RAYBOOT_GRACE_PERIOD="6"))
    r.wait_for_log("started ray")
    ray_started(tmp_path)
    t0 = time.monotonic()
    os.kill(r.proc.pid, signal.SIGTERM)
    r.wait_for_log("draining node")
    time.sleep(0.5)
    os.kill(r.proc.pid, signal.SIGTERM)
    assert r.wait(15) == 0, r.stderr
    assert time.monotonic() - t0 < 6, r.stderr
    assert "SIGTERM again: already stopping" in r.stderr, r.stderr
    assert gcs.methods().count(DRAIN) == 1, gcs.methods()
    assert "left the cluster" not in r.stderr
