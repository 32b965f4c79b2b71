"""rayboot outside Kubernetes (issue 19 section 1): a head and a worker on plain hosts (a VM, `docker
run`, a hostNetwork pod; podsim.Hosts), real Ray, rayboot as PID 1 of each. Nothing tells
rayboot the host's address: no downward API, no HOSTNAME variable, an /etc/hosts whose only line
for the head's name is Debian's loopback 127.0.1.1 (what once made rayboot take 127.0.0.1 for
its node and fail every drain) and none at all for the worker's. Ray registers the address it
finds by the route (10.x); rayboot names the node by the hostname (ray start --node-name) and
finds it by that name on SIGTERM: both drain."""
import time

from podsim import wait_until
from rayjobs import LIGHT
from test_rayboot_lifecycle import node_states

HEAD, WORKER = "ml-box-head", "ml-box-worker"
HEAD_JOB = ["python", "-c", "import ray, time; ray.init(); print('job connected', flush=True); time.sleep(3600)"]


def by_name(head):
    """The GCS's node table, keyed by node_name: [ip, state, reason, role, id, name]."""
    return {n[5]: n for n in node_states(head)}


def logs(hosts):
    return "\n".join(f"--- {name}\n{h.log()}" for name, h in hosts.pods.items())


def test_head_and_worker_on_plain_hosts_drain_on_sigterm(cluster):
    base = {"RAYBOOT_RAY_START_ARGS": LIGHT, "RAYBOOT_GRACE_PERIOD": "30"}
    hosts = cluster.hosts({
        HEAD: {"command": ["rayboot", "--", *HEAD_JOB], "env": dict(base, RAYBOOT_ROLE="head"),
               "hosts": [f"127.0.1.1\t{HEAD}.lab.example {HEAD}"]},
        WORKER: {"command": ["rayboot"], "env": dict(base, RAYBOOT_ROLE="worker",
                                                     RAYBOOT_HEAD_ADDRESS=f"{cluster.address(10)}:6379")},
    })
    hosts.start()
    head, worker = hosts.pod(HEAD), hosts.pod(WORKER)
    assert head.ip == cluster.address(10), "the worker was pointed at the wrong head address"
    wait_until(lambda: "job connected" in head.log() or not head.running(), 180, "the head's command")
    nodes = wait_until(lambda: (lambda t: t if len(t) == 2 and all(n[1] == "ALIVE" for n in t.values()) else None)(
        by_name(head)), 180, "two ALIVE nodes")
    # Ray picked the hosts' real addresses itself; the names are the ones rayboot gave.
    assert nodes[HEAD][0] == head.ip and nodes[WORKER][0] == worker.ip, nodes
    assert "--node-ip-address" not in head.log() + worker.log()
    # At once, while Ray's agents may still be starting: a `ray start --block` that does not exit
    # on SIGTERM then is killed 5 s after its node was drained, well within the grace period.
    t0 = time.monotonic()
    assert worker.delete(grace=30) == 0, logs(hosts)
    took = time.monotonic() - t0
    assert f"drain of node {WORKER} accepted" in worker.log(), worker.log()
    assert f"node {WORKER} left the cluster after" in worker.log(), worker.log()
    assert "stopping without a drain" not in worker.log(), worker.log()
    assert took < 20, f"the drained worker took {took:.1f} s of its 30 s grace"
    states = by_name(head)
    assert states[WORKER][1] == "DEAD", states
    assert states[WORKER][2] == "AUTOSCALER_DRAIN_PREEMPTED", f"the worker died instead of draining: {states}"
    assert states[HEAD][1] == "ALIVE", states

    head.delete(grace=30)
    assert f"draining node {HEAD}" in head.log(), head.log()
    assert "stopping without a drain" not in head.log(), head.log()
    assert "could not drain" not in head.log(), head.log()
    assert f"node {HEAD} left the cluster after" in head.log() or f"drain of node {HEAD} accepted" in head.log(), \
        head.log()
