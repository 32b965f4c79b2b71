#!/usr/bin/env python3
"""What the suite left running or mounted on this machine, after `make test`: the last step of the
suite, so that a leak fails it instead of piling up across runs (each tier checks its own
fixtures; this catches what escaped them).

Looked for:
- processes running a program of this checkout: our binaries under build/ (rayboot,
  rayboot-sidecar, the release and unit builds), Ray's and Python's from build/venv, the node's
  from build/node, buildah's children;
- mounts under this checkout or under the real node's state (/var/lib/rbnode, /run/rbnode);
- network namespaces the simulator or the real node made (their names start with "rb").

Prints each leftover with its PID or path and exits 1 if there is any; silent and 0 if none (so
that pytest's summary stays the last line of `make test`).
Usage: scripts/check-leftovers.py [BUILD_DIR]   (default: build)"""
import os
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parent.parent
NODE_PATHS = ("/var/lib/rbnode", "/run/rbnode")


def _ours(path, build):
    return path == build or path.startswith(build + "/")


def processes(build):
    """(pid, what) of every process whose program or first argument lies under BUILD."""
    found = []
    me = os.getpid()
    for p in pathlib.Path("/proc").iterdir():
        if not p.name.isdigit() or int(p.name) in (me, os.getppid()):
            continue
        try:
            exe = os.readlink(p / "exe")
            argv = (p / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue  # gone, or a kernel thread
        args = [a.decode(errors="replace") for a in argv if a]
        where = [x for x in [exe] + args[:2] if _ours(x, build)]
        if where:
            found.append((int(p.name), " ".join(args)[:200]))
    return found


def mounts(build):
    found = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            point = line.split()[4].replace("\\040", " ")
            if _ours(point, str(REPO)) or any(_ours(point, n) for n in NODE_PATHS):
                found.append(point)
    return found


def namespaces():
    try:
        return sorted(n for n in os.listdir("/run/netns") if n.startswith("rb"))
    except FileNotFoundError:
        return []


def main(argv):
    build = str(pathlib.Path(argv[1] if len(argv) > 1 else REPO / "build").resolve())
    left = [f"process {pid}: {what}" for pid, what in processes(build)]
    left += [f"mount {m}" for m in mounts(build)]
    left += [f"network namespace {n}" for n in namespaces()]
    for item in left:
        print(f"check-leftovers: {item}", file=sys.stderr)
    if left:
        print(f"check-leftovers: the suite left {len(left)} things behind", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
