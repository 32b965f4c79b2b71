#!/usr/bin/env python3
"""A stand-in for `ray` (RAYBOOT_RAY) that records how it was started and behaves as the test
asks through FAKE_RAY_MODE: "block" (like `ray start --block`: run until SIGTERM, then exit 1),
"exit:N" (exit N at once), "ignore-term" (ignore SIGTERM; only SIGKILL ends it), "daemons" (as
Ray 2.60's `ray start --block` runs its node: a `raylet` and, with --head, a `gcs_server` in its
process group; on SIGTERM it stops them one after the other, giving each up to 1 s, then takes 3 s
over the rest, as it does stopping its agents, dashboard and monitors a second each),
"daemons-slow-gcs" (the same, with a GCS that takes 3 s to end on SIGTERM, as Ray's flushing its
events to a dashboard agent that has gone)."""
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time

mode = os.environ.get("FAKE_RAY_MODE", "block")
daemons = []


# A GCS slow to end: a script's comm is its own name.
SLOW_GCS = f"#!{sys.executable}\nimport signal, time\nsignal.signal(signal.SIGTERM, lambda *_: (time.sleep(3), exit(0)))\ntime.sleep(120)\n"


def start_daemons(slow_gcs):
    """`sleep` under Ray's daemons' names (a process's comm is the name it was exec'd by)."""
    where = tempfile.mkdtemp(prefix="fake-ray-")
    for name in ["raylet"] + (["gcs_server"] if "--head" in sys.argv else []):
        path = os.path.join(where, name)
        if name == "gcs_server" and slow_gcs:
            with open(path, "w") as f:
                f.write(SLOW_GCS)
            os.chmod(path, 0o755)
        else:
            os.symlink("/bin/sleep", path)
        daemons.append(subprocess.Popen([path, "120"]))


def stop_as_ray(*_):
    for d in daemons:
        d.terminate()
        try:
            d.wait(timeout=1)
        except subprocess.TimeoutExpired:
            d.kill()
            d.wait()
    time.sleep(3)
    sys.exit(1)


# Dispositions first, then the announcement: a test that saw the log line can rely on them.
if mode == "ignore-term":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
elif mode in ("daemons", "daemons-slow-gcs"):
    start_daemons(mode == "daemons-slow-gcs")
    signal.signal(signal.SIGTERM, stop_as_ray)
else:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
log = os.environ.get("FAKE_RAY_LOG")
if log:
    with open(log, "a") as f:
        f.write(json.dumps({"argv": sys.argv, "pid": os.getpid(), "pgid": os.getpgid(0),
                            "nofile": list(resource.getrlimit(resource.RLIMIT_NOFILE)),
                            "env": {k: v for k, v in os.environ.items() if k.startswith("RAY")}}) + "\n")
if mode.startswith("exit:"):
    sys.exit(int(mode.split(":", 1)[1]))
deadline = time.monotonic() + 120
while time.monotonic() < deadline:
    time.sleep(0.05)
sys.exit(99)
