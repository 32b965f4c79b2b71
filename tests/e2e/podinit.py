"""The first process of a simulated pod (run under `unshare --pid --fork --mount --mount-proc`, so
it is PID 1 of the pod's PID namespace; `--uts` too): gives the pod its hostname, a private /etc (an overlay holding its
hosts, resolv.conf and /etc/volcano), a private /tmp and /dev/shm, then execs the pod's
entrypoint, which thereby becomes PID 1 with exactly the environment the kubelet would give.

Paths listed in `keep` (the repository, the virtualenv) stay visible even when they live under
/tmp: they are opened before the tmpfs hides them and bound back afterwards.

Just before the exec it writes its own CPU time to SPEC.json.cpu (JSON: ns on CPU from the
process's CPU clock, and the ticks of the `mount` children it reaped): the entrypoint inherits
both counters with the PID, and bench/waitcost.py subtracts them. The file is opened before the
mounts: a spec under /tmp (pytest's) would be hidden by the pod's tmpfs afterwards.

Usage: podinit.py SPEC.json   (keys: etc_upper, etc_work, argv, env, keep, hostname, shm_size, cwd)"""
import json
import os
import socket
import subprocess
import sys
import time


def mount(*args):
    subprocess.run(["mount", *args], check=True)


def record_cpu(out):
    """This process's CPU time so far, for whoever measures the entrypoint that inherits it."""
    fields = open("/proc/self/stat").read().rsplit(")", 1)[1].split()
    json.dump({"cpu_ns": time.clock_gettime_ns(time.CLOCK_PROCESS_CPUTIME_ID),
               "reaped_ticks": int(fields[13]) + int(fields[14]),  # cutime + cstime
               "clk_tck": os.sysconf("SC_CLK_TCK")}, out)
    out.close()


def main():
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    cpu_record = open(sys.argv[1] + ".cpu", "w")  # before any mount can hide its directory
    mount("-t", "overlay", "overlay", "-o",
          f"lowerdir=/etc,upperdir={spec['etc_upper']},workdir={spec['etc_work']}", "/etc")
    hidden = [p for p in spec.get("keep", []) if os.path.realpath(p).startswith("/tmp/")]
    handles = {p: os.open(os.path.realpath(p), os.O_PATH | os.O_DIRECTORY) for p in hidden}
    mount("-t", "tmpfs", "-o", "mode=1777", "tmpfs", "/tmp")
    # A container runtime's /dev/shm is 64 MiB; a pod's, a memory-backed emptyDir of its sizeLimit.
    shm_size = f",size={spec['shm_size']}" if spec.get("shm_size") else ""
    mount("-t", "tmpfs", "-o", f"mode=1777{shm_size}", "tmpfs", "/dev/shm")
    for path, fd in handles.items():
        target = os.path.realpath(path)
        os.makedirs(target, exist_ok=True)
        # mount(8) is a child process, so the directory is named through this process's own fd;
        # and it must not canonicalize that path, which would now resolve into the tmpfs.
        mount("--no-canonicalize", "--bind", f"/proc/{os.getpid()}/fd/{fd}", target)
        os.close(fd)
    socket.sethostname(spec["hostname"])  # the pod's own UTS namespace, as Kubernetes sets it
    os.chdir(spec.get("cwd") or "/")
    record_cpu(cpu_record)
    os.execve(spec["argv"][0], spec["argv"], spec["env"])


if __name__ == "__main__":
    main()
