"""The first process of a simulated pod (run under `unshare --pid --fork --mount --mount-proc`, so
it is PID 1 of the pod's PID namespace; `--uts` too): gives the pod its hostname, a private /etc (an overlay holding its
hosts, resolv.conf and /etc/volcano), a private /tmp and /dev/shm, then execs the pod's
entrypoint, which thereby becomes PID 1 with exactly the environment the kubelet would give.

Paths listed in `keep` (the repository, the virtualenv) stay visible even when they live under
/tmp: they are opened before the tmpfs hides them and bound back afterwards.

Usage: podinit.py SPEC.json   (keys: etc_upper, etc_work, argv, env, keep, hostname)"""
import json
import os
import socket
import subprocess
import sys


def mount(*args):
    subprocess.run(["mount", *args], check=True)


def main():
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    mount("-t", "overlay", "overlay", "-o",
          f"lowerdir=/etc,upperdir={spec['etc_upper']},workdir={spec['etc_work']}", "/etc")
    hidden = [p for p in spec.get("keep", []) if os.path.realpath(p).startswith("/tmp/")]
    handles = {p: os.open(os.path.realpath(p), os.O_PATH | os.O_DIRECTORY) for p in hidden}
    mount("-t", "tmpfs", "-o", "mode=1777", "tmpfs", "/tmp")
    mount("-t", "tmpfs", "-o", "mode=1777", "tmpfs", "/dev/shm")
    for path, fd in handles.items():
        target = os.path.realpath(path)
        os.makedirs(target, exist_ok=True)
        # mount(8) is a child process, so the directory is named through this process's own fd;
        # and it must not canonicalize that path, which would now resolve into the tmpfs.
        mount("--no-canonicalize", "--bind", f"/proc/{os.getpid()}/fd/{fd}", target)
        os.close(fd)
    socket.sethostname(spec["hostname"])  # the pod's own UTS namespace, as Kubernetes sets it
    os.chdir("/")
    os.execve(spec["argv"][0], spec["argv"], spec["env"])


if __name__ == "__main__":
    main()
