#!/usr/bin/env python3
"""One run of a rayboot binary through a scenario that drives its seccomp-confined prober down
given code paths, for tests/contract/test_seccomp_minimal.py. Run it in fresh namespaces:

    unshare --net --pid --fork --kill-child --mount-proc python seccomp_scenario.py SCENARIO BINARY DIR

(its own loopback, so the fake nameserver can own port 53; everything it starts dies with it).
Prints one JSON object: rayboot's exit code (null if it had to be killed), its stderr, whether Ray
was started, and the DNS queries and GCS calls seen.

Scenarios (each names the paths it exercises):
  dns-udp       worker; the head's name resolved over UDP, GCS SERVING: c-ares UDP, the TCP probe,
                libcurl's HTTP/2, the drain on SIGTERM, the prober's exit
  dns-tcp-many  worker; every UDP answer truncated, the TCP answer has 4,000 A records: c-ares over
                TCP (writev), thousands of live allocations (malloc's metadata grows: brk)
  ipv6          worker; nameserver ::1, an AAAA record only, GCS on [::1]: IPv6 UDP and TCP sockets
  not-serving   worker; GCS NOT_SERVING for the first 150 Health/Checks: musl's malloc sees the
                same sizes mapped and unmapped again and again and starts keeping them (madvise)
  big-cluster   head waiting for 1 worker in a GCS of 20,000 nodes (a ~1 MiB GetAllNodeInfo reply:
                realloc of a block past 128 KiB, mremap), then running `true`
  stopped       worker; the GCS holds its first Health/Check answer while the prober is stopped
                (SIGSTOP) and continued (SIGCONT) in libcurl's poll: the kernel resumes that poll
                with restart_syscall, as after a debugger, a cgroup freeze or a checkpoint
"""
import json
import os
import pathlib
import signal
import subprocess
import sys
import threading
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from fake_dns import FakeDns  # noqa: E402
from fake_gcs import HEALTH, FakeGcs, Node  # noqa: E402
from procs import children  # noqa: E402

NOT_SERVING_CHECKS = 150
MANY_RECORDS = 4000
BIG_CLUSTER_NODES = 20000
RUN_TIMEOUT_S = 60


class SlowToServe(FakeGcs):
    """NOT_SERVING for the first `checks` Health/Checks, then SERVING."""

    def __init__(self, checks):
        super().__init__()
        self.left = checks
        self.serving = False

    def answer(self, method, request, context):
        if method == HEALTH:
            with self.lock:
                self.left -= 1
                self.serving = self.left < 0
        return super().answer(method, request, context)


class HoldsFirstCheck(FakeGcs):
    """The first Health/Check waits (up to HOLD_S) until released; the rest answer at once."""

    HOLD_S = 10

    def __init__(self):
        super().__init__()
        self.held = threading.Event()
        self.release = threading.Event()

    def answer(self, method, request, context):
        if method == HEALTH and not self.held.is_set():
            self.held.set()
            self.release.wait(self.HOLD_S)
        return super().answer(method, request, context)


def stop_and_continue_prober(gcs: HoldsFirstCheck, rayboot_pid: int) -> int:
    """Once the prober waits for the held answer: SIGSTOP, SIGCONT, then the answer. Returns the
    prober's PID."""
    if not gcs.held.wait(20):
        raise SystemExit("the GCS never got a Health/Check")
    time.sleep(0.2)  # the request is out; libcurl is in poll() for the answer
    prober, = children(rayboot_pid)
    os.kill(prober, signal.SIGSTOP)
    time.sleep(0.3)
    os.kill(prober, signal.SIGCONT)
    time.sleep(0.2)
    gcs.release.set()
    return prober


def pod_root(workdir: pathlib.Path, nameserver: str) -> pathlib.Path:
    root = workdir / "root"
    (root / "etc").mkdir(parents=True, exist_ok=True)
    (root / "etc" / "hosts").write_text("127.0.0.1\tlocalhost\n127.0.0.1\tpod-0\n")
    (root / "etc" / "resolv.conf").write_text(f"nameserver {nameserver}\n")
    return root


def setup(scenario: str, workdir: pathlib.Path):
    """Returns (servers to stop, env, args, the stderr line that must follow Ray's start before
    SIGTERM is sent, or None)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOSTNAME": "pod-0",
           "RAYBOOT_RAY": str(HERE / "fake_ray.py"), "FAKE_RAY_LOG": str(workdir / "ray.log"),
           "RAYBOOT_GRACE_PERIOD": "5", "RAYBOOT_WAIT_TIMEOUT": "40"}
    worker = {"RAYBOOT_ROLE": "worker", "RAYBOOT_POD_IP": "127.0.0.1"}
    if scenario in ("dns-udp", "dns-tcp-many"):
        many = scenario == "dns-tcp-many"
        records = ["127.0.0.1"] + [f"10.{i >> 16}.{(i >> 8) & 255}.{i & 255}" for i in range(1, MANY_RECORDS)]
        # 4,000 records do not fit a UDP answer: it comes truncated, and c-ares asks over TCP.
        dns = FakeDns("gcs.test", addresses=records if many else ["127.0.0.1"], host="127.0.0.1")
        gcs = FakeGcs()
        gcs.nodes.append(Node("127.0.0.1", node_id=b"\x05" * 28))  # this worker's node (the head is pod-0)
        env.update(worker, RAYBOOT_ROOT=str(pod_root(workdir, "127.0.0.1")),
                   RAYBOOT_HEAD_ADDRESS=f"gcs.test:{gcs.port}")
        return [dns, gcs], env, [], None
    if scenario == "ipv6":
        dns = FakeDns("gcs.test", addresses=["::1"], host="::1")
        gcs = FakeGcs(host="::1")
        gcs.nodes.append(Node("::1", node_id=b"\x06" * 28))
        env.update(worker, RAYBOOT_ROOT=str(pod_root(workdir, "::1")), RAYBOOT_HEAD_ADDRESS=f"gcs.test:{gcs.port}",
                   RAYBOOT_POD_IP="::1")
        return [dns, gcs], env, [], None
    if scenario == "not-serving":
        gcs = SlowToServe(NOT_SERVING_CHECKS)
        env.update(worker, RAYBOOT_ROOT=str(pod_root(workdir, "127.0.0.1")),
                   RAYBOOT_HEAD_ADDRESS=f"127.0.0.1:{gcs.port}")
        return [gcs], env, [], None
    if scenario == "stopped":
        gcs = HoldsFirstCheck()
        env.update(worker, RAYBOOT_ROOT=str(pod_root(workdir, "127.0.0.1")),
                   RAYBOOT_HEAD_ADDRESS=f"127.0.0.1:{gcs.port}")
        return [gcs], env, [], None
    if scenario == "big-cluster":
        gcs = FakeGcs()
        gcs.nodes += [Node(f"10.1.{i >> 8}.{i & 255}", node_id=i.to_bytes(28, "big")) for i in range(BIG_CLUSTER_NODES)]
        env.update(RAYBOOT_ROLE="head", RAYBOOT_ROOT=str(pod_root(workdir, "127.0.0.1")),
                   RAYBOOT_PLUGIN_ARGS=f"--port={gcs.port}", RAYBOOT_WORKERS_EXPECTED="1")
        return [gcs], env, ["--", "true"], "the command exited"
    raise SystemExit(f"unknown scenario {scenario}")


def run(binary: str, scenario: str, workdir: pathlib.Path) -> dict:
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    servers, env, args, ready_line = setup(scenario, workdir)
    err_path = workdir / "rayboot.err"
    ray_log = workdir / "ray.log"
    proc = subprocess.Popen([binary, *args], env=env, stdout=subprocess.DEVNULL, stderr=open(err_path, "w"),
                            start_new_session=True)
    stopped = stop_and_continue_prober(servers[0], proc.pid) if scenario == "stopped" else None
    deadline = time.monotonic() + RUN_TIMEOUT_S
    code, signalled = None, False
    while time.monotonic() < deadline:
        code = proc.poll()
        if code is not None:
            break
        ready = ray_log.exists() and (not ready_line or ready_line in err_path.read_text())
        if ready and not signalled:
            proc.send_signal(signal.SIGTERM)
            signalled = True
        time.sleep(0.02)
    if code is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    result = {"scenario": scenario, "code": code, "stderr": err_path.read_text(), "ray_started": ray_log.exists(),
              "dns": [list(q) for q in getattr(servers[0], "queries", [])],
              "gcs_calls": len(servers[-1].methods()), "stopped_prober": stopped}
    for s in servers:
        s.stop()
    return result


if __name__ == "__main__":
    print(json.dumps(run(sys.argv[2], sys.argv[1], pathlib.Path(sys.argv[3]))))
