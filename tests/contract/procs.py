"""Small helpers the contract tests share: a live process's children (from /proc, in this PID
namespace), waiting for a condition with a deadline, what a rayboot's log says, and a free
loopback port."""
import json
import pathlib
import re
import socket
import time


def children(pid: int) -> list:
    """PIDs whose parent is pid (this PID namespace's /proc)."""
    found = []
    for entry in pathlib.Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def eventually(check, timeout=10):
    """CHECK's first true value within TIMEOUT seconds (polled every 50 ms); else an assertion."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"condition not met within {timeout} s")


def log_ts(stderr: str, needle: str) -> float:
    """The timestamp (s, ms precision) of the first JSON log line containing needle."""
    for line in stderr.splitlines():
        if line.startswith("{") and needle in line:
            return json.loads(line)["ts"]
    raise AssertionError(f"no {needle!r} in:\n{stderr}")


def rendezvous_pid(head) -> int:
    """The PID of a running head rayboot's rendezvous child, from its log."""
    head.wait_for_log("rendezvous on port")
    return int(re.search(r"rendezvous on port \d+ \(pid (\d+)\)", head.stderr)[1])


def free_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
