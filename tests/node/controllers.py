"""Controllers built from the Go module proxy (tests/node/build.sh) and run on the real node as node
processes, as KubeRay's operator is (kuberay.py): what each of them needs, written once.

- `install_crds`: CRDs posted and waited for until Established;
- `spawn_until_ready`: the program started in the node's namespaces (it dies with the node) and
  waited for until its /readyz answers;
- `WebhookController`: a controller whose admission webhooks are live, installed from what its
  module's own kustomize `config/default` installs in a cluster (build.sh renders it into
  build/node/NAME/install.yaml): its Namespace, CRDs, RBAC, webhook configurations, the empty
  Secret its built-in certificate rotator fills, and its webhook Service. The LeaderWorkerSet
  and JobSet controllers are two of these (LWS and JOBSET below).

What differs from a cluster's install, and why:
- the controller runs as a node process, not a Deployment (the node has no image of it); its
  client certificate's user (cluster.make_pki) takes the place of its ServiceAccount in every
  binding config/ makes, so it has exactly the RBAC config/ grants;
- the webhook Service has no selector (there is no pod to select): an EndpointSlice names the
  process's address, NODE_IP and its webhook port, as cluster.py does for CoreDNS. The API server
  runs in the node's network namespace and reaches a webhook Service by its cluster IP, which
  kube-proxy's rules there send to the process;
- its Configuration (the file config/ mounts as a ConfigMap) turns leader election off (one
  replica), gives each its own webhook port, health address and (LeaderWorkerSet's) certificate
  directory, since they share one network namespace and one /tmp, and turns the metrics server
  off (nothing scrapes it).
The certificate rotator, the webhook configurations' caBundle, the CRDs, the webhooks themselves
and the controllers are theirs, unchanged."""
import base64
import dataclasses
import functools
import json
import pathlib
import time

import yaml

import cluster

CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
RBAC = "/apis/rbac.authorization.k8s.io/v1"


def load(path):
    return [d for d in yaml.load_all(pathlib.Path(path).read_text(), Loader=_LOADER) if d]


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's: LeaderWorkerSet's CRDs are 3 MB


@functools.lru_cache(maxsize=None)
def _install(name):
    return load(cluster.BUILD / name / "install.yaml")


def install_crds(kube, crds, what):
    """Posts each CRD (unless there) and waits until all are Established."""
    for crd in crds:
        kube.post_unless_exists(CRD_PATH, crd)

    def established():
        for crd in crds:
            got = kube.get(f"{CRD_PATH}/{crd['metadata']['name']}")
            if not any(c["type"] == "Established" and c["status"] == "True"
                       for c in got.get("status", {}).get("conditions") or []):
                return False
        return True
    kube.wait(f"{what}'s CRDs established", established, 60)


def spawn_until_ready(kube, name, argv, health, timeout=120):
    """Starts ARGV on the node as component NAME (its log LOGS/NAME.log) and returns once
    http://HEALTH/readyz answers; it ends with the node."""
    _spawn(name, argv)
    _wait_ready(kube, name, health, timeout)


def _spawn(name, argv):
    pid = cluster.init_pid()
    if pid is None:
        raise RuntimeError("the node is not up")
    cluster.spawn(pid, name, argv)


def _wait_ready(kube, name, health, timeout):
    def ready():
        return cluster.node_run(["curl", "-sf", "-m", "2", f"http://{health}/readyz"], check=False).returncode == 0
    kube.wait(f"{name}'s /readyz (see {cluster.LOGS / f'{name}.log'})", ready, timeout, interval=1)


@dataclasses.dataclass(frozen=True)
class WebhookController:
    name: str              # build/node/NAME/install.yaml and the node component's name
    program: str           # in build/node/bin
    user: str              # the CN of its client certificate (cluster.make_pki)
    config_api: str        # its Configuration's apiVersion
    webhook_port: int      # on NODE_IP: the webhook Service's EndpointSlice names it
    health: str            # its /readyz, on the node's loopback
    probe: dict            # an object its webhooks admit: created with dryRun=All to see them answer
    cert_dir: str = "/tmp/k8s-webhook-server/serving-certs"  # where it reads its certificate
    config: dict = dataclasses.field(default_factory=dict)  # more of its Configuration
    args: tuple = ("--leader-elect=false",)                 # flags besides --kubeconfig, --config

    @property
    def docs(self):
        return _install(self.name)

    def of_kind(self, kind):
        return [d for d in self.docs if d["kind"] == kind]

    @property
    def namespace(self):
        (ns,) = self.of_kind("Namespace")
        return ns["metadata"]["name"]

    @property
    def service(self):
        """Its webhook Service (the one the webhook configurations name)."""
        (hook, *_) = self.of_kind("MutatingWebhookConfiguration")
        return hook["webhooks"][0]["clientConfig"]["service"]["name"]

    def probe_path(self):
        api, kind = self.probe["apiVersion"], self.probe["kind"]
        return f"/apis/{api}/namespaces/default/{kind.lower()}s?dryRun=All"


def _grant(kube, ctl):
    """Every Role and ClusterRole config/ makes, bound as config/ binds them, with the controller's
    user in place of its ServiceAccount."""
    for doc in ctl.docs:
        kind, meta = doc["kind"], doc["metadata"]
        if kind in ("ClusterRole", "ClusterRoleBinding"):
            path = f"{RBAC}/{kind.lower()}s"
        elif kind in ("Role", "RoleBinding"):
            path = f"{RBAC}/namespaces/{meta['namespace']}/{kind.lower()}s"
        else:
            continue
        if kind.endswith("Binding"):
            doc = dict(doc, subjects=[{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": ctl.user}
                                      if s["kind"] == "ServiceAccount" else s for s in doc["subjects"]])
        kube.post_unless_exists(path, doc)


def _webhook_service(kube, ctl):
    """config/'s webhook Service without its selector, and an EndpointSlice naming the process."""
    (svc,) = [d for d in ctl.of_kind("Service") if d["metadata"]["name"] == ctl.service]
    ns = ctl.namespace
    svc = json.loads(json.dumps(svc))
    svc["spec"].pop("selector", None)
    kube.post_unless_exists(f"/api/v1/namespaces/{ns}/services", svc)
    (port,) = svc["spec"]["ports"]
    kube.post_unless_exists(f"/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices",
                            endpoint_slice(ctl, port.get("name", ""), ctl.webhook_port))


def endpoint_slice(ctl, port_name, port):
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": f"{ctl.service}-node", "namespace": ctl.namespace,
                         "labels": {"kubernetes.io/service-name": ctl.service,
                                    "endpointslice.kubernetes.io/managed-by": "rbnode"}},
            "addressType": "IPv4",
            "endpoints": [{"addresses": [cluster.NODE_IP], "conditions": {"ready": True}}],
            "ports": [{"name": port_name, "port": port, "protocol": "TCP"}]}


def _config_file(ctl):
    webhook = {"port": ctl.webhook_port, "host": cluster.NODE_IP, "certDir": ctl.cert_dir}
    path = cluster.CONF / f"{ctl.name}-config.yaml"
    path.write_text(json.dumps(dict({
        "apiVersion": ctl.config_api, "kind": "Configuration",
        "leaderElection": {"leaderElect": False},
        "internalCertManagement": {"enable": True},
        "webhook": webhook, "metrics": {"bindAddress": "0"},
        "health": {"healthProbeBindAddress": ctl.health}}, **ctl.config), indent=1) + "\n")
    return path


def _mount_certificate(kube, ctl, timeout):
    """What the kubelet does for the controller's Deployment, which mounts the certificate's Secret
    at its certificate directory: once the rotator has filled the Secret, its files written there
    (in the node's mount namespace, through its init's /proc/PID/root). The rotator waits for
    them before it calls its certificates ready."""
    ns = ctl.namespace
    (secret,) = ctl.of_kind("Secret")
    path = f"/api/v1/namespaces/{ns}/secrets/{secret['metadata']['name']}"
    data = kube.wait(f"{ctl.name}'s rotator filling Secret {ns}/{secret['metadata']['name']}",
                     lambda: (kube.get(path).get("data") or {}).get("tls.key") and kube.get(path)["data"], timeout)
    directory = pathlib.Path(f"/proc/{cluster.init_pid()}/root{ctl.cert_dir}")
    directory.mkdir(parents=True, exist_ok=True)
    for key, value in data.items():
        if key != "ca.key":  # the Deployment mounts the Secret whole; the CA's key has no use here
            (directory / key).write_bytes(base64.b64decode(value))
            (directory / key).chmod(0o600)


def webhook_answers(kube, ctl):
    """True once the API server gets an answer from the controller's webhooks: a dry-run create of
    an object they admit succeeds (they fail closed: unreachable, or a certificate the
    configuration's caBundle does not sign, refuses it)."""
    try:
        kube.post(ctl.probe_path(), ctl.probe)
        return True
    except Exception:  # noqa: BLE001 - refused: not yet
        return False


def start(kube, ctl, timeout=180):
    """Installs CTL from its config/ and starts it; returns once its webhooks answer."""
    binary = cluster.BIN / ctl.program
    if not binary.exists() or not (cluster.BUILD / ctl.name / "install.yaml").exists():
        raise RuntimeError(f"{binary} or {cluster.BUILD / ctl.name} is missing: run `make node` (tests/node/build.sh)")
    t0 = time.monotonic()
    ns = ctl.namespace
    kube.post_unless_exists("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    install_crds(kube, ctl.of_kind("CustomResourceDefinition"), ctl.name)
    _grant(kube, ctl)
    for secret in ctl.of_kind("Secret"):  # the rotator fills it; it must be there first
        kube.post_unless_exists(f"/api/v1/namespaces/{ns}/secrets", secret)
    _webhook_service(kube, ctl)
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        for hook in ctl.of_kind(kind):
            kube.post_unless_exists(f"/apis/admissionregistration.k8s.io/v1/{kind.lower()}s", hook)
    _spawn(ctl.name, [cluster.BIN / ctl.program, f"--kubeconfig={cluster.CONF / f'{ctl.user}.kubeconfig'}",
                      f"--config={_config_file(ctl)}", *ctl.args])
    _mount_certificate(kube, ctl, timeout)
    _wait_ready(kube, ctl.name, ctl.health, timeout)
    try:
        kube.wait(f"{ctl.name}'s webhooks answering the API server", lambda: kube.post(ctl.probe_path(), ctl.probe),
                  timeout, interval=1)
    except TimeoutError as e:
        log = (cluster.LOGS / f"{ctl.name}.log").read_text(errors="replace").splitlines()
        raise RuntimeError(f"{e}\n{ctl.name}.log ends:\n" + "\n".join(log[-40:])) from None
    cluster.say(f"{ctl.name} controller and webhooks ready ({time.monotonic() - t0:.1f} s)")


_POD = {"containers": [{"name": "c", "image": "webhook-check"}]}

LWS = WebhookController(
    name="lws", program="lws-controller", user="lws-controller", config_api="config.lws.x-k8s.io/v1alpha1",
    webhook_port=19443, health="127.0.0.1:18182", cert_dir=str(cluster.RUN / "lws-webhook-certs"),
    probe={"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
           "metadata": {"name": "webhook-check"},
           "spec": {"leaderWorkerTemplate": {"size": 1, "workerTemplate": {"spec": _POD}}}})

# JobSet's rotator waits for its certificate in a fixed /tmp/k8s-webhook-server/serving-certs: the
# node mounts a private tmpfs at /tmp/k8s-webhook-server (nodeinit.py).
JOBSET = WebhookController(
    name="jobset", program="jobset", user="jobset-controller", config_api="config.jobset.x-k8s.io/v1alpha1",
    webhook_port=19444, health="127.0.0.1:18282",
    probe={"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "webhook-check"},
           "spec": {"replicatedJobs": [{"name": "w", "template": {"spec": {"template": {
               "spec": dict(_POD, restartPolicy="Never")}}}}]}})

# Kueue: its namespace and certificate directory its own (JobSet's is the fixed default it shares),
# the integrations rayboot's platforms need (LeaderWorkerSet's works through its pods) and KubeRay's
# RayCluster (side by side with rayboot's under one queue), and no visibility server: its failure
# to serve would end the process, and nothing here asks it. Kueue has no --leader-elect flag: its
# Configuration turns election off. Start it after the LeaderWorkerSet and JobSet controllers and
# KubeRay's CRDs: it sets an integration up only if its CRDs are there.
KUEUE = WebhookController(
    name="kueue", program="kueue", user="kueue-controller", config_api="config.kueue.x-k8s.io/v1beta2",
    webhook_port=19445, health="127.0.0.1:18382", cert_dir=str(cluster.RUN / "kueue-webhook-certs"),
    config={"namespace": "kueue-system", "manageJobsWithoutQueueName": False,
            "integrations": {"frameworks": ["batch/job", "jobset.x-k8s.io/jobset", "pod",
                                            "leaderworkerset.x-k8s.io/leaderworkerset", "ray.io/raycluster"]}},
    args=("--feature-gates=VisibilityOnDemand=false",),
    probe={"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "webhook-check",
                                                             "labels": {"kueue.x-k8s.io/queue-name": "webhook-check"}},
           "spec": {"template": {"spec": dict(_POD, restartPolicy="Never")}}})
