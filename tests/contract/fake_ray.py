#!/usr/bin/env python3
"""A stand-in for `ray` (RAYBOOT_RAY) that records how it was started and behaves as the test
asks through FAKE_RAY_MODE: "block" (like `ray start --block`: run until SIGTERM, then exit 1),
"exit:N" (exit N at once), "ignore-term" (ignore SIGTERM; only SIGKILL ends it)."""
import json
import os
import resource
import signal
import sys
import time

mode = os.environ.get("FAKE_RAY_MODE", "block")
# Dispositions first, then the announcement: a test that saw the log line can rely on them.
if mode == "ignore-term":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
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
