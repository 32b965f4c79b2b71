"""The three ways to bring up one Ray cluster (a head and WORKERS workers) that the node bench
compares, each as a user would apply it, changed only in the open and alike for all: the Ray
containers run the one image (nodecommon.RAY_IMAGE: the pinned Ray with rayboot baked in; KubeRay
overrides its command), ask for the same CPU and memory, and use Ray's token authentication
(RAY_AUTH_MODE=token) with the one token of the Secret ray-auth-token: rayboot's manifests mount it
read-only (key `token`); KubeRay takes it as its users do, `authOptions` naming that Secret (key
`auth_token`, the same token), and puts it in its containers' env itself.

- kuberay: KubeRay's own sample RayCluster (tests/node/kuberay.sample_cluster), 4 workers.
- indexed: k8s/indexed-job/ray-cluster.yaml, 5 completions.
- vcjob:   k8s/volcano/ray-cluster.yaml (with its rayboot-sidecar), 4 worker replicas, run by the
           stand-in Volcano controller (tests/node/volcano.py).
- NAME_ft: the same with GCS fault tolerance, the cluster's state in k8s/redis/redis.yaml's Redis
           (its Secret ray-redis made as docs/gcs-ft.md says): KubeRay's own
           `gcsFaultToleranceOptions` (redisAddress, redisPassword from the Secret), and rayboot's
           shipped `-gcs-ft` manifests."""
import copy
import json

from nodecommon import RAY_IMAGE, RAY_RESOURCES, WORKERS, configmap, create_auth_secret, start_recorder

import kuberay
from test_shipped_manifests import _pod_specs, apply_rbac_if_used, load

AUTH_SECRET = "ray-auth-token"
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
                # the round's job in place of the manifest's example program
                mounts = [m for m in c.get("volumeMounts", []) if m["mountPath"] != JOB_MOUNT["mountPath"]]
                c["volumeMounts"] = mounts + [dict(JOB_MOUNT)]
        spec["volumes"] = [v for v in spec.get("volumes", []) if v.get("configMap", {}).get("name") != "example-job"]
        spec["volumes"].append({"name": "user-job", "configMap": {"name": "user-job"}})
    return doc


def kuberay_cluster(namespace, workers=WORKERS):
    rc = with_bench_token(kuberay.sample_cluster())
    group = rc["spec"]["workerGroupSpecs"][0]
    group["replicas"] = group["minReplicas"] = group["maxReplicas"] = workers
    return _uniform(rc, namespace)


def with_bench_token(rc):
    """A RayCluster whose token is the bench's one Secret: `authOptions.secretName` (KubeRay's own
    way to bring a token, key auth_token), and any volume of the Secret KubeRay would have made for
    the cluster (k8s/kuberay/ray-cluster.yaml's sidecar reads it) pointed at that Secret too."""
    made = rc["metadata"]["name"]
    rc["spec"]["authOptions"] = {"mode": "token", "secretName": AUTH_SECRET}
    for spec in _pod_specs(rc):
        for v in spec.get("volumes", []):
            if v.get("secret", {}).get("secretName") == made:
                v["secret"]["secretName"] = AUTH_SECRET
    return rc


def indexed_job(namespace, workers=WORKERS, manifest="indexed-job/ray-cluster.yaml"):
    docs = []
    for d in load(manifest):
        d = _uniform(d, namespace)
        if d["kind"] == "Job":
            d["spec"]["completions"] = d["spec"]["parallelism"] = workers + 1
            for c in d["spec"]["template"]["spec"]["containers"]:
                for e in c.get("env", []):
                    if e["name"] == "RAYBOOT_WORKERS_EXPECTED":
                        e["value"] = str(workers)
        docs.append(d)
    return docs


def vcjob(namespace, workers=WORKERS, manifest="volcano/ray-cluster.yaml"):
    docs = []
    for d in load(manifest):
        d = _uniform(d, namespace)
        if d["kind"] == "Job":
            d["spec"]["minAvailable"] = workers + 1
            for t in d["spec"]["tasks"]:
                if t["name"] == "worker":
                    t["replicas"] = workers
        docs.append(d)
    return docs


REDIS_ADDRESS = "ray-redis:6379"  # k8s/redis/redis.yaml's Service


# name -> (the objects in creation order, the GCS address from inside the namespace, the owner's
# API path for teardown, the pods' label selector)
def contender(name, namespace):
    docs, address, owners, selector = _contender(name, namespace)
    if name.endswith("_ft"):
        # Redis's Deployment goes with the cluster, before the pods: else its ReplicaSet makes a new
        # Redis pod for each one the teardown deletes while the namespace goes.
        owners = owners + [f"/apis/apps/v1/namespaces/{namespace}/deployments/ray-redis"]
    return docs, address, owners, selector


def _contender(name, namespace):
    if name in ("kuberay", "kuberay_ft"):
        rc = kuberay_cluster(namespace)
        if name == "kuberay_ft":
            rc["spec"]["gcsFaultToleranceOptions"] = {
                "redisAddress": REDIS_ADDRESS,
                "redisPassword": {"valueFrom": {"secretKeyRef": {"name": "ray-redis", "key": "password"}}}}
        cname = rc["metadata"]["name"]
        return ([rc], f"{cname}-head-svc:6379", [f"{kuberay.API}/namespaces/{namespace}/rayclusters/{cname}"],
                f"ray.io/cluster={cname}")
    ft = "-gcs-ft" if name.endswith("_ft") else ""
    if name in ("indexed", "indexed_ft"):
        job = f"ray-indexed{ft}"
        return (indexed_job(namespace, manifest=f"indexed-job/ray-cluster{ft}.yaml"), f"{job}-0.{job}:6379",
                [f"/apis/batch/v1/namespaces/{namespace}/jobs/{job}"], f"job-name={job}")
    if name in ("vcjob", "vcjob_ft"):
        job = f"ray-cluster{ft}"
        # The head's own Service (the manifest's `{job}-head`), as KubeRay's recorder uses its head-svc.
        return (vcjob(namespace, manifest=f"volcano/ray-cluster{ft}.yaml"), f"{job}-head:6379",
                [f"/apis/batch.volcano.sh/v1alpha1/namespaces/{namespace}/jobs/{job}"], f"volcano.sh/job-name={job}")
    raise ValueError(name)


def kuberay_token(kube, namespace, token):
    """The key KubeRay's authOptions reads (auth_token), the same token, in the one Secret: without
    it KubeRay's containers, wait-gcs-ready first, never start (their env names the key)."""
    kube.patch(f"/api/v1/namespaces/{namespace}/secrets/{AUTH_SECRET}", {"stringData": {"auth_token": token}})


def set_up(kube, namespace, name, docs, address, job):
    """What every round makes before the contender's own objects: Ray's token Secret, the user's
    job (JOB as /home/ray/job.py), the sidecar's RBAC where the manifest uses it, the GCS recorder;
    Redis for a fault tolerant one; for a vcjob the stand-in Volcano controller, returned started
    (None for the others)."""
    token = create_auth_secret(kube, namespace)
    if name.startswith("kuberay"):
        kuberay_token(kube, namespace, token)
    if name.endswith("_ft"):
        from test_gcs_ft_on_node import create_redis
        create_redis(kube, namespace)
    kube.create(configmap(namespace, "user-job", {"job.py": job}))
    apply_rbac_if_used(kube, namespace, docs)
    start_recorder(kube, namespace, address)
    if not name.startswith("vcjob"):
        return None
    import volcano
    return volcano.Controller(kube, namespace).start()
