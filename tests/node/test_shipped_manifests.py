"""What we ship, run on the real node to its result: the manifests under k8s/ as they are, with
our images built from our Dockerfiles and real Ray in real pods.

Ray's token authentication is on in every manifest: each test first creates the Secret the
manifests read the token from (ray-auth-token), with a random token, as the quickstarts do.

The program each manifest runs is the one it ships (the example-job ConfigMap, mounted at
/home/ray/job.py); a test that needs a job of its own puts it in that ConfigMap (with_program).
One change only, forced by the test machine, and made here in the open:
- CPU requests are cut to what the pods can share on this 2-core node (the manifests ask for 2
  CPUs a Ray pod, which no 2-core node can schedule three times). Limits are left alone."""
import copy
import json
import os
import pathlib
import re
import secrets
import subprocess
import time

import yaml

import cluster

REPO = pathlib.Path(__file__).resolve().parents[2]
SQUARES = "[0, 1, 4, 9, 16, 25, 36, 49, 64, 81]"
SEED_PROGRAM = REPO / "tests" / "e2e" / "programs" / "squares.py"
RAY_IMAGES = {cluster.PINS["IMAGE_RAY"], "rayproject/ray:2.60.0", cluster.PINS["IMAGE_RAY_STOCK"]}
# The user's job for a test's own pods (KubeRay's sample) that ship none.
JOB_CONFIGMAP = "user-job"
# The shipped example program: every manifest that runs /home/ray/job.py ships it in this ConfigMap.
EXAMPLE_CONFIGMAP = "example-job"
# Where every shipped manifest has Ray's token: the Secret the user makes, mounted read-only.
AUTH_SECRET = "ray-auth-token"
AUTH_SOURCE = "Ray token authentication: the token from RAY_AUTH_TOKEN_PATH=/var/run/secrets/ray-auth/token"
TEST_CPU_REQUEST = "300m"


def load(relative):
    return [d for d in yaml.safe_load_all((REPO / "k8s" / relative).read_text()) if d]


def create_auth_secret(node, namespace):
    """The Secret the shipped manifests read Ray's token from, made as the quickstarts make it
    (`kubectl create secret generic ray-auth-token --from-literal=token="$(openssl rand -hex 32)"`):
    32 random bytes in hex. Returns the token."""
    token = secrets.token_hex(32)
    node.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": AUTH_SECRET, "namespace": namespace},
                 "type": "Opaque", "stringData": {"token": token}})
    return token


def apply(node, namespace, docs):
    """What a user does: the token's Secret first, then the manifest's objects."""
    create_auth_secret(node, namespace)
    for d in docs:
        node.create(d)


AUTH_ENV = [{"name": "RAY_AUTH_TOKEN", "valueFrom": {"secretKeyRef": {"name": AUTH_SECRET, "key": "token"}}}]


def job_configmap(namespace):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": JOB_CONFIGMAP, "namespace": namespace},
            "data": {"job.py": SEED_PROGRAM.read_text()}}


def example_program():
    """The example program the manifests ship (the same text in each: tests/manifests checks)."""
    (cm,) = [d for d in load("volcano/ray-cluster.yaml") if d["kind"] == "ConfigMap"]
    return cm["data"]["job.py"]


def ships_program(docs):
    """Whether DOCS ship the example program (the manifests whose pods run /home/ray/job.py, and
    KubeRay's, whose head mounts it for the quickstart's `ray job submit`; the sidecar-only one
    leaves the job to the user, who submits it)."""
    return any(d["kind"] == "ConfigMap" and d["metadata"]["name"] == EXAMPLE_CONFIGMAP for d in docs)


def with_program(docs, text):
    """DOCS with the shipped example program replaced by TEXT (a test's own job), as a user puts
    theirs in the ConfigMap."""
    (cm,) = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"] == EXAMPLE_CONFIGMAP]
    cm["data"]["job.py"] = text
    return docs


def for_this_node(doc, namespace):
    """The one documented change (CPU requests), and the test's namespace."""
    doc = json.loads(json.dumps(doc))  # YAML anchors share lists between tasks: unshare them
    doc["metadata"]["namespace"] = namespace
    for spec in _pod_specs(doc):
        for c in spec.get("containers", []) + spec.get("initContainers", []):
            req = c.get("resources", {}).get("requests", {})
            if "cpu" in req and _millicores(req["cpu"]) > _millicores(TEST_CPU_REQUEST):
                req["cpu"] = TEST_CPU_REQUEST
    return doc


def _millicores(q):
    return int(q[:-1]) if str(q).endswith("m") else int(float(q) * 1000)


def _pod_specs(doc):
    if doc["kind"] == "Job" and doc["apiVersion"] == "batch/v1":
        return [doc["spec"]["template"]["spec"]]
    if doc["kind"] == "Job":  # batch.volcano.sh
        return [t["template"]["spec"] for t in doc["spec"]["tasks"]]
    if doc["kind"] == "LeaderWorkerSet":
        lwt = doc["spec"]["leaderWorkerTemplate"]
        return [t["spec"] for t in (lwt.get("leaderTemplate"), lwt["workerTemplate"]) if t]
    if doc["kind"] == "JobSet":
        return [r["template"]["spec"]["template"]["spec"] for r in doc["spec"]["replicatedJobs"]]
    if doc["kind"] == "RayCluster":
        return [doc["spec"]["headGroupSpec"]["template"]["spec"]] + \
            [g["template"]["spec"] for g in doc["spec"]["workerGroupSpecs"]]
    return []


def pod_logs(node, namespace):
    out = []
    for p in node.pods(namespace):
        for c in p["spec"]["containers"]:
            try:
                out.append(f"--- {p['metadata']['name']}/{c['name']} ({p['status'].get('phase')})\n"
                           f"{node.log(namespace, p['metadata']['name'], c['name'])}")
            except Exception as e:  # noqa: BLE001 - a log we cannot read is still worth naming
                out.append(f"--- {p['metadata']['name']}/{c['name']}: {e}")
    return "\n".join(out)


def assert_seed_job_ran(node, namespace, pod, container):
    """POD (its last state) Succeeded, and CONTAINER's log has the seed program's result on a
    3-node cluster."""
    name = pod["metadata"]["name"]
    assert pod["status"]["phase"] == "Succeeded", pod_logs(node, namespace)
    log = node.log(namespace, name, container)
    assert SQUARES in log and "nodes: 3" in log, pod_logs(node, namespace)
    assert AUTH_SOURCE in log, log


def job_complete(node, namespace, name):
    """The Job NAME if it is Complete, else None; a Failed one fails the test with every pod's log."""
    j = node.get(f"/apis/batch/v1/namespaces/{namespace}/jobs/{name}")
    conds = {c["type"]: c["status"] for c in j.get("status", {}).get("conditions", [])}
    if conds.get("Failed") == "True":
        raise AssertionError(f"the Job failed: {j['status']}\n{pod_logs(node, namespace)}")
    return j if conds.get("Complete") == "True" else None


def wait_job_complete(node, namespace, name, timeout=420, each_look=None):
    """Waits for the (Indexed) Job NAME to be Complete and returns it; none Complete in TIMEOUT
    fails the test with every pod's log. EACH_LOOK(), if given, runs at every look first (a
    test's record of the pods while they exist)."""
    def finished():
        if each_look:
            each_look()
        return job_complete(node, namespace, name)
    try:
        return node.wait(f"the Indexed Job {name} Complete", finished, timeout, interval=1)
    except TimeoutError as e:
        raise AssertionError(f"{e}\n{pod_logs(node, namespace)}") from None


def test_indexed_job_runs_to_completion(node, restricted_namespace):
    namespace = restricted_namespace
    docs = [for_this_node(d, namespace) for d in load("indexed-job/ray-cluster.yaml")]
    apply(node, namespace, docs)
    wait_job_complete(node, namespace, "ray-indexed")

    pods = {p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]: p
            for p in node.pods(namespace, "job-name=ray-indexed")}
    assert_seed_job_ran(node, namespace, pods["0"], "ray")

    # Every pod ends Succeeded: the workers leave by themselves once the head's job is done.
    def all_succeeded():
        phases = {p["metadata"]["name"]: p["status"].get("phase") for p in node.pods(namespace, "job-name=ray-indexed")}
        return phases if set(phases.values()) == {"Succeeded"} and len(phases) == 3 else None
    try:
        node.wait("every pod Succeeded", all_succeeded, 90, interval=1)
    except TimeoutError as e:
        raise AssertionError(f"{e}\n{pod_logs(node, namespace)}") from None


def apply_rbac_if_used(node, namespace, docs):
    """The sidecar's ServiceAccount and Role (k8s/rbac/sidecar.yaml), when a manifest uses it."""
    uses = any(spec.get("serviceAccountName") == "rayboot-sidecar" for d in docs for spec in _pod_specs(d))
    if uses:
        for d in load("rbac/sidecar.yaml"):
            d = copy.deepcopy(d)
            d["metadata"]["namespace"] = namespace
            for s in d.get("subjects", []):
                s["namespace"] = namespace
            node.create(d)


def vcjob_phase(node, namespace, name):
    j = node.get(f"/apis/batch.volcano.sh/v1alpha1/namespaces/{namespace}/jobs/{name}")
    return j.get("status", {}).get("state", {}).get("phase")


def create_vcjob(node, namespace, relative):
    """Creates the manifest's objects (the vcjob through the CRD's validation); returns the job's
    name."""
    docs = [for_this_node(d, namespace) for d in load(relative)]
    apply_rbac_if_used(node, namespace, docs)
    apply(node, namespace, docs)
    (job,) = [d for d in docs if d["kind"] == "Job"]
    return job["metadata"]["name"]


def run_vcjob(node, namespace, volcano, relative, timeout=420):
    """Creates the manifest's objects and waits for the Volcano Job to end; returns the job's name
    and its pods' final states."""
    return run_vcjob_to_end(node, namespace, volcano, create_vcjob(node, namespace, relative), timeout)


def run_vcjob_to_end(node, namespace, volcano, name, timeout=420):
    """Waits for the Volcano Job NAME to end; returns its name and its pods' final states."""
    final = {}

    def ended_():
        for p in node.pods(namespace, f"volcano.sh/job-name={name}"):
            final[p["metadata"]["name"]] = p
        if volcano.errors:
            raise AssertionError(f"the test controller failed: {volcano.errors}")
        phase = vcjob_phase(node, namespace, name)
        if phase == "Failed":
            raise AssertionError(f"the Volcano Job failed\n{pod_logs(node, namespace)}")
        return phase == "Completed"
    try:
        node.wait(f"Volcano Job {name} Completed", ended_, timeout, interval=1)
    except TimeoutError as e:
        raise AssertionError(f"{e}\n{pod_logs(node, namespace)}") from None
    return name, final


def test_volcano_ray_cluster_runs_to_completion(node, restricted_namespace, volcano):
    namespace = restricted_namespace
    name, final = run_vcjob(node, namespace, volcano, "volcano/ray-cluster.yaml")
    assert_seed_job_ran(node, namespace, final[f"{name}-head-0"], "ray")
    # The workers left by themselves once the head's job was done (rayboot's `finished` key),
    # before CompleteJob had anything to stop.
    for i in range(2):
        assert final[f"{name}-worker-{i}"]["status"]["phase"] == "Succeeded", pod_logs(node, namespace)


def test_volcano_ray_plugin_compatible_runs_to_completion(node, restricted_namespace, volcano):
    namespace = restricted_namespace
    name = create_vcjob(node, namespace, "volcano/ray-plugin-compatible.yaml")
    # While the cluster runs, J-head-svc routes its ports, by name, to the head's container ports
    # (its EndpointSlice, ready once the head is); Volcano deletes the Service when the job ends.
    want = {"gcs": 6379, "dashboard": 8265, "client-server": 10001}

    def routed():
        for es in node.get(f"/apis/discovery.k8s.io/v1/namespaces/{namespace}/endpointslices?"
                           f"labelSelector=kubernetes.io/service-name={name}-head-svc")["items"]:
            ports = {p.get("name"): p.get("port") for p in es.get("ports") or []}
            if ports == want and any(e.get("conditions", {}).get("ready") for e in es.get("endpoints") or []):
                return es
        return None
    try:
        node.wait(f"{name}-head-svc routed to the head's named ports", routed, 300, interval=1)
    except TimeoutError as e:
        raise AssertionError(f"{e}\n{pod_logs(node, namespace)}") from None
    svc = node.get(f"/api/v1/namespaces/{namespace}/services/{name}-head-svc")
    assert {p["targetPort"] for p in svc["spec"]["ports"]} == set(want)
    _, final = run_vcjob_to_end(node, namespace, volcano, name)
    head = final[f"{name}-head-0"]
    assert_seed_job_ran(node, namespace, head, "ray")
    # The plugin left the containers named `ray` alone.
    assert head["spec"]["containers"][0]["command"][0] == "rayboot"


def test_volcano_stock_ray_image_runs_to_completion(node, restricted_namespace, volcano):
    """The unmodified Ray image (our stand-in for rayproject/ray) and rayboot copied in by an
    initContainer from the rayboot image: `rayboot install` into an emptyDir."""
    namespace = restricted_namespace
    name, final = run_vcjob(node, namespace, volcano, "volcano/stock-ray-image.yaml")
    assert_seed_job_ran(node, namespace, final[f"{name}-head-0"], "ray")
    head = node.pod(namespace, f"{name}-head-0")
    install = head["status"]["initContainerStatuses"][0]
    assert install["name"] == "install-rayboot" and install["state"]["terminated"]["exitCode"] == 0


def test_volcano_ray_submitter_runs_to_completion(node, restricted_namespace, volcano):
    """A RayJob without an operator: the submitter task submits the entrypoint through the Jobs
    API, follows its log, and its TaskCompleted ends the Volcano Job; CompleteJob then stops the
    cluster's pods, which drain and exit 0."""
    namespace = restricted_namespace
    name, final = run_vcjob(node, namespace, volcano, "volcano/ray-submitter.yaml")
    assert_seed_job_ran(node, namespace, final[f"{name}-submitter-0"], "submitter")
    for pod in (f"{name}-head-0", f"{name}-worker-0", f"{name}-worker-1"):
        state = final[pod]["status"]
        terminated = [c["state"].get("terminated") for c in state.get("containerStatuses", [])]
        assert all(t is None or t["exitCode"] == 0 for t in terminated), (pod, state)


PROGRAMS = REPO / "tests" / "e2e" / "programs"
# The test's own pods meet Pod Security "restricted" too: every test namespace here enforces it.
RESTRICTED_POD = {"runAsNonRoot": True, "runAsUser": 1000, "runAsGroup": 100, "seccompProfile": {"type": "RuntimeDefault"}}
RESTRICTED_CONTAINER = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]},
                        "readOnlyRootFilesystem": True}


def gcs_recorder(node, namespace, gcs_address, follow=False, auth=True, name="gcs-record"):
    """A pod that records the GCS's node table as it changes (node_states.py --watch), so the
    record outlives the head: the evidence of how a node left. With FOLLOW it records the next
    head's table too (--follow), until the test's namespace goes. AUTH: it has the token of the
    namespace's ray-auth-token Secret (False for a cluster that runs without, as KubeRay's sample;
    (SECRET, KEY) for another, as the one KubeRay makes for `authOptions`). NAME: the pod's, for
    more than one cluster in a namespace."""
    if isinstance(auth, tuple):
        env = [{"name": "RAY_AUTH_TOKEN", "valueFrom": {"secretKeyRef": {"name": auth[0], "key": auth[1]}}}]
    else:
        env = AUTH_ENV if auth else []
    if not node.exists(f"/api/v1/namespaces/{namespace}/configmaps/programs"):
        node.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "programs"},
                     "data": {"node_states.py": (PROGRAMS / "node_states.py").read_text()}}, namespace)
    node.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                 "spec": {"restartPolicy": "Never", "terminationGracePeriodSeconds": 1,
                          "securityContext": RESTRICTED_POD,
                          "containers": [{"name": "record", "image": cluster.IMAGE_NAMES["ray-stock"],
                                          "imagePullPolicy": "Never", "securityContext": RESTRICTED_CONTAINER,
                                          "command": ["python", "/programs/node_states.py", gcs_address,
                                                      "--follow" if follow else "--watch"],
                                          "env": env,
                                          "volumeMounts": [{"name": "programs", "mountPath": "/programs"}]}],
                          "volumes": [{"name": "programs", "configMap": {"name": "programs"}}]}}, namespace)
    node.wait_pod_phase(namespace, name, {"Running"}, 120)


def node_record(node, namespace, name="gcs-record"):
    return [line.split() for line in node.log(namespace, name, "record").splitlines() if line.strip()]


# A pod outside the job that asks a worker's sidecar to drain, as a stranger on the cluster network
# would: every method on the probes port (8077), and the drain port (8078) at the pod's address.
STRANGER = """
import http.client, json, socket, sys
ip = sys.argv[1]
seen = {}
for method in ("GET", "HEAD", "POST", "PUT"):
    c = http.client.HTTPConnection(ip, 8077, timeout=5)
    c.request(method, "/drain?deadline=20")
    seen[f"8077 {method}"] = c.getresponse().status
    c.close()
    try:
        socket.create_connection((ip, 8078), timeout=5).close()
        seen[f"8078 {method}"] = "connected"
    except OSError as e:
        seen[f"8078 {method}"] = type(e).__name__
print(json.dumps(seen))
"""


def container_processes(namespace, pod, ip=None):
    """The live processes of POD's containers on this machine, by container: {mount namespace:
    [pids]}, found from the pod's sidecar (its environment names the pod and its namespace), or
    for a pod without one from its IP, and every process in its network namespace; the sandbox's
    pause process is left out. The node's processes are in a PID namespace below this machine's,
    so /proc shows them all. Also the sidecar's mount namespace (None without a sidecar)."""
    procs = {}
    for p in pathlib.Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                procs[int(p.name)] = (os.stat(p / "ns" / "net").st_ino, os.stat(p / "ns" / "mnt").st_ino,
                                      (p / "environ").read_bytes().split(b"\0"), (p / "cmdline").read_bytes())
            except OSError:
                pass
    want = {f"RAYBOOT_POD_NAME={pod}".encode(), f"RAYBOOT_POD_NAMESPACE={namespace}".encode()}
    sidecars = [pid for pid, (_, _, env, cmd) in procs.items() if want <= set(env) and b"rayboot-sidecar" in cmd]
    if sidecars:
        net, sidecar_mnt = procs[sidecars[0]][:2]
    else:
        sandbox = cluster.pod_sandboxes().get(ip) if ip else None
        assert sandbox, f"no sidecar process of {namespace}/{pod}, and no sandbox at its IP {ip}"
        net, sidecar_mnt = os.stat(f"/proc/{sandbox}/ns/net").st_ino, None
    by_mnt = {}
    for pid, (n, mnt, _, cmd) in procs.items():
        if n == net and not cmd.startswith(b"/pause"):
            by_mnt.setdefault(mnt, []).append(pid)
    return by_mnt, sidecar_mnt


def test_volcano_sidecar_only_runs_a_job_and_drains_an_evicted_worker(node, restricted_namespace, volcano):
    """The plugin's own `sh -c "ray start ..."` Ray containers, with rayboot-sidecar beside them:
    the cluster becomes Ready through the sidecars' /readyz, runs the seed job submitted through
    J-head-svc by `rayboot submit` from our image. A pod outside the job cannot drain a worker
    over the network (its node stays ALIVE, its pod Ready). Only the sidecar container holds a
    service-account token (looked at in the live containers). The worker, evicted through the
    Eviction API, is drained by the Ray container's preStop exec hook through its sidecar before
    it dies: the GCS records it as drained, and the sidecar, reading its Pod with its own token,
    names EvictionByEvictionAPI."""
    namespace = restricted_namespace
    docs = [for_this_node(d, namespace) for d in load("volcano/sidecar-only.yaml")]
    apply_rbac_if_used(node, namespace, docs)
    apply(node, namespace, docs)
    (name,) = [d["metadata"]["name"] for d in docs if d["kind"] == "Job"]
    pods = [f"{name}-head-0", f"{name}-worker-0", f"{name}-worker-1"]

    ready = wait_all_ready(node, namespace, volcano, name, pods)
    gcs_recorder(node, namespace, f"{name}-head-0.{name}:6379")

    node.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "submit"},
                 "spec": {"restartPolicy": "Never", "securityContext": RESTRICTED_POD,
                          "containers": [{"name": "submit", "image": cluster.IMAGE_NAMES["rayboot"],
                                          "imagePullPolicy": "Never", "securityContext": RESTRICTED_CONTAINER,
                                          # The manifest ships no program: the user's job is
                                          # its own, here the seed program given inline.
                                          "command": ["/rayboot", "submit", "--address", f"http://{name}-head-svc:8265",
                                                      "--", "python", "-c", SEED_PROGRAM.read_text()],
                                          "env": AUTH_ENV}]}}, namespace)
    sub = node.wait_pod_phase(namespace, "submit", {"Succeeded", "Failed"}, 240)
    log = node.log(namespace, "submit")
    assert sub["status"]["phase"] == "Succeeded", log + pod_logs(node, namespace)
    assert SQUARES in log and "nodes: 3" in log, log

    victim = f"{name}-worker-1"
    victim_ip = ready[victim]["status"]["podIP"]

    # A stranger: 403 on the probes port whatever the method, nothing at the drain port.
    node.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "stranger"},
                 "spec": {"restartPolicy": "Never", "securityContext": RESTRICTED_POD,
                          "containers": [{"name": "try", "image": cluster.IMAGE_NAMES["ray-stock"],
                                          "imagePullPolicy": "Never", "securityContext": RESTRICTED_CONTAINER,
                                          "command": ["python", "-c", STRANGER, victim_ip]}]}}, namespace)
    tried = node.wait_pod_phase(namespace, "stranger", {"Succeeded", "Failed"}, 120)
    out = node.log(namespace, "stranger")
    assert tried["status"]["phase"] == "Succeeded", out
    seen = json.loads(out.strip().splitlines()[-1])
    assert all(seen[f"8077 {m}"] == 403 for m in ("GET", "HEAD", "POST", "PUT")), seen
    assert all(seen[f"8078 {m}"] == "ConnectionRefusedError" for m in ("GET", "HEAD", "POST", "PUT")), seen
    time.sleep(5)  # more than two readiness looks and a probe period
    assert [r for r in node_record(node, namespace) if r[0] == victim_ip][-1][1] == "ALIVE", node_record(node, namespace)
    still = node.pod(namespace, victim)
    assert any(c["type"] == "Ready" and c["status"] == "True" for c in still["status"]["conditions"]), still["status"]

    # The token: in the sidecar container, and in no other container of the pod.
    by_mnt, sidecar_mnt = container_processes(namespace, victim)
    token = "root/var/run/secrets/kubernetes.io/serviceaccount/token"
    assert len(by_mnt) >= 2, by_mnt  # the sidecar and the Ray container
    for mnt, pids in by_mnt.items():
        has = pathlib.Path(f"/proc/{pids[0]}/{token}").exists()
        assert has == (mnt == sidecar_mnt), (mnt, pids, has)

    # A process of the pod (in its network namespace, as another UID, with no token) asks the
    # worker's sidecar to drain: the sidecar reads its Pod (its own token, the Role), which is not
    # being deleted, so the ask is refused (409) and the node stays ALIVE. Before issue 40 one POST
    # drained it.
    ray_pid = [pids[0] for mnt, pids in by_mnt.items() if mnt != sidecar_mnt][0]
    asked = subprocess.run(["nsenter", "--target", str(ray_pid), "--net", "--", "setpriv", "--reuid=65534",
                            "--regid=65534", "--clear-groups", "--", "curl", "-sS", "-m", "30", "-X", "POST", "-w",
                            "\n%{http_code}", "http://127.0.0.1:8078/drain"], capture_output=True, text=True, timeout=40)
    assert asked.stdout.rstrip().endswith("\n409") and "not being deleted" in asked.stdout, (asked.stdout, asked.stderr)
    time.sleep(3)
    assert [r for r in node_record(node, namespace) if r[0] == victim_ip][-1][1] == "ALIVE", node_record(node, namespace)

    node.evict(namespace, victim)
    last = node.follow_pod_until_gone(namespace, victim, 120)
    record = node_record(node, namespace)
    mine = [r for r in record if r[0] == victim_ip]
    assert mine and mine[-1][1:3] == ["DEAD", "AUTOSCALER_DRAIN_PREEMPTED"], record
    # The sidecar knew why: the Eviction API's DisruptionTarget, read with its projected token.
    sidecar = [c for c in last["status"].get("initContainerStatuses", []) if c["name"] == "rayboot-sidecar"][0]
    terminated = sidecar["state"].get("terminated") or sidecar.get("lastState", {}).get("terminated")
    assert terminated and "EvictionByEvictionAPI" in terminated.get("message", ""), last["status"]
    assert "on preStop" in terminated.get("message", ""), terminated


# An HTTP server that prints who calls it, its own default gateway first (from /proc/net/route).
WHO_CALLS = """
import http.server, socket, struct, sys, time
for line in open("/proc/net/route").read().splitlines()[1:]:
    f = line.split()
    if f[1] == "00000000":
        print("gateway", socket.inet_ntoa(struct.pack("<I", int(f[2], 16))), flush=True)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        print("call", self.path, self.client_address[0], flush=True)
        if self.path == "/prestop":
            time.sleep(3)
        self.send_response(200)
        self.end_headers()
    def log_message(self, *a):
        pass
http.server.HTTPServer(("0.0.0.0", 8080), H).serve_forever()
"""


def test_the_kubelets_probes_and_hooks_come_from_the_bridge_not_the_node_address(node, restricted_namespace):
    """What a source-address check for the drain would have had to admit, seen on the real node:
    the kubelet's probes and its preStop httpGet reach a pod from the CNI bridge's address (the
    pod's default gateway), not from status.hostIP, which no request comes from. Every hostNetwork
    process on the node shares that address: why the drain is on the pod's loopback instead."""
    namespace = restricted_namespace
    node.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "who-calls"},
                 "spec": {"terminationGracePeriodSeconds": 10, "securityContext": RESTRICTED_POD,
                          "containers": [{"name": "serve", "image": cluster.IMAGE_NAMES["ray-stock"],
                                          "imagePullPolicy": "Never", "securityContext": RESTRICTED_CONTAINER,
                                          "command": ["python", "-c", WHO_CALLS],
                                          "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080},
                                                             "periodSeconds": 1},
                                          "livenessProbe": {"httpGet": {"path": "/alive", "port": 8080},
                                                            "periodSeconds": 1},
                                          "lifecycle": {"preStop": {"httpGet": {"path": "/prestop",
                                                                                "port": 8080}}}}]}}, namespace)
    pod = node.wait_pod_ready(namespace, "who-calls", 120)
    node.delete(f"/api/v1/namespaces/{namespace}/pods/who-calls")
    log = node.wait("the preStop call in the log",
                    lambda: (lambda t: t if "call /prestop" in t else None)(node.log(namespace, "who-calls")), 30)
    lines = [ln.split() for ln in log.splitlines()]
    (gateway,) = [ln[1] for ln in lines if ln[0] == "gateway"]
    callers = {(ln[1], ln[2]) for ln in lines if ln[0] == "call"}
    paths = {path for path, _ in callers}
    assert {"/ready", "/alive", "/prestop"} <= paths, callers
    assert {src for _, src in callers} == {gateway}, (gateway, callers)
    assert gateway != pod["status"]["hostIP"] and gateway != pod["status"]["podIP"], (gateway, pod["status"])
    print(f"probes and preStop from {gateway}; hostIP {pod['status']['hostIP']}, podIP {pod['status']['podIP']}")


def _rfc3339(ts):
    """containerd's log timestamp (nanoseconds, Z) as seconds since the epoch."""
    import datetime
    whole, _, frac = ts.rstrip("Z").partition(".")
    t = datetime.datetime.strptime(whole, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    return t.timestamp() + float(f"0.{frac or 0}")


def test_head_readiness_gates_its_dns_name_and_workers_join_within_a_second(node, restricted_namespace, volcano):
    """ray-cluster.yaml: the svc plugin's name for the head answers only once the head is Ready
    (its readinessProbe: the sidecar's /readyz, its GCS serves), so the workers find the head
    through the manifest's own Service (ray-cluster-head, publishNotReadyAddresses): its name
    answers before the head is Ready, and every worker says the GCS is SERVING within 1 s of the
    head's own line saying so (through the svc plugin's name they waited for the readiness probe,
    every 5 s, and CoreDNS's negative cache). Instants: the head's Ready from a watch, each name's
    first answer from CoreDNS polled every 50 ms, the pods' `is SERVING` lines from containerd's
    log timestamps."""
    namespace = restricted_namespace
    import threading
    name = "ray-cluster"
    suffix = f"{namespace}.svc.{cluster.CLUSTER_DOMAIN}"
    names = {"plugin": f"{name}-head-0.{name}.{suffix}", "own": f"{name}-head.{suffix}"}
    seen = {"ready": None, "plugin": None, "own": None}
    done = threading.Event()

    def on_head(kind, pod, at):
        ready = any(c["type"] == "Ready" and c["status"] == "True" for c in pod.get("status", {}).get("conditions", []))
        if ready and seen["ready"] is None:
            seen["ready"] = at
        return seen["ready"] is not None or done.is_set()

    def poll_dns():
        while not done.is_set() and None in (seen["plugin"], seen["own"]):
            for which, fqdn in names.items():
                at = time.time()
                try:
                    addrs = cluster.dns_query(fqdn, timeout=0.5)[1] if seen[which] is None else []
                except OSError:
                    addrs = []
                if addrs:
                    seen[which] = at
            time.sleep(0.05)

    def watch_head():
        node.wait("the head pod", lambda: node.exists(f"/api/v1/namespaces/{namespace}/pods/{name}-head-0"), 60, 0.05)
        node.watch_pod(namespace, f"{name}-head-0", on_head, 400)

    threads = [threading.Thread(target=watch_head, daemon=True), threading.Thread(target=poll_dns, daemon=True)]
    for t in threads:
        t.start()
    try:
        run_vcjob(node, namespace, volcano, "volcano/ray-cluster.yaml")
    finally:
        done.set()
    for t in threads:
        t.join(timeout=15)
    assert seen["ready"] and seen["plugin"], seen
    assert seen["plugin"] >= seen["ready"] - 0.2, \
        f"the svc plugin's name answered {seen['ready'] - seen['plugin']:.2f} s before the head was Ready"
    assert seen["own"] and seen["own"] < seen["ready"], f"the head's own Service did not publish it before Ready: {seen}"

    def serving_line(pod):
        lines = node.log(namespace, pod, "ray", timestamps=True).splitlines()
        serving = [ln for ln in lines if " is SERVING at " in ln]
        assert serving, "\n".join(lines)
        return _rfc3339(serving[0].split(" ", 1)[0])
    head_serving = serving_line(f"{name}-head-0")
    lags = {i: serving_line(f"{name}-worker-{i}") - head_serving for i in range(2)}
    print(f"head's own name {seen['own'] - seen['ready']:+.3f} s from Ready, the plugin's "
          f"{seen['plugin'] - seen['ready']:+.3f} s; the head SERVING {head_serving - seen['ready']:+.3f} s; "
          f"the workers' SERVING after the head's: {lags}")
    assert all(lag <= 1.0 for lag in lags.values()), (lags, seen)


# The user's job for the eviction test: short tasks on every node, for as long as the test needs.
BUSY_JOB = """
import time
import ray
ray.init()

@ray.remote(num_cpus=0.5, max_retries=5)
def work(i):
    time.sleep(0.5)
    return i

done, t0 = 0, time.time()
while time.time() - t0 < 600:
    done += len(ray.get([work.remote(i) for i in range(6)]))
print("tasks done:", done, flush=True)
"""


def wait_all_ready(node, namespace, volcano, name, pods, timeout=300):
    def all_ready():
        if volcano.errors:
            raise AssertionError(f"the test controller failed: {volcano.errors}")
        got = {p["metadata"]["name"]: p for p in node.pods(namespace, f"volcano.sh/job-name={name}")}
        return got if all(
            not got.get(n, {}).get("metadata", {}).get("deletionTimestamp") and
            any(c["type"] == "Ready" and c["status"] == "True"
                for c in got.get(n, {}).get("status", {}).get("conditions", [])) for n in pods) else None
    try:
        return node.wait("every pod Ready", all_ready, timeout, interval=1)
    except TimeoutError as e:
        raise AssertionError(f"{e}\n{pod_logs(node, namespace)}") from None


def ended(pod, container):
    """CONTAINER's terminated state in POD's status, or None (running, or not started yet)."""
    statuses = pod["status"].get("containerStatuses", []) + pod["status"].get("initContainerStatuses", [])
    st = [c for c in statuses if c["name"] == container]
    return (st[0]["state"].get("terminated") or st[0].get("lastState", {}).get("terminated")) if st else None


def test_volcano_ray_cluster_worker_evicted_then_deleted_drains(node, restricted_namespace, volcano):
    """ray-cluster.yaml with a busy job: a worker running tasks is evicted through the Eviction
    API; the kubelet runs its preStop drain on the sidecar, which reads its Pod with its projected
    token and k8s/rbac/sidecar.yaml's Role. The GCS records the node as drained, the sidecar's
    termination message names EvictionByEvictionAPI, the Ray container (rayboot) exits 0. After
    RestartJob brings the cluster back, a plain deletion (kubectl delete) drains the same way and
    the reason says it was a deletion."""
    namespace = restricted_namespace
    docs = [for_this_node(d, namespace) for d in load("volcano/ray-cluster.yaml")]
    apply_rbac_if_used(node, namespace, docs)
    apply(node, namespace, with_program(docs, BUSY_JOB))
    name = "ray-cluster"
    pods = [f"{name}-head-0", f"{name}-worker-0", f"{name}-worker-1"]
    for attempt, (victim, how) in enumerate([(f"{name}-worker-1", "evict"), (f"{name}-worker-0", "delete")]):
        ready = wait_all_ready(node, namespace, volcano, name, pods)
        if attempt == 0:
            gcs_recorder(node, namespace, f"{name}-head-0.{name}:6379")
        else:  # the head is new after RestartJob: record its GCS
            node.delete(f"/api/v1/namespaces/{namespace}/pods/gcs-record")
            node.wait("the old recorder gone",
                      lambda: not node.exists(f"/api/v1/namespaces/{namespace}/pods/gcs-record"), 60)
            gcs_recorder(node, namespace, f"{name}-head-0.{name}:6379")
        victim_ip = ready[victim]["status"]["podIP"]
        node.wait(f"{victim}'s node in the GCS record",
                  lambda victim_ip=victim_ip: any(r[0] == victim_ip and r[1] == "ALIVE" for r in node_record(node, namespace)), 60)
        time.sleep(3)  # tasks are running on every node
        if how == "evict":
            node.evict(namespace, victim)
        else:
            node.delete(f"/api/v1/namespaces/{namespace}/pods/{victim}")
        last = node.follow_pod_until_gone(namespace, victim, 120)
        record = node_record(node, namespace)
        mine = [r for r in record if r[0] == victim_ip]
        assert mine and mine[-1][1:3] == ["DEAD", "AUTOSCALER_DRAIN_PREEMPTED"], (how, record)
        ray = ended(last, "ray")
        assert ray and ray["exitCode"] == 0, (how, last["status"])
        assert "drained" in ray.get("message", ""), (how, ray)
        sidecar = ended(last, "rayboot-sidecar")
        want = "EvictionByEvictionAPI" if how == "evict" else "no disruption condition"
        assert sidecar and want in sidecar.get("message", ""), (how, last["status"])


def test_volcano_worker_evicted_as_it_joins_is_drained_at_once(node, restricted_namespace, volcano):
    """ray-cluster.yaml, a worker evicted 0.5 s after its node is ALIVE in the GCS's table. Its
    `ray start` is rayboot's child, which rayboot stops after SIGTERM whatever Ray's start-up is
    doing, so the sidecar has no reason to hold the drain of a node that has just joined (as it
    does for KubeRay's pods, where `ray start` is PID 1): the preStop hook says so. The sidecar's
    own figure (its termination message) is from the preStop to the node gone from the GCS: held,
    at least 1.3 s (2.73 s to gone in bench/node/evict.py); now a look or two."""
    namespace = restricted_namespace
    docs = [for_this_node(d, namespace) for d in load("volcano/ray-cluster.yaml")]
    apply_rbac_if_used(node, namespace, docs)
    apply(node, namespace, with_program(docs, BUSY_JOB))
    name, victim = "ray-cluster", "ray-cluster-worker-0"
    gcs_recorder(node, namespace, f"{name}-head-0.{name}:6379")
    pod = node.wait(f"{victim}'s address", lambda: next(
        (p for p in node.pods(namespace, f"volcano.sh/job-name={name}")
         if p["metadata"]["name"] == victim and p["status"].get("podIP")), None), 240)
    ip = pod["status"]["podIP"]
    try:
        node.wait(f"{victim}'s node ALIVE in the GCS's table",
                  lambda: any(r[0] == ip and r[1] == "ALIVE" for r in node_record(node, namespace)), 240, interval=0.1)
    except TimeoutError as e:
        raise AssertionError(f"{e}\n{pod_logs(node, namespace)}") from None
    time.sleep(0.5)
    t0 = time.monotonic()
    node.evict(namespace, victim)
    last = node.follow_pod_until_gone(namespace, victim, 120)
    gone = time.monotonic() - t0
    mine = [r for r in node_record(node, namespace) if r[0] == ip]
    assert mine[-1][1:3] == ["DEAD", "AUTOSCALER_DRAIN_PREEMPTED"], mine
    ray, sidecar = ended(last, "ray"), ended(last, "rayboot-sidecar")
    assert ray and ray["exitCode"] == 0, last["status"]
    said = re.search(r"node drained in ([0-9.]+) s on preStop", (sidecar or {}).get("message", ""))
    assert said, last["status"]
    print(f"vcjob: worker evicted 0.5 s after it joined, gone in {gone:.2f} s; the sidecar's drain {said.group(1)} s")
    # Held, the drain waits out the rest of the 1.5 s past the sidecar's first look that found the
    # node ALIVE (1.82 s seen); not held, a DrainNode and a look or two (0.21 s).
    assert float(said.group(1)) < 1.0, f"the drain of a joining vcjob worker was held: {sidecar['message']}"


# --- The head deleted: re-created alone, the workers rejoin it (issue 17, item 5) -----------------


def whole_again(record, head_ip, worker_ips, old_ids):
    """The head's IP if the GCS record ever had, at one moment, a head (at HEAD_IP, when given) and
    a worker at each of WORKER_IPS ALIVE, all of them nodes that joined after OLD_IDS: the cluster
    whole again; else None."""
    state = {}
    for r in record:
        if len(r) < 5:
            continue
        state[r[4]] = (r[0], r[1], r[3])
        now = {(ip, role) for i, (ip, alive, role) in state.items() if alive == "ALIVE" and i not in old_ids}
        heads = [ip for ip, role in now if role == "head" and head_ip in (None, ip)]
        if heads and all((w, "worker") in now for w in worker_ips):
            return heads[0]
    return None


def watch_phases(node, path, phase_of, seen, done):
    """Appends each new PHASE_OF(object) of the object at PATH (a list URL with a field selector)
    to SEEN, from a watch, until DONE is set."""
    rv = node.get(path)["metadata"]["resourceVersion"]
    while not done.is_set():
        try:
            for kind, obj in node.watch_events(path, rv, 5):
                if kind == "ERROR":
                    rv = node.get(path)["metadata"]["resourceVersion"]
                    break
                rv = obj["metadata"].get("resourceVersion", rv)
                phase = phase_of(obj) if kind in ("ADDED", "MODIFIED") else None
                if phase and (not seen or seen[-1] != phase):
                    seen.append(phase)
        except OSError:
            continue


def start_busy_then_seed_job(docs):
    """The user's job: busy (BUSY_JOB) in the first head, which the test deletes while it runs;
    the shipped example program once the test says the next head may finish (rerun_seed)."""
    return with_program(docs, BUSY_JOB)


def rerun_seed(node, namespace):
    """From now on a new head's job is the seed program (a pod mounts the ConfigMap as it is when
    the pod starts; the head running now keeps its busy job)."""
    node.patch(f"/api/v1/namespaces/{namespace}/configmaps/{EXAMPLE_CONFIGMAP}", {"data": {"job.py": example_program()}})


def first_cluster_up(node, namespace, gcs_address, head_pod, worker_pods):
    """The recorder follows GCS_ADDRESS across heads; waits until the first cluster is whole
    (the head and every worker ALIVE) and the head's job runs. Returns the first cluster's node
    ids and the pods' IPs."""
    gcs_recorder(node, namespace, gcs_address, follow=True)
    ips = {p["metadata"]["name"]: p["status"]["podIP"] for p in [head_pod] + worker_pods}
    head_ip, worker_ips = ips[head_pod["metadata"]["name"]], [ips[w["metadata"]["name"]] for w in worker_pods]
    node.wait("the first cluster whole in the GCS record",
              lambda: whole_again(node_record(node, namespace), head_ip, worker_ips, set()), 180, interval=1)
    node.wait("the head's job started", lambda: "started the command" in node.log(
        namespace, head_pod["metadata"]["name"], "ray"), 120, interval=1)
    return {r[4] for r in node_record(node, namespace) if len(r) >= 5}, head_ip, worker_ips


def assert_stopped_head(last, how, decided):
    """The head's Ray container (rayboot) ended with its job's outcome, stopped by the SIGTERM:
    not 0, so Volcano raises no TaskCompleted and the Job controller no succeeded index. When it
    did not, the message says what the controller then made of it (DECIDED())."""
    ray = ended(last, "ray")
    if last["status"]["phase"] != "Failed" or not ray or ray["exitCode"] == 0:
        raise AssertionError(f"{how}: the head whose job was running ended {last['status']['phase']} "
                             f"({ray}); then: {decided()}")
    assert "the command was stopped" in ray.get("message", ""), (how, ray)


# How long a head whose job runs may take to end once deleted or evicted: its controller
# re-creates it only then. It has its node drained and stops Ray without waiting for the node to
# leave (the contract test test_the_head_does_not_wait_for_its_node_to_leave holds that), keeps
# its GCS up 0.6 s for workers draining at the same time, and gives its ray start 2 s (seen on
# the node: 3.02-3.04 s, 2026-11-29; 3.2-3.85 s before, without the 0.6 s). A bound, not
# the figure.
HEAD_END_S = 3.5


def assert_head_ended_at_once(head_end, t0):
    """The head's Ray container ended within HEAD_END_S of the deletion or eviction at T0."""
    pod = head_end.pod()
    took = head_end.at - t0
    print(f"the head's container ended {took:.2f} s after it was deleted or evicted")
    assert took <= HEAD_END_S, f"the head took {took:.2f} s to end: {ended(pod, 'ray')}"


def rejoined(node, namespace, old_head_ip, worker_ips, old_ids, workers):
    """Waits until a new head's GCS has the cluster whole again with the same worker pods, which
    say they joined the head again (read now: a finished Job's pods may be deleted); returns the
    new head's IP."""
    try:
        head_ip = node.wait("the cluster whole again in a new GCS",
                            lambda: whole_again(node_record(node, namespace), None, worker_ips, old_ids), 240, interval=1)
    except TimeoutError as e:
        raise AssertionError(f"{e}\n{node_record(node, namespace)}\n{pod_logs(node, namespace)}") from None
    assert head_ip != old_head_ip, "the re-created head must have a new IP"
    for w in workers:
        log = node.log(namespace, w, "ray")
        assert "joining the head again" in log, log
    took = {w: rejoin_share(node.log(namespace, w, "ray", timestamps=True)) for w in workers}
    print(f"each worker's own share, from leaving its old cluster to its new ray start: {took}")
    assert all(t <= REJOIN_OWN_S for t in took.values()), took
    return head_ip


# A worker's own share of its rejoin: from deciding to leave its old cluster (the head answers as a
# new one, or its Ray ended with the head gone or new) to starting Ray again. The old Ray's
# processes are stopped together and given 1 s, what they leave 1 s more; it was 7 s (ray start
# stopping its daemons one after another, 2 s, then 5 s for what they left).
REJOIN_OWN_S = 3.0
LEAVING = ("leaving the old one to join it", "Ray exited and the head is gone or new")


def rejoin_share(stamped):
    """Seconds from the worker's first word of leaving its old cluster to its next `started ray`,
    from a container log with containerd's timestamps."""
    lines = [(_rfc3339(ln.split(" ", 1)[0]), ln) for ln in stamped.splitlines() if " " in ln]
    left = next((t for t, ln in lines if any(w in ln for w in LEAVING)), None)
    assert left is not None, stamped
    started = next((t for t, ln in lines if t >= left and "rayboot: info: started ray" in ln), None)
    assert started is not None, stamped
    return round(started - left, 3)


class PodEnd:
    """Follows one pod from now until its CONTAINER has ended or the pod is deleted (a watch: a
    finished Job's pods may be deleted at any moment); .pod() is the last state seen, .at when
    it was seen (time.monotonic())."""

    def __init__(self, node, namespace, name, container, timeout=420):
        import threading
        self.last = self.at = None

        def on_event(kind, pod, _at):
            self.last, self.at = pod, time.monotonic()
            return kind == "DELETED" or ended(pod, container) is not None
        self._thread = threading.Thread(target=node.watch_pod, args=(namespace, name, on_event, timeout), daemon=True)
        self._thread.start()

    def pod(self, timeout=120):
        self._thread.join(timeout)
        assert not self._thread.is_alive() and self.last, f"no end seen: {self.last}"
        return self.last


def assert_left_when_done(pod):
    """The worker's Ray container ended by itself, exit 0, once the head's job was done (not
    stopped by its controller), never restarted."""
    ray = ended(pod, "ray")
    assert ray and ray["exitCode"] == 0 and "the head's command finished" in ray.get("message", ""), pod["status"]
    assert all(c["restartCount"] == 0 for c in pod["status"]["containerStatuses"]), pod["status"]


def test_volcano_head_deleted_is_recreated_alone_and_the_workers_rejoin(node, restricted_namespace, volcano):
    """ray-cluster.yaml: the head is deleted (`kubectl delete`) while its job runs. It ends with
    the job's outcome, stopped (non-zero: no TaskCompleted, the vcjob is not Completed by it);
    PodEvicted -> RestartTask re-creates the head alone, under its name with a new IP; the same
    worker pods rejoin it (the new GCS's node table: the new head and both workers ALIVE); the job
    runs again to its result and the vcjob Completes."""
    import threading
    namespace = restricted_namespace
    docs = [for_this_node(d, namespace) for d in load("volcano/ray-cluster.yaml")]
    apply_rbac_if_used(node, namespace, docs)
    apply(node, namespace, start_busy_then_seed_job(docs))
    name = "ray-cluster"
    head, workers = f"{name}-head-0", [f"{name}-worker-0", f"{name}-worker-1"]
    phases, done = [], threading.Event()
    watcher = threading.Thread(target=watch_phases, daemon=True, args=(
        node, f"/apis/batch.volcano.sh/v1alpha1/namespaces/{namespace}/jobs?fieldSelector=metadata.name={name}",
        lambda j: j.get("status", {}).get("state", {}).get("phase"), phases, done))
    watcher.start()
    try:
        ready = wait_all_ready(node, namespace, volcano, name, [head] + workers)
        old_ids, head_ip, worker_ips = first_cluster_up(node, namespace, f"{head}.{name}:6379", ready[head],
                                                        [ready[w] for w in workers])
        rerun_seed(node, namespace)
        head_end = PodEnd(node, namespace, head, "ray")
        t0 = time.monotonic()
        node.delete(f"/api/v1/namespaces/{namespace}/pods/{head}")
        last = node.follow_pod_until_gone(namespace, head, 120)
        assert_head_ended_at_once(head_end, t0)
        assert_stopped_head(last, "delete", lambda: node.wait(
            "the vcjob's next phase", lambda: phases if {"Restarting", "Completed", "Failed"} & set(phases) else None,
            60, interval=0.5))

        def recreated():
            p = node.pod(namespace, head)
            return p if p["metadata"]["uid"] != ready[head]["metadata"]["uid"] else None
        node.wait("the head re-created", recreated, 120, interval=0.5)
        t_new = time.monotonic()
        new_ip = rejoined(node, namespace, head_ip, worker_ips, old_ids, workers)
        print(f"head deleted: {ended(last, 'ray')}; re-created after {t_new - t0:.1f} s, "
              f"whole again after {time.monotonic() - t0:.1f} s")
        ends = {w: PodEnd(node, namespace, w, "ray") for w in workers}
        _, final = run_vcjob_to_end(node, namespace, volcano, name)
    finally:
        done.set()
    assert_seed_job_ran(node, namespace, final[head], "ray")
    assert final[head]["status"]["podIP"] == new_ip, "the job ran on another head than the workers rejoined"
    for w in workers:  # the same pods, never restarted, left by themselves once the job was done
        end = ends[w].pod()
        assert end["metadata"]["uid"] == ready[w]["metadata"]["uid"], w
        assert_left_when_done(end)
    # One task restart, no job restart: the head is of the job's first version, one retry counted.
    job = node.get(f"/apis/batch.volcano.sh/v1alpha1/namespaces/{namespace}/jobs/{name}")["status"]
    assert job["retryCount"] == 1, job
    assert final[head]["metadata"]["annotations"]["volcano.sh/job-version"] == "0", final[head]["metadata"]
    watcher.join(timeout=15)
    assert "Restarting" in phases and phases[-1] == "Completed", phases
    before = phases[:phases.index("Restarting")]
    assert not {"Completing", "Completed"} & set(before), f"the deleted head completed the job: {phases}"


def test_indexed_job_head_evicted_is_recreated_and_the_workers_rejoin(node, restricted_namespace):
    """indexed-job/ray-cluster.yaml: the head is evicted (the Eviction API, as a node drain does)
    while its job runs. It ends with the job's outcome, stopped (non-zero: index 0 does not
    succeed, the Job is not Complete by it); podFailurePolicy ignores the disrupted pod and the
    real Job controller re-creates index 0 with a new IP; the same worker pods rejoin it; the
    job runs again to its result and the Job is Complete, no failure counted."""
    namespace = restricted_namespace
    docs = [for_this_node(d, namespace) for d in load("indexed-job/ray-cluster.yaml")]
    apply(node, namespace, start_busy_then_seed_job(docs))
    sel = "job-name=ray-indexed"
    path = f"/apis/batch/v1/namespaces/{namespace}/jobs"

    def by_index():
        got = {p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]: p
               for p in node.pods(namespace, sel) if not p["metadata"].get("deletionTimestamp")}
        ready = all(any(c["type"] == "Ready" and c["status"] == "True" for c in got.get(i, {}).get("status", {})
                        .get("conditions", [])) for i in "012")
        return got if ready else None
    try:
        pods = node.wait("every index Ready", by_index, 300, interval=1)
    except TimeoutError as e:
        raise AssertionError(f"{e}\n{pod_logs(node, namespace)}") from None
    head, workers = pods["0"], [pods["1"], pods["2"]]
    old_ids, head_ip, worker_ips = first_cluster_up(node, namespace, "ray-indexed-0.ray-indexed:6379", head, workers)
    rerun_seed(node, namespace)
    head_end = PodEnd(node, namespace, head["metadata"]["name"], "ray")
    t0 = time.monotonic()
    node.evict(namespace, head["metadata"]["name"])
    last = node.follow_pod_until_gone(namespace, head["metadata"]["name"], 120)
    assert_head_ended_at_once(head_end, t0)

    def job_decided():
        status = node.get(f"{path}/ray-indexed").get("status", {})
        return status if [c for c in status.get("conditions") or [] if c["status"] == "True"] else None
    assert_stopped_head(last, "evict", lambda: node.wait("the Job's next condition", job_decided, 60, interval=0.5))
    assert any(c["type"] == "DisruptionTarget" and c["reason"] == "EvictionByEvictionAPI"
               for c in last["status"]["conditions"]), last["status"]

    def recreated():
        p = [p for p in node.pods(namespace, sel) if p["metadata"]["annotations"][
            "batch.kubernetes.io/job-completion-index"] == "0" and p["metadata"]["uid"] != head["metadata"]["uid"]]
        return p[0] if p else None
    new = node.wait("index 0 re-created", recreated, 120, interval=0.5)
    t_new = time.monotonic()
    # The evicted head did not end the Job: index 0 has not succeeded, nothing is decided.
    status = node.get(f"{path}/ray-indexed")["status"]
    assert "0" not in status.get("completedIndexes", "").split(",") and not [
        c for c in status.get("conditions") or [] if c["status"] == "True"], status
    new_ip = rejoined(node, namespace, head_ip, worker_ips, old_ids, [w["metadata"]["name"] for w in workers])
    print(f"head evicted: {ended(last, 'ray')}; re-created after {t_new - t0:.1f} s, "
          f"whole again after {time.monotonic() - t0:.1f} s")
    ends = {w["metadata"]["name"]: PodEnd(node, namespace, w["metadata"]["name"], "ray") for w in workers}
    final = {}

    def last_look():
        for p in node.pods(namespace, sel):
            final[p["metadata"]["name"]] = p  # the last look at each pod: finished Jobs' pods go
    job = wait_job_complete(node, namespace, "ray-indexed", 300, last_look)
    assert_seed_job_ran(node, namespace, final[new["metadata"]["name"]], "ray")
    assert final[new["metadata"]["name"]]["status"]["podIP"] == new_ip, "the job ran on another head than the workers rejoined"
    assert not job["status"].get("failed"), job["status"]  # the disrupted head was not counted
    for w in workers:  # the same pods, never restarted, left by themselves once the job was done
        assert_left_when_done(ends[w["metadata"]["name"]].pod())
