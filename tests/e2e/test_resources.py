"""What KubeRay's pods get that rayboot now gives Ray itself (issue 29), with real Ray: the raylet
runs with the open files limit raised from a container runtime's soft 1,024 (containerd 2.x), and
every node's Ray metrics answer at the fixed port 8080 that the manifests name `metrics`, and a
/dev/shm too small for Ray's object store is said by rayboot before Ray falls back to disk."""
import resource

import pytest

from podsim import wait_until
from rayjobs import LIGHT, env, ray_job

HARD = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
if HARD == resource.RLIM_INFINITY:
    HARD = 1048576  # prlimit takes a number; a kernel's default fs.nr_open


def soft_nofile(pid):
    """The 'Max open files' soft limit in /proc/PID/limits."""
    with open(f"/proc/{pid}/limits") as f:
        for line in f:
            if line.startswith("Max open files"):
                return int(line.split()[3])
    raise AssertionError(f"no Max open files in /proc/{pid}/limits")


def test_the_raylet_runs_with_65536_open_files(cluster):
    job = cluster.job(ray_job(workers=1))
    head = job.pod("head")
    head.nofile = (1024, HARD)
    head.start()
    raylets = wait_until(lambda: head.processes("raylet") or not head.running(), 180, "the head's raylet")
    assert head.running(), head.log()
    assert soft_nofile(raylets[0]) == min(65536, HARD), head.log()
    assert "/dev/shm has" not in head.log()  # an unbounded /dev/shm holds any object store
    if HARD < 65536:  # this machine's hard limit caps it: said, with the number
        assert f"the hard limit is {HARD}" in head.log(), head.log()
    head.delete(grace=10)


FETCH_METRICS = """
import sys, urllib.request
try:
    body = urllib.request.urlopen(f"http://{sys.argv[1]}:8080/metrics", timeout=5).read().decode()
except OSError as e:
    sys.exit(f"no answer: {e}")
print(sum(1 for line in body.splitlines() if line.startswith("ray_")))
"""


def ray_metric_lines(pod, ip):
    out = pod.exec(["python", "-c", FETCH_METRICS, ip], timeout=30)
    return int(out.stdout) if out.returncode == 0 and out.stdout.strip().isdigit() else 0


def test_every_nodes_metrics_answer_at_8080(cluster):
    """Prometheus scrapes each pod at the port the manifests name `metrics`: Ray's own metrics
    must be there on the head and on a worker, not at a port Ray picked at random."""
    job = cluster.job(ray_job(workers=1))
    job.start()
    head, worker = job.pod("head"), job.pod("worker")
    for pod in (head, worker):
        # Ray's metrics agent starts with the raylet and exports its first metrics some seconds later.
        wait_until(lambda pod=pod: ray_metric_lines(head, pod.ip) > 0 or not pod.running(), 180,
                   f"Ray's metrics at {pod.name}:8080", interval=1)
        assert pod.running(), pod.log()
    for pod in (worker, head):
        pod.delete(grace=10)


@pytest.mark.parametrize("shm_size,fits", [("64m", False), ("512m", True)])
def test_rayboot_warns_exactly_when_ray_puts_its_store_on_disk(cluster, shm_size, fits):
    """A 200 MB object store (--object-store-memory): in a container runtime's 64 MiB /dev/shm
    rayboot warns, naming the fix, and Ray indeed puts the store on disk; in a 512 MiB one
    (an emptyDir's sizeLimit) neither happens. Ray's choice is read from the raylet's argv."""
    extra = env(RAYBOOT_RAY_START_ARGS=f"{LIGHT} --object-store-memory=200000000")
    head = cluster.job(ray_job(workers=1, head_env=extra)).pod("head")
    head.shm_size = shm_size
    head.start()
    raylets = wait_until(lambda: head.processes("raylet") or not head.running(), 180, "the head's raylet")
    assert head.running(), head.log()
    with open(f"/proc/{raylets[0]}/cmdline", "rb") as f:
        (plasma,) = [a for a in f.read().decode().split("\0") if a.startswith("--plasma_directory=")]
    log = head.log()
    if fits:
        assert plasma == "--plasma_directory=/dev/shm" and "/dev/shm has" not in log, log
    else:
        assert plasma != "--plasma_directory=/dev/shm", plasma
        assert "/dev/shm has 64 MiB free, less than the 190 MiB object store Ray will make" in log, log
        assert "emptyDir: {medium: Memory, sizeLimit: 191Mi}" in log, log
    head.delete(grace=10)
