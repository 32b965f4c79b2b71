"""The real KubeRay operator (KUBERAY_VERSION of pins.env, v1.6.2, built by build.sh from the Go
module proxy) on the real node,
for the side-by-side tests in test_kuberay.py. Nothing of it is ours: its CRDs, its RBAC rules and
its sample RayCluster are copied from the module by build.sh into build/node/kuberay, and the
operator runs as the node's other components do (a process in the node's namespaces, dying with
it), with a client certificate of its own bound to the module's ClusterRole, as its Helm chart
binds its ServiceAccount.

What differs from a cluster's install, and why:
- it runs as a node process, not a Deployment: the node has no image of it (the operator would
  be the same binary in a container), and a process is what cluster.py already knows how to run;
- `-use-kubernetes-proxy`: a process on the node resolves no Service names (CoreDNS serves the
  pods), so it reaches the Ray dashboard through the API server's service proxy, an option
  KubeRay has for exactly this (an operator outside the pod network);
- leader election off: there is one replica.

What v1.6 puts in the pods it makes, from its source (ray-operator/controllers/ray/common/pod.go,
raycluster_controller.go) and held by test_kuberay.py: with `authOptions: {mode: token}` a Secret
named after the cluster (key auth_token, owned by the RayCluster) made before any pod, and
RAY_AUTH_MODE and RAY_AUTH_TOKEN (from that key, or from `secretName`'s) in the Ray container and
wait-gcs-ready, not in other containers; for rayVersion >= 2.53 httpGet probes of
:52365/api/healthz where the user set none (no wget in the image needed); RAY_CLUSTER_NAMESPACE;
the RayMultiHostIndexing gate on by default: every worker labelled
ray.io/worker-group-replica-index (and ray.io/replica-host-index with numOfHosts > 1)."""
import time

import cluster
import controllers

KUBERAY = cluster.BUILD / "kuberay"
OPERATOR = cluster.BIN / "ray-operator"
USER = "kuberay-operator"          # the CN of its client certificate (cluster.make_pki)
HEALTH = "127.0.0.1:18082"
CRDS = ("rayclusters", "rayjobs", "rayservices")
API = "/apis/ray.io/v1"


def _install_crds(kube):
    controllers.install_crds(kube, [controllers.load(KUBERAY / "crd" / f"ray.io_{name}.yaml")[0] for name in CRDS],
                             "KubeRay")


def _grant(kube):
    """The module's ClusterRole (config/rbac/role.yaml), bound to the operator's user."""
    (role,) = [d for d in controllers.load(KUBERAY / "rbac" / "role.yaml") if d["kind"] == "ClusterRole"]
    kube.grant_cluster_role(role, USER)


def start_operator(kube):
    """Installs KubeRay's CRDs and RBAC and starts the operator on the node; returns once its
    /readyz answers. It ends with the node."""
    if not OPERATOR.exists() or not (KUBERAY / "ray-cluster.sample.yaml").exists():
        raise RuntimeError(f"{OPERATOR} or {KUBERAY} is missing: run `make node` (tests/node/build.sh)")
    t0 = time.monotonic()
    _install_crds(kube)
    _grant(kube)
    controllers.spawn_until_ready(kube, "kuberay-operator", [
        OPERATOR, f"-kubeconfig={cluster.CONF / 'kuberay-operator.kubeconfig'}", "-enable-leader-election=false",
        f"-health-probe-bind-address={HEALTH}", "-metrics-addr=127.0.0.1:18080", "-use-kubernetes-proxy",
        "-log-stdout-encoder=console"], HEALTH)
    cluster.say(f"KubeRay operator ready ({time.monotonic() - t0:.1f} s)")


def sample_cluster():
    """The module's sample RayCluster, unchanged but for what the node forces (in the open, as
    test_shipped_manifests does for ours): our stand-in image of the pinned Ray, the rayVersion to
    match, CPU requests cut to what a 2-core node can schedule three times."""
    (rc,) = controllers.load(KUBERAY / "ray-cluster.sample.yaml")
    image = cluster.IMAGE_NAMES["ray-stock"]
    rc["spec"]["rayVersion"] = image.rsplit(":", 1)[1]
    for spec in [rc["spec"]["headGroupSpec"]["template"]["spec"]] + \
            [g["template"]["spec"] for g in rc["spec"]["workerGroupSpecs"]]:
        for c in spec["containers"]:
            c["image"] = image
            c["imagePullPolicy"] = "Never"
            c.setdefault("resources", {}).setdefault("requests", {})["cpu"] = "300m"
    return rc


def create(kube, namespace, obj, plural):
    return kube.post(f"{API}/namespaces/{namespace}/{plural}", obj)


def get(kube, namespace, plural, name):
    return kube.get(f"{API}/namespaces/{namespace}/{plural}/{name}")
