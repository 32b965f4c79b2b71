"""What KubeRay's pods get that rayboot now gives Ray itself (issue 29), with real Ray: the raylet
runs with the open files limit raised from a container runtime's soft 1,024 (containerd 2.x)."""
import resource

from podsim import wait_until
from rayjobs import ray_job

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
    if HARD < 65536:  # this machine's hard limit caps it: said, with the number
        assert f"the hard limit is {HARD}" in head.log(), head.log()
    head.delete(grace=10)
