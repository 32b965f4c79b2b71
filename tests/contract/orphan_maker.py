#!/usr/bin/env python3
"""Runs as PID 1 of a new PID namespace (under `unshare --pid --fork`), forks a spawner, then
execs the program in argv[1:] (rayboot), which so becomes PID 1 with the spawner as its child.
Once the file ORPHANS_WHEN names appears, the spawner makes ORPHANS_COUNT orphans that exit at
once (each re-parented to PID 1 as a zombie, as a pod's `kubectl exec` sessions or daemons leave
them), writes ORPHANS_WHEN + ".done", and exits itself."""
import os
import sys
import time

marker = os.environ["ORPHANS_WHEN"]
count = int(os.environ.get("ORPHANS_COUNT", "200"))
if os.fork() == 0:
    while not os.path.exists(marker):
        time.sleep(0.02)
    for _ in range(count):
        if os.fork() == 0:
            if os.fork() == 0:
                os._exit(0)
            os._exit(0)
        os.wait()
    with open(marker + ".done", "w") as f:
        f.write(str(count))
    os._exit(0)
os.execv(sys.argv[1], sys.argv[1:])
