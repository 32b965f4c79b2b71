"""The prober is forked, not exec'd (lib/ray/prober.c, its child side lib/ray/prober_child.c): before its seccomp filter goes on it must drop
what it inherited and does not need (lib/confine/scrub.c, issue 18). These look at a live prober of the
release binaries: its /proc/PID/environ holds no byte of the environment (the user's secrets),
and /proc/PID/fd holds /dev/null on 0-2 and its own sockets only: not a file rayboot inherited,
not the sidecar's listening socket or a client's connection."""
import os
import pathlib
import re
import signal
import socket
import subprocess

import pytest

from procs import children, eventually

SECRET = "hunter2-s3cr3t-token"


def fds(pid: int) -> dict:
    out = {}
    for fd in pathlib.Path(f"/proc/{pid}/fd").iterdir():
        try:
            out[int(fd.name)] = os.readlink(fd)
        except OSError:
            pass
    return out


class Program:
    """A release binary with an exact env and one extra inherited descriptor (a file that stands
    for whatever a container runtime or a parent leaves open)."""

    def __init__(self, binary, env, tmp_path):
        self.err = tmp_path / f"{binary.name}.err"
        inherited = tmp_path / "inherited-secret-file"
        inherited.write_text(SECRET)
        self.inherited_path = str(inherited)
        fd = os.open(inherited, os.O_RDONLY)
        try:
            self.proc = subprocess.Popen([str(binary)], env=env, stdout=subprocess.DEVNULL,
                                         stderr=open(self.err, "w"), pass_fds=(fd,), start_new_session=True)
        finally:
            os.close(fd)

    def log(self):
        return self.err.read_text()

    def wait_for_log(self, needle):
        return eventually(lambda: needle in self.log() or self.proc.poll() is not None, 15) and needle in self.log()

    def prober(self, not_pid=None):
        """The child, once its seccomp filter is on (the scrub comes before it)."""
        for pid in children(self.proc.pid):
            try:
                confined = "Seccomp:\t2" in pathlib.Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            if pid != not_pid and confined:
                return pid
        return None

    def close(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=5)


@pytest.fixture
def program(tmp_path):
    started = []

    def start(binary, env):
        p = Program(binary, env, tmp_path)
        started.append(p)
        return p

    yield start
    for p in started:
        p.close()


def base_env(pod_root, gcs):
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOSTNAME": "pod-0", "RAYBOOT_ROOT": str(pod_root),
            "RAYBOOT_ROLE": "worker", "RAYBOOT_HEAD_ADDRESS": f"127.0.0.1:{gcs.port}", "RAYBOOT_POD_IP": "127.0.0.1",
            "RAYBOOT_WAIT_TIMEOUT": "60", "MY_API_TOKEN": SECRET}


def socket_inodes(links) -> set:
    return {m.group(1) for link in links for m in [re.match(r"socket:\[(\d+)\]", link)] if m}


def check_prober(parent: int, prober: int, inherited_path: str):
    # The control: the parent's environment does hold the secret, and /proc shows it.
    assert SECRET.encode() in pathlib.Path(f"/proc/{parent}/environ").read_bytes()
    environ = pathlib.Path(f"/proc/{prober}/environ").read_bytes()
    assert environ.strip(b"\0") == b"", f"the prober's environment is readable: {environ[:200]!r}"

    mine, parents = fds(prober), fds(parent)
    assert inherited_path in parents.values(), parents  # the control: the parent did inherit it
    assert {mine.get(n) for n in (0, 1, 2)} == {"/dev/null"}, mine
    rest = {n: link for n, link in mine.items() if n > 2}
    # libcurl 8 wakes its multi handle with an eventfd (made in the warm-up, before confinement:
    # the filter has no eventfd2); the parent holds none, so the prober's cannot be inherited.
    assert "anon_inode:[eventfd]" not in parents.values(), parents
    assert all(link.startswith("socket:[") or link == "anon_inode:[eventfd]" for link in rest.values()), \
        f"the prober holds more than sockets and libcurl's eventfd: {mine}"
    # Its socket to the parent, libcurl's eventfd and whatever check it is making right now: its
    # own, none of the parent's.
    shared = socket_inodes(rest.values()) & socket_inodes(parents.values())
    assert not shared, f"the prober holds the parent's sockets {shared}: {mine} / {parents}"


def test_rayboot_prober_holds_no_environment_and_no_inherited_fd(rayboot_bin, pod_root, gcs, program):
    gcs.serving = False  # the worker keeps waiting, the prober keeps running
    p = program(rayboot_bin, base_env(pod_root, gcs))
    assert p.wait_for_log("NOT_SERVING"), p.log()
    prober = eventually(p.prober, 15)
    check_prober(p.proc.pid, prober, p.inherited_path)


def test_sidecar_prober_holds_no_listening_or_client_socket(sidecar_bin, pod_root, gcs, program):
    env = {**base_env(pod_root, gcs), "RAYBOOT_SIDECAR_PORT": "0", "RAYBOOT_SIDECAR_DRAIN_PORT": "0",
           "RAYBOOT_GRACE_PERIOD": "10"}
    p = program(sidecar_bin, env)
    assert p.wait_for_log("serving on port"), p.log()
    port = int(re.search(r"serving on port (\d+)", p.log()).group(1))
    # A client connection the sidecar holds open (half a request), then a prober started while it is
    # open: kill the first one and the sidecar starts another.
    client = socket.create_connection(("127.0.0.1", port))
    try:
        client.sendall(b"GET /healthz HTTP/1.1\r\n")
        first = eventually(p.prober, 15)
        os.kill(first, signal.SIGKILL)
        assert p.wait_for_log("starting a new prober"), p.log()
        second = eventually(lambda: p.prober(not_pid=first), 15)
        parents = fds(p.proc.pid)
        assert len(socket_inodes(parents.values())) >= 3, parents  # listening, client, the prober's pair
        check_prober(p.proc.pid, second, p.inherited_path)
    finally:
        client.close()
