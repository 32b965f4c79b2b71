"""PID 1 of the test node (tests/node/cluster.py starts it in the node's network namespace, in new
PID and mount namespaces).

Every node process (etcd, the control plane, containerd, its shims, every container) lives in
this PID namespace, so when this process ends the kernel kills all of them: `down`, or a test run
that dies half-way, cannot leave a node process behind. The mounts the node makes (pod volumes,
container root filesystems, pod network namespaces, containerd's state) live in this mount
namespace and vanish with it. Here it only prepares those mounts, then reaps orphans until
SIGTERM.

Usage (as root, already inside the namespaces): nodeinit.py RUN_DIR ETCD_DIR READY_FILE"""
import os
import signal
import subprocess
import sys
import time


def mount(*argv):
    subprocess.run(["mount", *argv], check=True)


def main():
    run_dir, etcd_dir, ready_file = sys.argv[1:4]
    # Container runtimes expect shared propagation (mounts made for a pod reach its containers);
    # this namespace's peer groups are its own, so nothing propagates back to the machine.
    mount("--make-rshared", "/")
    # containerd's state, the pods' network namespace files, and etcd's data: private tmpfs, so
    # a node leaves none of them on the machine and etcd does not wait on the disk.
    # JobSet's webhook certificate rotator writes to a fixed /tmp/k8s-webhook-server
    # (tests/node/controllers.py): a private tmpfs too, so no key lands in the machine's /tmp.
    for d in (run_dir, "/run/netns", etcd_dir, "/tmp/k8s-webhook-server"):
        os.makedirs(d, exist_ok=True)
        mount("-t", "tmpfs", "-o", "mode=0755", "tmpfs", d)
    # The node routes between its pods and its Services: forwarding, and bridged packets through
    # iptables (kube-proxy's DNAT for pods on the same bridge). Both are this namespace's own.
    for key, value in (("net/ipv4/ip_forward", "1"), ("net/bridge/bridge-nf-call-iptables", "1")):
        with open(f"/proc/sys/{key}", "w") as f:
            f.write(value)

    # Ending is the whole of shutdown: the kernel then kills every process of the node.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    signal.signal(signal.SIGINT, lambda *_: sys.exit(0))
    with open(ready_file, "w") as f:
        f.write("ready\n")
    while True:
        try:
            os.wait()
        except ChildProcessError:
            time.sleep(0.5)  # nothing to reap until the next orphan arrives


if __name__ == "__main__":
    main()
