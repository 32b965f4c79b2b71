"""rayboot itself in real pods of the real node: what it reads from the pod the kubelet made."""
import json

import cluster

RAY_IMAGE = cluster.IMAGE_NAMES["ray"]


def plan_in_pod(node, namespace, name, resources, env=None):
    node.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                 "spec": {"restartPolicy": "Never",
                          "containers": [{"name": "plan", "image": RAY_IMAGE, "imagePullPolicy": "Never",
                                          "command": ["rayboot", "plan", "--format=json"],
                                          "env": [{"name": "RAYBOOT_ROLE", "value": "head"}] + (env or []),
                                          "resources": resources}]}}, namespace)
    p = node.wait_pod_phase(namespace, name, {"Succeeded", "Failed"}, 120)
    out = node.log(namespace, name)
    assert p["status"]["phase"] == "Succeeded", out
    # The pod's log has stderr too: rayboot's own lines (a /dev/shm smaller than the object store
    # a 256Mi limit sizes is warned about) around the JSON on stdout.
    return json.loads("\n".join(ln for ln in out.splitlines() if not ln.startswith("rayboot: ")))


def test_container_limits_become_num_cpus_and_memory(node, namespace):
    """The kubelet's limits reach rayboot through the container's cgroup, on this node cgroup v1
    (cpu.cfs_quota_us / cpu.cfs_period_us, memory.limit_in_bytes): CPUs rounded up, as Ray does."""
    plan = plan_in_pod(node, namespace, "limited", {"limits": {"cpu": "1500m", "memory": "256Mi"}})
    assert "--num-cpus=2" in plan["ray_start"], plan
    assert f"--memory={256 * 1024 * 1024}" in plan["ray_start"], plan


def test_no_limits_leave_the_resources_to_ray(node, namespace):
    plan = plan_in_pod(node, namespace, "unlimited", {"requests": {"cpu": "100m", "memory": "64Mi"}})
    assert not any(a.startswith(("--num-cpus", "--memory")) for a in plan["ray_start"]), plan
