"""Ray's metrics at a fixed port (issue 29): every node's `ray start` gets --metrics-export-port=8080,
as KubeRay's pods do, so Prometheus finds each node's metrics at the port the manifests name
`metrics`; a --metrics-export-port of the user's own (RAYBOOT_RAY_START_ARGS) replaces it, and
`rayboot plan` says which."""
import json
import subprocess

import pytest

from test_pid1 import head_env, ray_started, worker_env

ROLES = {"head": {"RAYBOOT_ROLE": "head"},
         "worker": {"RAYBOOT_ROLE": "worker", "RAYBOOT_HEAD_ADDRESS": "ray-head.example:6379"}}


def plan(rayboot_bin, pod_root, fmt, **extra):
    env = {"PATH": "/usr/bin:/bin", "HOSTNAME": "pod-0", "RAYBOOT_ROOT": str(pod_root), "RAYBOOT_POD_IP": "10.1.2.3"}
    env.update(extra)
    out = subprocess.run([str(rayboot_bin), "plan", f"--format={fmt}"], env=env, capture_output=True, text=True,
                         timeout=10)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout) if fmt == "json" else out.stdout


def metrics_flags(argv):
    return [a for a in argv if a.startswith("--metrics-export-port")]


@pytest.mark.parametrize("role", sorted(ROLES))
def test_every_node_exports_metrics_at_8080(rayboot_bin, pod_root, role):
    assert metrics_flags(plan(rayboot_bin, pod_root, "json", **ROLES[role])["ray_start"]) == \
        ["--metrics-export-port=8080"]
    assert "metrics:          port 8080 (Prometheus: http://10.1.2.3:8080/metrics)" in \
        plan(rayboot_bin, pod_root, "text", **ROLES[role])


@pytest.mark.parametrize("given", ["--metrics-export-port=9090", "--metrics-export-port 9090"])
def test_the_users_port_replaces_it(rayboot_bin, pod_root, given):
    p = plan(rayboot_bin, pod_root, "json", RAYBOOT_RAY_START_ARGS=given, **ROLES["worker"])
    assert metrics_flags(p["ray_start"]) == ["--metrics-export-port=9090"], p["ray_start"]
    assert "metrics:          port 9090" in plan(rayboot_bin, pod_root, "text", RAYBOOT_RAY_START_ARGS=given,
                                                  **ROLES["worker"])


def test_ray_is_started_with_it(run, gcs, tmp_path):
    """What the plan says is what ray start gets, on a head and on a worker."""
    run(head_env(gcs))
    assert metrics_flags(ray_started(tmp_path)["argv"]) == ["--metrics-export-port=8080"]


def test_a_worker_is_started_with_it(run, gcs, tmp_path):
    run(worker_env(gcs.port))
    assert metrics_flags(ray_started(tmp_path)["argv"]) == ["--metrics-export-port=8080"]
