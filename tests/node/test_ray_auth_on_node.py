"""Ray's token authentication, as every shipped manifest turns it on, seen from a stranger on the
real node: k8s/indexed-job/ray-cluster.yaml runs (its Secret made with a random token, as the
quickstarts make it) and a pod outside the job (none of the job's labels, no token; our stand-in
Ray image, for Ray's Python) calls the head's GCS and its dashboard's Jobs API.

The job ships a NetworkPolicy that admits only its own pods, but this node's bridge CNI enforces
no NetworkPolicy: the stranger reaches every port. What stops it here is the token alone, and the
test shows both: the GCS and the dashboard answer the stranger (a gRPC status, an HTTP status:
the ports are reached) and refuse it. A pod holding the token then looks: the stranger's KV write
(rayboot's own `finished` key, which would make every worker stop Ray and exit) did not land,
and its job was never submitted."""
import json
import time

import cluster
from test_shipped_manifests import (
    AUTH_ENV,
    AUTH_SOURCE,
    RESTRICTED_CONTAINER,
    RESTRICTED_POD,
    apply,
    for_this_node,
    load,
    pod_logs,
    with_program,
)

HEAD = "ray-indexed-0.ray-indexed"
# The head's command: hold the cluster up while the test runs (deleted with the namespace).
HOLD = "import time\nprint('holding the cluster', flush=True)\ntime.sleep(900)\n"
SUBMISSION_ID = "stranger-was-here"

# Run twice: as the stranger (no token, then a wrong one) and as a pod holding the token.
# argv: MODE HEAD; prints one JSON line of what each call got.
CALLS = """
import json, os, sys, time, urllib.error, urllib.request
import grpc
from ray.core.generated import gcs_service_pb2 as pb

mode, head = sys.argv[1], sys.argv[2]
token = os.environ.get("RAY_AUTH_TOKEN", "")
channel = grpc.insecure_channel(head + ":6379")
put = channel.unary_unary("/ray.rpc.InternalKVGcsService/InternalKVPut",
                          request_serializer=pb.InternalKVPutRequest.SerializeToString,
                          response_deserializer=pb.InternalKVPutReply.FromString)
get = channel.unary_unary("/ray.rpc.InternalKVGcsService/InternalKVGet",
                          request_serializer=pb.InternalKVGetRequest.SerializeToString,
                          response_deserializer=pb.InternalKVGetReply.FromString)


def rpc(call, request, bearer):
    md = [("authorization", "Bearer " + bearer)] if bearer else None
    try:
        reply = call(request, timeout=10, metadata=md)
    except grpc.RpcError as e:
        return [e.code().name]
    return ["OK", reply.status.code, reply.value.decode() if hasattr(reply, "value") else None]


def http(method, path, bearer, body=None):
    req = urllib.request.Request(f"http://{head}:8265{path}", method=method,
                                 data=json.dumps(body).encode() if body else None,
                                 headers={"Content-Type": "application/json",
                                          **({"Authorization": "Bearer " + bearer} if bearer else {})})
    for _ in range(60):  # the dashboard may still be starting: wait for an answer, not a refusal
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return [r.status, json.loads(r.read() or b"null")]
        except urllib.error.HTTPError as e:
            return [e.code, None]
        except urllib.error.URLError:
            time.sleep(1)
    return ["no answer", None]


finished = pb.InternalKVPutRequest(namespace=b"rayboot", key=b"finished", value=b"0", overwrite=True)
job = {"entrypoint": "echo stranger-was-here", "submission_id": "stranger-was-here"}
seen = {}
if mode == "stranger":
    for who, bearer in (("none", ""), ("wrong", "0" * 64)):
        seen[f"put {who}"] = rpc(put, finished, bearer)
        seen[f"get {who}"] = rpc(get, pb.InternalKVGetRequest(namespace=b"rayboot", key=b"finished"), bearer)
        seen[f"submit {who}"] = http("POST", "/api/jobs/", bearer, job)[0]
        seen[f"list {who}"] = http("GET", "/api/jobs/", bearer)[0]
else:
    seen["finished"] = rpc(get, pb.InternalKVGetRequest(namespace=b"rayboot", key=b"finished"), token)
    seen["own put"] = rpc(put, pb.InternalKVPutRequest(namespace=b"auth-test", key=b"k", value=b"v"), token)
    seen["own get"] = rpc(get, pb.InternalKVGetRequest(namespace=b"auth-test", key=b"k"), token)
    status, jobs = http("GET", "/api/jobs/", token)
    seen["list"] = [status, [[j.get("submission_id"), j.get("entrypoint")] for j in jobs or []]]
    seen["job"] = http("GET", "/api/jobs/stranger-was-here", token)[0]
print(json.dumps(seen))
"""


def run_calls(node, namespace, name, mode, env=None):
    node.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": name}},
                 "spec": {"restartPolicy": "Never", "securityContext": RESTRICTED_POD,
                          "automountServiceAccountToken": False,
                          "containers": [{"name": "calls", "image": cluster.IMAGE_NAMES["ray-stock"],
                                          "imagePullPolicy": "Never", "securityContext": RESTRICTED_CONTAINER,
                                          "command": ["python", "-c", CALLS, mode, HEAD], "env": env or []}]}},
                namespace)
    pod = node.wait_pod_phase(namespace, name, {"Succeeded", "Failed"}, 120)
    out = node.log(namespace, name)
    assert pod["status"]["phase"] == "Succeeded", out
    return json.loads(out.strip().splitlines()[-1])


def test_a_stranger_is_refused_by_the_gcs_and_the_jobs_api(node, restricted_namespace):
    namespace = restricted_namespace
    t0 = time.monotonic()
    docs = [for_this_node(d, namespace) for d in load("indexed-job/ray-cluster.yaml")]
    apply(node, namespace, with_program(docs, HOLD))

    def head_holding():
        for p in node.pods(namespace, "job-name=ray-indexed"):
            if p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] == "0" and \
                    p["status"].get("phase") == "Running":
                log = node.log(namespace, p["metadata"]["name"], "ray")
                if "holding the cluster" in log:
                    return p["metadata"]["name"], log
        return None
    try:
        _, log = node.wait("the head's command running", head_holding, 300, interval=1)
    except TimeoutError as e:
        raise AssertionError(f"{e}\n{pod_logs(node, namespace)}") from None
    assert AUTH_SOURCE in log, log
    t_up = time.monotonic() - t0

    # The stranger: not one of the job's pods (the NetworkPolicy selects none of its labels), no
    # token, and no NetworkPolicy enforced here: it reaches 6379 and 8265, and is answered there.
    seen = run_calls(node, namespace, "stranger", "stranger")
    for who in ("none", "wrong"):
        assert seen[f"put {who}"] == ["UNAUTHENTICATED"], seen
        assert seen[f"get {who}"] == ["UNAUTHENTICATED"], seen
        assert seen[f"submit {who}"] in (401, 403), seen
        assert seen[f"list {who}"] in (401, 403), seen

    # With the token: nothing of the stranger's landed. The token's own write and read work (the
    # look can see a key), rayboot's `finished` key is not there (NotFound, 17), the Jobs API
    # answers and holds no job of the stranger's.
    held = run_calls(node, namespace, "holder", "holder", AUTH_ENV)
    assert held["own put"][:2] == ["OK", 0] and held["own get"] == ["OK", 0, "v"], held
    assert held["finished"][0] == "OK" and held["finished"][1] != 0 and held["finished"][2] == "", held
    status, jobs = held["list"]
    assert status == 200 and not [j for j in jobs if SUBMISSION_ID in json.dumps(j)], held
    assert held["job"] == 404, held

    # The workers are still up: the stranger's `finished` did not make them leave.
    for p in node.pods(namespace, "job-name=ray-indexed"):
        assert p["status"]["phase"] == "Running", pod_logs(node, namespace)
    print(f"cluster up {t_up:.0f} s after creation; stranger refused: {seen}; with the token: {held}; "
          f"{time.monotonic() - t0:.0f} s in all")
