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

What was already there when the suite began is not the suite's: a run killed by hand (SIGKILL
leaves no time to clean up) must not fail the next one. `--record FILE`, the first step of `make
test`, writes down what is there (a process by its PID and start time, a mount by its ID, a
namespace by its inode, so that a new one of the same name still counts); `--since FILE` then
names those as earlier, and fails only on the rest.
Usage: scripts/check-leftovers.py [--record FILE | --since FILE] [BUILD_DIR]   (default: build)"""
import os
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parent.parent
NODE_PATHS = ("/var/lib/rbnode", "/run/rbnode")


def _ours(path, build):
    return path == build or path.startswith(build + "/")


def processes(build):
    """(key, what) of every process whose program or first argument lies under BUILD."""
    found = []
    me = os.getpid()
    for p in pathlib.Path("/proc").iterdir():
        if not p.name.isdigit() or int(p.name) in (me, os.getppid()):
            continue
        try:
            exe = os.readlink(p / "exe")
            argv = (p / "cmdline").read_bytes().split(b"\0")
            started = (p / "stat").read_text().rsplit(")", 1)[1].split()[19]
        except (OSError, IndexError):
            continue  # gone, or a kernel thread
        args = [a.decode(errors="replace") for a in argv if a]
        where = [x for x in [exe] + args[:2] if _ours(x, build)]
        if where:
            found.append((f"process {p.name}@{started}", f"process {p.name}: {' '.join(args)[:200]}"))
    return found


def mounts(build):
    """(key, what) of every mount under this checkout or the node's state."""
    found = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            point = fields[4].replace("\\040", " ")
            if _ours(point, str(REPO)) or any(_ours(point, n) for n in NODE_PATHS):
                found.append((f"mount #{fields[0]}", f"mount {point}"))
    return found


def namespaces():
    """(key, what) of every network namespace named rb*."""
    found = []
    try:
        names = sorted(n for n in os.listdir("/run/netns") if n.startswith("rb"))
    except FileNotFoundError:
        return []
    for name in names:
        try:
            inode = os.stat(f"/run/netns/{name}").st_ino
        except OSError:
            continue  # deleted while listed
        found.append((f"netns {name}#{inode}", f"network namespace {name}"))
    return found


def leftovers(build):
    """(key, what) of everything looked for; the key stays the same only for the same thing."""
    return processes(build) + mounts(build) + namespaces()


def main(argv):
    args = argv[1:]
    mode, record = None, None
    if args and args[0] in ("--record", "--since"):
        if len(args) < 2:
            print(f"check-leftovers: {args[0]} needs a FILE", file=sys.stderr)
            return 2
        mode, record, args = args[0], pathlib.Path(args[1]), args[2:]
    build = str(pathlib.Path(args[0] if args else REPO / "build").resolve())
    found = leftovers(build)
    if mode == "--record":
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text("".join(f"{key}\n" for key, _ in found))
        for _, what in found:
            print(f"check-leftovers: already here, left by an earlier run: {what}", file=sys.stderr)
        return 0
    earlier = set()
    if mode == "--since":
        try:
            earlier = set(record.read_text().split("\n"))
        except OSError as e:
            print(f"check-leftovers: --since {record}: {e.strerror}", file=sys.stderr)
            return 2
    left = []
    for key, what in found:
        if key in earlier:
            print(f"check-leftovers: {what}: there before the suite began, not counted", file=sys.stderr)
        else:
            left.append(what)
            print(f"check-leftovers: {what}", file=sys.stderr)
    if left:
        things = "thing" if len(left) == 1 else "things"
        print(f"check-leftovers: the suite left {len(left)} {things} behind", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
