"""The node is real before anything of ours runs on it: Ready, scheduling, DNS that publishes
Ready pods only, a pod's TLS to the API server with its projected token, the Eviction API's
DisruptionTarget, an Indexed Job's index and hostnames. Each check reads what the running
components did (the API's objects, CoreDNS's answers, a container's own output)."""
import json
import time

import cluster

DEBIAN = cluster.IMAGE_NAMES["debian"]
PYTHON = cluster.IMAGE_NAMES["ray-stock"]


def pod_manifest(name, image, command, **spec):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": name}},
            "spec": {"containers": [{"name": "main", "image": image, "imagePullPolicy": "Never",
                                     "command": command}], **spec}}


def conditions(pod):
    return {c["type"]: c for c in pod.get("status", {}).get("conditions", [])}


def test_node_is_ready_with_the_pinned_components(node):
    n = node.get(f"/api/v1/nodes/{cluster.NODE_NAME}")
    assert conditions(n)["Ready"]["status"] == "True"
    info = n["status"]["nodeInfo"]
    assert info["kubeletVersion"] == cluster.PINS["K8S_VERSION"]
    assert info["containerRuntimeVersion"].startswith("containerd://")
    assert {"type": "InternalIP", "address": cluster.NODE_IP} in n["status"]["addresses"]
    version = node.get("/version")
    assert version["gitVersion"] == cluster.PINS["K8S_VERSION"]


def test_a_pod_is_scheduled_and_runs_to_success(node, namespace):
    node.create(pod_manifest("hello", DEBIAN, ["printenv", "HOSTNAME"], restartPolicy="Never"), namespace)
    p = node.wait_pod_phase(namespace, "hello", {"Succeeded", "Failed"}, 120)
    assert p["status"]["phase"] == "Succeeded", p["status"]
    assert p["spec"]["nodeName"] == cluster.NODE_NAME  # placed by kube-scheduler, not by us
    assert node.log(namespace, "hello").strip() == "hello"
    # Its address came from the CNI bridge's range.
    assert p["status"]["podIP"].startswith(cluster.POD_CIDR.rsplit(".", 2)[0])


def test_coredns_publishes_a_headless_service_pod_only_once_ready(node, namespace):
    node.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "grp"},
                 "spec": {"clusterIP": "None", "selector": {"app": "member"}, "ports": [{"port": 80}]}}, namespace)
    # Ready 8 s after it starts, by a readiness probe on a file the container makes then.
    pod = pod_manifest("member", DEBIAN, ["sh", "-c", "sleep 8 && touch /tmp/ready && exec sleep 3600"],
                       hostname="member", subdomain="grp", terminationGracePeriodSeconds=1)
    pod["metadata"]["labels"] = {"app": "member"}
    pod["spec"]["containers"][0]["readinessProbe"] = {"exec": {"command": ["cat", "/tmp/ready"]},
                                                      "periodSeconds": 1}
    node.create(pod, namespace)
    name = f"member.grp.{namespace}.svc.{cluster.CLUSTER_DOMAIN}"
    node.wait_pod_phase(namespace, "member", {"Running"}, 120)

    answers_before_ready = []
    ready_at = None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        p = node.pod(namespace, "member")
        ready = conditions(p).get("Ready", {}).get("status") == "True"
        rcode, addrs = cluster.dns_query(name)
        if not ready:
            answers_before_ready.append((rcode, addrs))
        elif addrs:
            ready_at = p["status"]["podIP"]
            break
        time.sleep(0.2)
    assert ready_at, "the pod's name never resolved after it was Ready"
    assert answers_before_ready, "the pod was Ready before the first look"
    # While not Ready: no address, and the name does not exist (NXDOMAIN), as workers see it.
    assert all(addrs == [] for _, addrs in answers_before_ready), answers_before_ready
    assert answers_before_ready[-1][0] == 3
    assert cluster.dns_query(name)[1] == [ready_at]
    assert cluster.dns_query(f"grp.{namespace}.svc.{cluster.CLUSTER_DOMAIN}")[1] == [ready_at]


# Runs in a pod: TLS to kubernetes.default.svc (through CoreDNS and kube-proxy's Service address)
# verified against the projected CA, authenticated by the projected token; prints what the API
# server says the pod is, and the token's claims.
SELF_REVIEW = r"""
import base64, http.client, json, ssl
sa = "/var/run/secrets/kubernetes.io/serviceaccount/"
token = open(sa + "token").read().strip()
ctx = ssl.create_default_context(cafile=sa + "ca.crt")
c = http.client.HTTPSConnection("kubernetes.default.svc", 443, context=ctx, timeout=20)
body = json.dumps({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
c.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", body,
          {"Authorization": "Bearer " + token, "Content-Type": "application/json"})
r = c.getresponse()
review = json.loads(r.read())
claims = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
print(json.dumps({"status": r.status, "user": review.get("status", {}).get("userInfo", {}), "claims": claims,
                  "namespace": open(sa + "namespace").read()}))
"""


def test_a_pod_reaches_the_api_server_over_tls_with_its_projected_token(node, namespace):
    node.create(pod_manifest("whoami", PYTHON, ["python3", "-c", SELF_REVIEW], restartPolicy="Never"), namespace)
    p = node.wait_pod_phase(namespace, "whoami", {"Succeeded", "Failed"}, 180)
    out = node.log(namespace, "whoami")
    assert p["status"]["phase"] == "Succeeded", out
    got = json.loads(out.strip().splitlines()[-1])
    assert got["status"] == 201
    assert got["user"]["username"] == f"system:serviceaccount:{namespace}:default"
    assert got["namespace"] == namespace
    # A bound token: tied to this pod, with an expiry, issued for the API server's audience.
    claims = got["claims"]
    assert claims["kubernetes.io"]["pod"]["name"] == "whoami"
    assert claims["kubernetes.io"]["pod"]["uid"] == p["metadata"]["uid"]
    assert claims["exp"] > claims["iat"]
    assert claims["iss"] == f"https://kubernetes.default.svc.{cluster.CLUSTER_DOMAIN}"
    # The token was projected, not a Secret: the pod's volume says so.
    vols = [v for v in p["spec"]["volumes"] if v["name"].startswith("kube-api-access-")]
    sources = vols[0]["projected"]["sources"]
    assert any("serviceAccountToken" in s for s in sources)
    assert any(s.get("configMap", {}).get("name") == "kube-root-ca.crt" for s in sources)


def test_the_eviction_api_sets_disruption_target_on_a_bound_pod(node, namespace):
    node.create(pod_manifest("victim", DEBIAN, ["sleep", "3600"], terminationGracePeriodSeconds=2), namespace)
    node.wait_pod_phase(namespace, "victim", {"Running"}, 120)
    node.evict(namespace, "victim")

    def disrupted():
        p = node.pod(namespace, "victim")
        c = conditions(p).get("DisruptionTarget")
        return p if c and p["metadata"].get("deletionTimestamp") else None
    p = node.wait("DisruptionTarget on the evicted pod", disrupted, 30)
    c = conditions(p)["DisruptionTarget"]
    assert c["status"] == "True"
    assert c["reason"] == "EvictionByEvictionAPI"
    # The kubelet then ends it within its grace period and the pod goes away.
    node.wait("the evicted pod gone", lambda: not node.exists(f"/api/v1/namespaces/{namespace}/pods/victim"), 60)


def test_an_indexed_job_gives_each_pod_its_index_and_hostname(node, namespace):
    node.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "idx"},
                 "spec": {"clusterIP": "None", "selector": {"job-name": "idx"}, "ports": [{"port": 80}]}}, namespace)
    node.create({
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "idx"},
        "spec": {"completionMode": "Indexed", "completions": 3, "parallelism": 3, "backoffLimit": 0,
                 "template": {"spec": {"subdomain": "idx", "restartPolicy": "Never",
                                       "containers": [{"name": "main", "image": DEBIAN, "imagePullPolicy": "Never",
                                                       "command": ["sh", "-c",
                                                                   "printenv JOB_COMPLETION_INDEX; hostname"]}]}}}},
        namespace)

    def complete():
        j = node.get(f"/apis/batch/v1/namespaces/{namespace}/jobs/idx")
        conds = {c["type"]: c["status"] for c in j.get("status", {}).get("conditions", [])}
        if conds.get("Failed") == "True":
            raise AssertionError(f"the Job failed: {j['status']}")
        return j if conds.get("Complete") == "True" else None
    node.wait("the Indexed Job Complete", complete, 180)
    pods = node.pods(namespace, "job-name=idx")
    seen = {}
    for p in pods:
        index = p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]
        # Since PodIndexLabel (GA in 1.32) the index is a label too, and the env comes from it.
        assert p["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] == index
        env = {e["name"]: e for e in p["spec"]["containers"][0]["env"]}
        assert env["JOB_COMPLETION_INDEX"]["valueFrom"]["fieldRef"]["fieldPath"] == \
            "metadata.labels['batch.kubernetes.io/job-completion-index']"
        printed_index, hostname = node.log(namespace, p["metadata"]["name"]).split()
        seen[printed_index] = hostname
        assert printed_index == index
        assert p["spec"]["hostname"] == f"idx-{index}"
    assert seen == {"0": "idx-0", "1": "idx-1", "2": "idx-2"}
