"""Volcano Job manifests for the end-to-end tests: rayboot as every pod's entrypoint."""
import copy
import importlib.metadata
import pathlib

PROGRAMS = pathlib.Path(__file__).resolve().parent / "programs"

# The Ray these tests run, (major, minor): the venv's (build/venv: the pinned 2.60; build/venv-oldest:
# the oldest the docs promise, for the tests marked ray_oldest). Tests say what differs below a gate.
RAY_VERSION = tuple(int(x) for x in importlib.metadata.version("ray").split(".")[:2])

# Keeps the simulated nodes light on a 2-core machine: one CPU each and no dashboard.
LIGHT = "--num-cpus=1 --include-dashboard=false"


def ray_job(name="ray-cluster", workers=2, head_command=None, worker_env=None, head_env=None, grace=30):
    """The seed cluster: head x1 (running head_command under rayboot), worker x2, plugins svc + env."""
    env = [{"name": "RAYBOOT_RAY_START_ARGS", "value": LIGHT}, {"name": "RAYBOOT_GRACE_PERIOD", "value": str(grace)},
           {"name": "RAYBOOT_POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}]
    head = ["rayboot"] + (["--", *head_command] if head_command else [])

    def task(tname, replicas, command, extra):
        return {"name": tname, "replicas": replicas, "template": {"spec": {
            "terminationGracePeriodSeconds": grace,
            "containers": [{"name": "ray", "command": command, "env": copy.deepcopy(env) + (extra or [])}]}}}

    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "volcano-system"},
        "spec": {
            "plugins": {"svc": [], "env": []},
            "tasks": [task("head", 1, head, head_env), task("worker", workers, ["rayboot"], worker_env)],
        },
    }


def env(**values):
    return [{"name": k, "value": str(v)} for k, v in values.items()]
