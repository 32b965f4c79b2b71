"""What we ship, run on the real node to its result: the manifests under k8s/ as they are, with
our images built from our Dockerfiles and real Ray in real pods.

Two changes only, both forced by the test machine, and made here in the open:
- the user's script: the manifests run /home/ray/job.py, which is yours and in no image of ours;
  here it is the seed program (squares), from a ConfigMap mounted at that path in every Ray
  container;
- CPU requests are cut to what the pods can share on this 2-core node (the manifests ask for 2
  CPUs a Ray pod, which no 2-core node can schedule three times). Limits are left alone."""
import copy
import json
import pathlib
import time

import yaml

import cluster

REPO = pathlib.Path(__file__).resolve().parents[2]
SQUARES = "[0, 1, 4, 9, 16, 25, 36, 49, 64, 81]"
SEED_PROGRAM = REPO / "tests" / "e2e" / "programs" / "squares.py"
RAY_IMAGES = {cluster.PINS["IMAGE_RAY"], "rayproject/ray:2.60.0", cluster.PINS["IMAGE_RAY_STOCK"]}
JOB_CONFIGMAP = "user-job"
TEST_CPU_REQUEST = "300m"


def load(relative):
    return [d for d in yaml.safe_load_all((REPO / "k8s" / relative).read_text()) if d]


def job_configmap(namespace):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": JOB_CONFIGMAP, "namespace": namespace},
            "data": {"job.py": SEED_PROGRAM.read_text()}}


def for_this_node(doc, namespace):
    """The two documented changes, and the test's namespace."""
    doc = json.loads(json.dumps(doc))  # YAML anchors share lists between tasks: unshare them
    doc["metadata"]["namespace"] = namespace
    for spec in _pod_specs(doc):
        mounted = False
        for c in spec.get("containers", []) + spec.get("initContainers", []):
            if c.get("image") in RAY_IMAGES:
                c.setdefault("volumeMounts", []).append(
                    {"name": JOB_CONFIGMAP, "mountPath": "/home/ray/job.py", "subPath": "job.py", "readOnly": True})
                mounted = True
            req = c.get("resources", {}).get("requests", {})
            if "cpu" in req and _millicores(req["cpu"]) > _millicores(TEST_CPU_REQUEST):
                req["cpu"] = TEST_CPU_REQUEST
        if mounted:
            spec.setdefault("volumes", []).append({"name": JOB_CONFIGMAP, "configMap": {"name": JOB_CONFIGMAP}})
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


def test_indexed_job_runs_to_completion(node, restricted_namespace):
    namespace = restricted_namespace
    docs = [for_this_node(d, namespace) for d in load("indexed-job/ray-cluster.yaml")]
    node.create(job_configmap(namespace))
    for d in docs:
        node.create(d)

    def finished():
        j = node.get(f"/apis/batch/v1/namespaces/{namespace}/jobs/ray-indexed")
        conds = {c["type"]: c["status"] for c in j.get("status", {}).get("conditions", [])}
        if conds.get("Failed") == "True":
            raise AssertionError(f"the Job failed: {j['status']}\n{pod_logs(node, namespace)}")
        return j if conds.get("Complete") == "True" else None
    try:
        node.wait("the Indexed Job Complete", finished, 420, interval=1)
    except TimeoutError as e:
        raise AssertionError(f"{e}\n{pod_logs(node, namespace)}") from None

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


def run_vcjob(node, namespace, volcano, relative, timeout=420):
    """Creates the manifest's objects (the vcjob through the CRD's validation) and waits for the
    Volcano Job to end; returns the job's name and its pods' final states."""
    docs = [for_this_node(d, namespace) for d in load(relative)]
    apply_rbac_if_used(node, namespace, docs)
    node.create(job_configmap(namespace))
    for d in docs:
        node.create(d)
    (job,) = [d for d in docs if d["kind"] == "Job"]
    name = job["metadata"]["name"]
    final = {}

    def ended():
        for p in node.pods(namespace, f"volcano.sh/job-name={name}"):
            final[p["metadata"]["name"]] = p  # the last look at each pod, deleted ones included
        if volcano.errors:
            raise AssertionError(f"the test controller failed: {volcano.errors}")
        phase = vcjob_phase(node, namespace, name)
        if phase == "Failed":
            raise AssertionError(f"the Volcano Job failed\n{pod_logs(node, namespace)}")
        return phase == "Completed"
    try:
        node.wait(f"Volcano Job {name} Completed", ended, timeout, interval=1)
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
    name, final = run_vcjob(node, namespace, volcano, "volcano/ray-plugin-compatible.yaml")
    head = final[f"{name}-head-0"]
    assert_seed_job_ran(node, namespace, head, "ray")
    # The plugin left the containers named `ray` alone, and routed J-head-svc to the named ports.
    assert head["spec"]["containers"][0]["command"][0] == "rayboot"
    svc = node.get(f"/api/v1/namespaces/{namespace}/services/{name}-head-svc")
    assert {p["targetPort"] for p in svc["spec"]["ports"]} == {"gcs", "dashboard", "client-server"}


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


def gcs_recorder(node, namespace, gcs_address):
    """A pod that records the GCS's node table as it changes (node_states.py --watch), so the
    record outlives the head: the evidence of how a node left."""
    if not node.exists(f"/api/v1/namespaces/{namespace}/configmaps/programs"):
        node.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "programs"},
                     "data": {"node_states.py": (PROGRAMS / "node_states.py").read_text()}}, namespace)
    node.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "gcs-record"},
                 "spec": {"restartPolicy": "Never", "terminationGracePeriodSeconds": 1,
                          "securityContext": RESTRICTED_POD,
                          "containers": [{"name": "record", "image": cluster.IMAGE_NAMES["ray-stock"],
                                          "imagePullPolicy": "Never", "securityContext": RESTRICTED_CONTAINER,
                                          "command": ["python", "/programs/node_states.py", gcs_address, "--watch"],
                                          "volumeMounts": [{"name": "programs", "mountPath": "/programs"}]}],
                          "volumes": [{"name": "programs", "configMap": {"name": "programs"}}]}}, namespace)
    node.wait_pod_phase(namespace, "gcs-record", {"Running"}, 120)


def node_record(node, namespace):
    return [line.split() for line in node.log(namespace, "gcs-record", "record").splitlines() if line.strip()]


def test_volcano_sidecar_only_runs_a_job_and_drains_an_evicted_worker(node, restricted_namespace, volcano):
    """The plugin's own `sh -c "ray start ..."` Ray containers, with rayboot-sidecar beside them:
    the cluster becomes Ready through the sidecars' /readyz, runs the seed job submitted through
    J-head-svc by `rayboot submit` from our image, and a worker evicted through the Eviction API
    is drained by its sidecar (preStop) before it dies: the GCS records it as drained."""
    namespace = restricted_namespace
    docs = [for_this_node(d, namespace) for d in load("volcano/sidecar-only.yaml")]
    apply_rbac_if_used(node, namespace, docs)
    node.create(job_configmap(namespace))
    for d in docs:
        node.create(d)
    name = docs[-1]["metadata"]["name"]
    pods = [f"{name}-head-0", f"{name}-worker-0", f"{name}-worker-1"]

    ready = wait_all_ready(node, namespace, volcano, name, pods)
    gcs_recorder(node, namespace, f"{name}-head-0.{name}:6379")

    node.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "submit"},
                 "spec": {"restartPolicy": "Never", "securityContext": RESTRICTED_POD,
                          "containers": [{"name": "submit", "image": cluster.IMAGE_NAMES["rayboot"],
                                          "imagePullPolicy": "Never", "securityContext": RESTRICTED_CONTAINER,
                                          "command": ["/rayboot", "submit", "--address", f"http://{name}-head-svc:8265",
                                                      "--", "python", "/home/ray/job.py"]}]}}, namespace)
    sub = node.wait_pod_phase(namespace, "submit", {"Succeeded", "Failed"}, 240)
    log = node.log(namespace, "submit")
    assert sub["status"]["phase"] == "Succeeded", log + pod_logs(node, namespace)
    assert SQUARES in log and "nodes: 3" in log, log

    victim = f"{name}-worker-1"
    victim_ip = ready[victim]["status"]["podIP"]
    node.evict(namespace, victim)
    last = node.follow_pod_until_gone(namespace, victim, 120)
    record = node_record(node, namespace)
    mine = [r for r in record if r[0] == victim_ip]
    assert mine and mine[-1][1:3] == ["DEAD", "AUTOSCALER_DRAIN_PREEMPTED"], record
    # The sidecar knew why: the Eviction API's DisruptionTarget, read with its projected token.
    sidecar = [c for c in last["status"].get("initContainerStatuses", []) if c["name"] == "rayboot-sidecar"][0]
    terminated = sidecar["state"].get("terminated") or sidecar.get("lastState", {}).get("terminated")
    assert terminated and "EvictionByEvictionAPI" in terminated.get("message", ""), last["status"]


def _rfc3339(ts):
    """containerd's log timestamp (nanoseconds, Z) as seconds since the epoch."""
    import datetime
    whole, _, frac = ts.rstrip("Z").partition(".")
    t = datetime.datetime.strptime(whole, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    return t.timestamp() + float(f"0.{frac or 0}")


def test_head_readiness_gates_its_dns_name_and_workers_join_within_a_second(node, restricted_namespace, volcano):
    """ray-cluster.yaml: the head's readinessProbe (the sidecar's /readyz: its GCS serves) decides
    when CoreDNS publishes the head's name; the waiting workers find the head within 1 s of it
    becoming Ready. Instants: the head's Ready from a watch, the name's first answer from CoreDNS
    polled every 50 ms, each worker's `is SERVING` line from containerd's log timestamps."""
    namespace = restricted_namespace
    import threading
    name = "ray-cluster"
    fqdn = f"{name}-head-0.{name}.{namespace}.svc.{cluster.CLUSTER_DOMAIN}"
    seen = {"ready": None, "dns": None, "dns_before_ready": []}
    done = threading.Event()

    def on_head(kind, pod, at):
        ready = any(c["type"] == "Ready" and c["status"] == "True" for c in pod.get("status", {}).get("conditions", []))
        if ready and seen["ready"] is None:
            seen["ready"] = at
        return seen["ready"] is not None or done.is_set()

    def poll_dns():
        while not done.is_set() and seen["dns"] is None:
            at = time.time()
            try:
                addrs = cluster.dns_query(fqdn, timeout=0.5)[1]
            except OSError:
                addrs = []
            if addrs:
                seen["dns"] = at
                if seen["ready"] is None:
                    seen["dns_before_ready"].append(at)
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
    assert seen["ready"] and seen["dns"], seen
    assert seen["dns"] >= seen["ready"] - 0.2, f"the head's name answered {seen['ready'] - seen['dns']:.2f} s before it was Ready"
    lags = {}
    for i in range(2):
        lines = node.log(namespace, f"{name}-worker-{i}", "ray", timestamps=True).splitlines()
        serving = [ln for ln in lines if " is SERVING at " in ln]
        assert serving, "\n".join(lines)
        lags[i] = _rfc3339(serving[0].split(" ", 1)[0]) - seen["ready"]
    print(f"head Ready -> DNS {seen['dns'] - seen['ready']:.3f} s; workers' SERVING {lags}")
    assert all(0 <= lag <= 1.0 for lag in lags.values()), (lags, seen)


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
    statuses = pod["status"].get("containerStatuses", []) + pod["status"].get("initContainerStatuses", [])
    (st,) = [c for c in statuses if c["name"] == container]
    return st["state"].get("terminated") or st.get("lastState", {}).get("terminated")


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
    node.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": JOB_CONFIGMAP, "namespace": namespace},
                 "data": {"job.py": BUSY_JOB}})
    for d in docs:
        node.create(d)
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
                  lambda: any(r[0] == victim_ip and r[1] == "ALIVE" for r in node_record(node, namespace)), 60)
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
