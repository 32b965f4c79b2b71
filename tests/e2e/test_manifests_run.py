"""What we ship is what we test: the simulator runs k8s/volcano/ray-cluster.yaml,
k8s/volcano/ray-plugin-compatible.yaml and k8s/indexed-job/ray-cluster.yaml as they are (their
env, plugins, commands, sidecars, probes and preStop hooks), images aside: the job's script
becomes the squares program, and Ray is kept light (one CPU, no dashboard) on this machine. Ray's
token authentication stays on; the simulator mounts no Secret volumes, so the token the manifests
read from the Secret's file (RAY_AUTH_TOKEN_PATH) is given as RAY_AUTH_TOKEN instead."""
import pathlib
import secrets

import yaml

from rayjobs import LIGHT, PROGRAMS

REPO = pathlib.Path(__file__).resolve().parents[2]
SQUARES = "[0, 1, 4, 9, 16, 25, 36, 49, 64, 81]"
JOB_SCRIPT = "/home/ray/job.py"
# The cluster's token, in place of the Secret every manifest mounts (k8s/*: ray-auth-token).
TOKEN = secrets.token_hex(32)


def load(relative, kind="Job"):
    docs = [d for d in yaml.safe_load_all((REPO / "k8s" / relative).read_text()) if d and d["kind"] == kind]
    (doc,) = docs
    return doc


def add_head_services(job, relative):
    """The file's own headless Services that publish a Volcano task's pods before they are Ready
    (k8s/volcano/ray-cluster.yaml's `<job>-head`, which its workers' RAYBOOT_HEAD_ADDRESS names),
    given to the simulated job as they are."""
    for svc in yaml.safe_load_all((REPO / "k8s" / relative).read_text()):
        if svc and svc["kind"] == "Service" and svc["spec"].get("publishNotReadyAddresses"):
            job.add_service(svc["metadata"]["name"], svc["spec"]["selector"]["volcano.sh/task-spec"])


def token_from_env(pod_specs):
    """The token's file (RAY_AUTH_TOKEN_PATH, a Secret volume here unmounted) becomes the token
    itself (RAY_AUTH_TOKEN), in every container that reads it, sidecars included."""
    for spec in pod_specs:
        for c in spec["containers"] + spec.get("initContainers", []):
            env = c.get("env", [])
            for i, item in enumerate(env):
                if item["name"] == "RAY_AUTH_TOKEN_PATH":
                    env[i] = {"name": "RAY_AUTH_TOKEN", "value": TOKEN}


def adapt(pod_specs, program="squares.py"):
    """Images aside: the job script is the squares program; Ray runs light; the token is given
    as a value (token_from_env)."""
    pod_specs = list(pod_specs)
    token_from_env(pod_specs)
    seen = set()
    for spec in pod_specs:
        for c in spec["containers"]:
            c["command"] = [str(PROGRAMS / program) if a == JOB_SCRIPT else a for a in c["command"]]
            env = c.setdefault("env", [])
            if id(env) not in seen:  # YAML anchors share one list between tasks
                seen.add(id(env))
                env.append({"name": "RAYBOOT_RAY_START_ARGS", "value": LIGHT})


def logs(job):
    """Every container's log, the sidecars' too: a sidecar's log says why its /readyz was not 200."""
    return "\n".join(f"--- {name}\n{pod.log()}" + "".join(f"--- {name}'s sidecar\n{c.log()}" for c in pod.sidecars)
                     for name, pod in job.pods.items())


def test_seed_manifest_with_sidecars(cluster):
    manifest = load("volcano/ray-cluster.yaml")
    # The job looks at every pod's /readyz from inside it before it ends (squares_readyz.py).
    adapt((t["template"]["spec"] for t in manifest["spec"]["tasks"]), program="squares_readyz.py")
    job = cluster.job(manifest)
    add_head_services(job, "volcano/ray-cluster.yaml")
    job.start()
    head = job.pod("head")
    assert head.wait(240) == 0, logs(job)
    assert SQUARES in head.log() and "nodes: 3" in head.log(), logs(job)
    assert "readyz: ['200', '200', '200']" in head.log(), logs(job)
    assert "Ray token authentication: the token from RAY_AUTH_TOKEN" in head.log(), logs(job)
    for i in range(2):
        worker = job.pod("worker", i)
        assert worker.wait(60) == 0, logs(job)
        sidecar = worker.sidecars[0]
        assert "ready: this pod's node is ALIVE" in sidecar.log(), sidecar.log()
        assert sidecar.proc.returncode == 0, sidecar.log()
    # The head's sidecar saw its GCS serving, and left when the head's Ray container ended.
    assert "ready: the GCS is SERVING" in head.sidecars[0].log(), head.sidecars[0].log()
    assert head.sidecars[0].proc.returncode == 0


def test_ray_plugin_compatible_manifest(cluster):
    manifest = load("volcano/ray-plugin-compatible.yaml")
    adapt(t["template"]["spec"] for t in manifest["spec"]["tasks"])
    job = cluster.job(manifest)
    # The plugin leaves containers named `ray` alone: rayboot stays their command.
    assert all(t["template"]["spec"]["containers"][0]["command"][0] == "rayboot" for t in manifest["spec"]["tasks"])
    job.start()
    head = job.pod("head")
    assert head.wait(240) == 0, logs(job)
    assert SQUARES in head.log() and "nodes: 3" in head.log(), logs(job)
    for i in range(2):
        assert job.pod("worker", i).wait(60) == 0, logs(job)


def test_indexed_job_manifest(cluster):
    manifest = load("indexed-job/ray-cluster.yaml")
    adapt([manifest["spec"]["template"]["spec"]])
    job = cluster.job(manifest)
    job.start()
    head = job.pod(index=0)
    assert head.wait(240) == 0, logs(job)
    assert SQUARES in head.log() and "nodes: 3" in head.log(), logs(job)
    for i in (1, 2):
        worker = job.pod(index=i)
        assert worker.wait(60) == 0, logs(job)
        assert "this worker only runs Ray" in worker.log()
