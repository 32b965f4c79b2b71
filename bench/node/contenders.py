"""The three ways to bring up one Ray cluster (a head and WORKERS workers) that the node bench
compares, each as a user would apply it, changed only in the open and alike for all: the Ray
containers run the one image (nodecommon.RAY_IMAGE: the pinned Ray with rayboot baked in; KubeRay
overrides its command), ask for the same CPU and memory, and use Ray's token authentication
(RAY_AUTH_MODE=token, the token from the Secret ray-auth-token mounted read-only, as
k8s/kuberay/ray-cluster.yaml wires it for KubeRay).

- kuberay: KubeRay v1.5's own sample RayCluster (tests/node/kuberay.sample_cluster), 4 workers.
- indexed: k8s/indexed-job/ray-cluster.yaml, 5 completions.
- vcjob:   k8s/volcano/ray-cluster.yaml (with its rayboot-sidecar), 4 worker replicas, run by the
           stand-in Volcano controller (tests/node/volcano.py)."""
import copy
import json

from nodecommon import RAY_IMAGE, RAY_RESOURCES, WORKERS, configmap, create_auth_secret, start_recorder

import kuberay
from test_shipped_manifests import _pod_specs, apply_rbac_if_used, load

AUTH_MOUNT = {"name": "ray-auth", "mountPath": "/var/run/secrets/ray-auth", "readOnly": True}
AUTH_VOLUME = {"name": "ray-auth", "secret": {"secretName": "ray-auth-token", "defaultMode": 0o440,
                                              "items": [{"key": "token", "path": "token"}]}}
AUTH_VARS = [{"name": "RAY_AUTH_MODE", "value": "token"},
             {"name": "RAY_AUTH_TOKEN_PATH", "value": "/var/run/secrets/ray-auth/token"}]
JOB_MOUNT = {"name": "user-job", "mountPath": "/home/ray/job.py", "subPath": "job.py", "readOnly": True}
RAY_CONTAINERS = {"ray", "ray-head", "ray-worker"}


def _uniform(doc, namespace):
    """The namespace, and every Ray container on the one image with the one set of resources and
    the user's job mounted."""
    doc = json.loads(json.dumps(doc))  # YAML anchors share lists between tasks: unshare them
    doc["metadata"]["namespace"] = namespace
    for spec in _pod_specs(doc):
        for c in spec["containers"]:
            if c["name"] in RAY_CONTAINERS:
                c["image"] = RAY_IMAGE
                c["imagePullPolicy"] = "IfNotPresent"
                c["resources"] = copy.deepcopy(RAY_RESOURCES)
                c.setdefault("volumeMounts", []).append(dict(JOB_MOUNT))
        spec.setdefault("volumes", []).append({"name": "user-job", "configMap": {"name": "user-job"}})
    return doc


def kuberay_cluster(namespace, workers=WORKERS):
    rc = kuberay.sample_cluster()
    group = rc["spec"]["workerGroupSpecs"][0]
    group["replicas"] = group["minReplicas"] = group["maxReplicas"] = workers
    for spec in _pod_specs(rc):
        # Ray's user (UID 1000 in the image) reads the token's file (0440) through its group, as
        # in k8s/kuberay/ray-cluster.yaml; the sample's pods otherwise run as the image's user.
        spec.setdefault("securityContext", {})["fsGroup"] = 100
        spec.setdefault("volumes", []).append(copy.deepcopy(AUTH_VOLUME))
        for c in spec["containers"]:
            c.setdefault("env", []).extend(copy.deepcopy(AUTH_VARS))
            c.setdefault("volumeMounts", []).append(dict(AUTH_MOUNT))
    return _uniform(rc, namespace)


def indexed_job(namespace, workers=WORKERS):
    docs = []
    for d in load("indexed-job/ray-cluster.yaml"):
        d = _uniform(d, namespace)
        if d["kind"] == "Job":
            d["spec"]["completions"] = d["spec"]["parallelism"] = workers + 1
            for c in d["spec"]["template"]["spec"]["containers"]:
                for e in c.get("env", []):
                    if e["name"] == "RAYBOOT_WORKERS_EXPECTED":
                        e["value"] = str(workers)
        docs.append(d)
    return docs


def vcjob(namespace, workers=WORKERS):
    docs = []
    for d in load("volcano/ray-cluster.yaml"):
        d = _uniform(d, namespace)
        if d["kind"] == "Job":
            d["spec"]["minAvailable"] = workers + 1
            for t in d["spec"]["tasks"]:
                if t["name"] == "worker":
                    t["replicas"] = workers
        docs.append(d)
    return docs


# name -> (the objects in creation order, the GCS address from inside the namespace, the owner's
# API path for teardown, the pods' label selector)
def contender(name, namespace):
    if name == "kuberay":
        rc = kuberay_cluster(namespace)
        cname = rc["metadata"]["name"]
        return ([rc], f"{cname}-head-svc:6379", [f"{kuberay.API}/namespaces/{namespace}/rayclusters/{cname}"],
                f"ray.io/cluster={cname}")
    if name == "indexed":
        return (indexed_job(namespace), "ray-indexed-0.ray-indexed:6379",
                [f"/apis/batch/v1/namespaces/{namespace}/jobs/ray-indexed"], "job-name=ray-indexed")
    if name == "vcjob":
        return (vcjob(namespace), "ray-cluster-head-0.ray-cluster:6379",
                [f"/apis/batch.volcano.sh/v1alpha1/namespaces/{namespace}/jobs/ray-cluster"],
                "volcano.sh/job-name=ray-cluster")
    raise ValueError(name)


def set_up(kube, namespace, name, docs, address, job):
    """What every round makes before the contender's own objects: Ray's token Secret, the user's
    job (JOB as /home/ray/job.py), the sidecar's RBAC where the manifest uses it, the GCS recorder;
    for the vcjob the stand-in Volcano controller, returned started (None for the others)."""
    create_auth_secret(kube, namespace)
    kube.create(configmap(namespace, "user-job", {"job.py": job}))
    apply_rbac_if_used(kube, namespace, docs)
    start_recorder(kube, namespace, address)
    if name != "vcjob":
        return None
    import volcano
    return volcano.Controller(kube, namespace).start()
