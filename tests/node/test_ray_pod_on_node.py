"""What KubeRay gives a Ray pod, given by rayboot, seen on the real node in the processes that run
(k8s/volcano/ray-cluster.yaml as shipped, with test_shipped_manifests.py's two changes):
- open files: containerd starts containers with a soft RLIMIT_NOFILE of 1,024 here, as containerd
  2.x leaves it (cluster.py), which the pod's sidecar shows; every raylet runs with rayboot's
  raised limit (65536, or the hard limit when lower), read in its /proc/PID/limits;
- /dev/shm: every raylet's plasma store is in /dev/shm (its --plasma_directory), and no Ray log
  has Ray's warning that the store fell back to disk;
- labels: a task with a label_selector for the Volcano task `worker` runs on a worker pod;
- metrics: every Ray node's metrics port (8080, named `metrics`) answers with Ray's metrics."""
import re

import cluster
from test_shipped_manifests import apply, apply_rbac_if_used, for_this_node, load, pod_logs, with_program

# The job's program: one task placed by label, then the cluster held up for the test to look at
# (the namespace's deletion ends it).
PROGRAM = """
import socket, time, ray
ray.init()
@ray.remote(label_selector={"rayboot.io/task": "worker"})
def where():
    return socket.gethostname()
print("placed by label on", ray.get(where.remote()), flush=True)
print("nodes:", len([n for n in ray.nodes() if n["Alive"]]), flush=True)
time.sleep(900)
"""
FALLBACK_WARNING = "instead of /dev/shm"


def nofile(pid):
    """(soft, hard) open files limit of PID, from /proc/PID/limits."""
    for line in open(f"/proc/{pid}/limits"):
        if line.startswith("Max open files"):
            soft, hard = line.split()[3:5]
            return int(soft), int(hard)
    raise AssertionError(f"no open files line in /proc/{pid}/limits")


def test_ray_pods_get_open_files_shm_labels_and_metrics(node, restricted_namespace, volcano):
    ns = restricted_namespace
    docs = [for_this_node(d, ns) for d in load("volcano/ray-cluster.yaml")]
    apply_rbac_if_used(node, ns, docs)
    apply(node, ns, with_program(docs, PROGRAM))

    def placed():
        if volcano.errors:
            raise AssertionError(f"the test controller failed: {volcano.errors}")
        heads = [p for p in node.pods(ns, "volcano.sh/task-spec=head") if p["status"].get("phase") == "Running"]
        if heads:
            m = re.search(r"placed by label on (\S+)\nnodes: 3", node.log(ns, heads[0]["metadata"]["name"], "ray"))
            return (heads[0], m.group(1)) if m else None
        return None
    try:
        head, host = node.wait("the label-placed task's answer", placed, 300, interval=1)
    except TimeoutError as e:
        raise AssertionError(f"{e}\n{pod_logs(node, ns)}") from None
    pods = node.pods(ns, "volcano.sh/job-name=ray-cluster")
    workers = sorted(p["metadata"]["name"] for p in pods if p["metadata"]["labels"].get("volcano.sh/task-spec") == "worker")
    assert host in workers, (host, workers)
    print(f"label_selector rayboot.io/task=worker: the task ran on {host} (workers {workers})")

    sandboxes = cluster.pod_sandboxes()
    for p in pods:
        name, ip = p["metadata"]["name"], p["status"]["podIP"]
        procs = cluster.processes_in_netns(sandboxes[ip])
        # What the runtime gives a container here, seen in one that leaves its limit alone (the
        # sidecar): containerd 2.x's.
        sidecars = [pid for pid, argv in procs.items() if argv[0].endswith(b"rayboot-sidecar")]
        assert sidecars, (name, procs)
        given = nofile(sidecars[0])[0]
        assert given == cluster.CONTAINER_NOFILE_SOFT, (name, nofile(sidecars[0]))
        raylets = [pid for pid, argv in procs.items() if argv[0].endswith(b"/raylet")]
        assert len(raylets) == 1, (name, procs)
        argv = procs[raylets[0]]
        soft, hard = nofile(raylets[0])
        assert soft == min(65536, hard) and soft > cluster.CONTAINER_NOFILE_SOFT, (name, soft, hard)
        assert b"--plasma_directory=/dev/shm" in argv, (name, argv)
        log = node.log(ns, name, "ray")
        assert FALLBACK_WARNING not in log, log

        def metrics(ip=ip):
            r = cluster.node_run(["curl", "-sf", "-m", "5", f"http://{ip}:8080/metrics"], check=False)
            return r.stdout if r.returncode == 0 and "ray_" in r.stdout else None
        text = node.wait(f"{name}'s metrics at {ip}:8080", metrics, 120, interval=2)
        series = {line.split("{")[0].split()[0] for line in text.splitlines() if line.startswith("ray_")}
        print(f"{name}: raylet open files {soft} (hard {hard}; the container was given {given}); "
              f"plasma in /dev/shm; {len(series)} ray_ metric series at {ip}:8080")
