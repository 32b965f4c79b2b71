"""Fixtures for black-box contract tests of the static rayboot binary: a fake GCS, a fake `ray`,
a pod root with the files rayboot reads, and a runner that starts rayboot (or a test build of it)
with an exact env."""
import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from fake_gcs import FakeGcs  # noqa: E402
from procs import free_port  # noqa: E402

# The heads and workers this session runs share loopback with every other session on the machine:
# on rayboot's default port (8079) a worker could hold another session's head rendezvous and take
# its word that a GCS serves (a woken worker starts Ray without a call of its own). One port per
# session keeps the word within it.
RENDEZVOUS_PORT = free_port()


@pytest.fixture
def gcs():
    server = FakeGcs()
    yield server
    server.stop()


@pytest.fixture
def gcs2():
    """A second GCS: another cluster's head, or one that replaces the first."""
    server = FakeGcs()
    yield server
    server.stop()


@pytest.fixture
def pod_root(tmp_path):
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    (root / "etc" / "hosts").write_text("127.0.0.1\tlocalhost\n127.0.0.1\tpod-0\n")
    # Nothing listens on this nameserver: names not in /etc/hosts fail fast, as NXDOMAIN would.
    (root / "etc" / "resolv.conf").write_text("nameserver 127.0.0.1\noptions ndots:5\n")
    return root


@pytest.fixture
def closed_port() -> int:
    return free_port()


class Rayboot:
    """One rayboot process; kills its whole process group on cleanup. `user`: a UID to run as
    (its own group, no supplementary groups); `wrap`: argv of a program that execs rayboot."""

    def __init__(self, binary, env, args, tmp_path, user=None, wrap=()):
        self.stderr_path = tmp_path / f"rayboot-{time.monotonic_ns()}.err"
        self.stdout_path = self.stderr_path.with_suffix(".out")
        # The UID is switched by setpriv, not by Popen(user=...): that makes Python fork() instead
        # of vfork(), and a fork() beside the fake GCS's gRPC threads now and then dies before its
        # exec (seen 1 run in 3 in test_secrets_in_proc.py).
        as_user = [] if user is None else ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", "--"]
        self.proc = subprocess.Popen([*as_user, *map(str, wrap), str(binary), *args], env=env,
                                     stdout=open(self.stdout_path, "w"), stderr=open(self.stderr_path, "w"),
                                     start_new_session=True)

    def wait(self, timeout):
        return self.proc.wait(timeout=timeout)

    @property
    def stderr(self):
        return self.stderr_path.read_text()

    @property
    def stdout(self):
        return self.stdout_path.read_text()

    def wait_for_log(self, needle, timeout=15, stdout=False):
        """Waits for NEEDLE in rayboot's log (stderr), or with STDOUT in what its children print."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if needle in (self.stdout if stdout else self.stderr):
                return
            if self.proc.poll() is not None:
                if needle in (self.stdout if stdout else self.stderr):  # written just before the exit
                    return
                break
            time.sleep(0.02)
        raise AssertionError(f"no {needle!r} in rayboot's {'output' if stdout else 'log'}:\n{self.stderr}")

    def kill(self):
        """SIGTERM (rayboot stops its children), then SIGKILL if it lingers."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)


@pytest.fixture
def run(rayboot_bin, pod_root, tmp_path):
    started = []

    def start(extra_env=None, args=(), user=None, wrap=(), binary=None):
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOSTNAME": "pod-0",
            "RAYBOOT_ROOT": str(pod_root),
            "RAYBOOT_RAY": str(HERE / "fake_ray.py"),
            "FAKE_RAY_LOG": str(tmp_path / "ray.log"),
            "RAYBOOT_GRACE_PERIOD": "8",
            "RAYBOOT_RENDEZVOUS_PORT": str(RENDEZVOUS_PORT),
        }
        env.update(extra_env or {})
        r = Rayboot(binary or rayboot_bin, env, args, tmp_path, user, wrap)
        started.append(r)
        return r

    yield start
    for r in started:
        r.kill()
    # Once rayboot has gone, no ray it started may be left: kill stragglers by PID, then fail.
    log = tmp_path / "ray.log"
    left = []
    for line in (log.read_text().splitlines() if log.exists() else []):
        pid = json.loads(line)["pid"]
        for _ in range(50):  # the kernel delivers PDEATHSIG asynchronously
            if not pid_alive(pid):
                break
            time.sleep(0.02)
        else:
            left.append(pid)
            os.kill(pid, signal.SIGKILL)
    assert not left, f"ray processes outlived rayboot: {left}"


def pid_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.fixture
def sidecar(sidecar_bin, pod_root, tmp_path, gcs):
    """Starts rayboot-sidecars (tests/contract/sidecars.py) for a worker at NODE_IP whose head is
    the fake GCS; each is killed at the end."""
    from sidecars import SIDECAR_NODE_IP, Sidecar
    started = []

    def start(extra_env=None, role="worker"):
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOSTNAME": "ray-job-worker-1",
            "RAYBOOT_ROOT": str(pod_root),
            "RAYBOOT_ROLE": role,
            "RAYBOOT_HEAD_ADDRESS": f"127.0.0.1:{gcs.port}",
            "RAYBOOT_POD_IP": SIDECAR_NODE_IP,
            "RAYBOOT_POD_NAMESPACE": "ml",
            "RAYBOOT_SIDECAR_PORT": "0",
            "RAYBOOT_SIDECAR_DRAIN_PORT": "0",
            "RAYBOOT_GRACE_PERIOD": "10",
            "RAYBOOT_TERMINATION_LOG": str(tmp_path / "termination-log"),
        }
        env.update(extra_env or {})
        (tmp_path / "termination-log").write_text("")
        s = Sidecar(sidecar_bin, env, tmp_path)
        started.append(s)
        return s

    yield start
    for s in started:
        s.close()

