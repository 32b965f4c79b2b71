"""Ray's TLS on the real node: k8s/volcano/ray-cluster-tls.yaml and k8s/indexed-job/ray-cluster-tls.yaml
as shipped (with test_shipped_manifests.py's documented change), after the two Secrets
docs/tls.md has the user make: the token's, and the CA's (a fresh P-256 CA made here with openssl,
argv only). Every pod's certificate is made at start by rayboot from that CA into its memory-backed
volume; the job is tests/e2e/programs/tls_tasks.py in the manifest's example-job ConfigMap, as a
user puts theirs: a task pinned to each of the three nodes (Ray's raylets and workers talk TLS
across pods), a cleartext call to the GCS refused, a TLS one with the pod's own certificate
answered. Each Job runs to its result, and
every Ray container (and the Volcano sidecars) logged that its GCS calls went over TLS."""
import pathlib

from test_shipped_manifests import (
    AUTH_SOURCE,
    apply,
    apply_rbac_if_used,
    for_this_node,
    load,
    pod_logs,
    run_vcjob_to_end,
    wait_job_complete,
    with_program,
)

REPO = pathlib.Path(__file__).resolve().parents[2]
TLS_JOB = REPO / "tests" / "e2e" / "programs" / "tls_tasks.py"


def pod_ips(node, namespace, selector):
    return sorted(p["status"].get("podIP", "") for p in node.pods(namespace, selector))


def assert_tls_job_ran(node, namespace, head_pod, ips):
    log = node.log(namespace, head_pod, "ray")
    logs = pod_logs(node, namespace)
    assert f"tasks ran on: {' '.join(ips)}" in log, logs
    assert "cleartext GCS call: refused" in log and "TLS GCS call: answered 0801" in log, logs
    assert AUTH_SOURCE in log, log


def assert_every_pod_spoke_tls(node, namespace, selector):
    for p in node.pods(namespace, selector):
        name = p["metadata"]["name"]
        log = node.log(namespace, name, "ray")
        assert "Ray TLS: this pod's certificate for" in log and "in /run/ray-tls/tls.crt" in log, log
        assert "Ray TLS: every GCS call over mutual TLS" in log, log
        for c in p["spec"].get("initContainers", []):
            if c["name"] == "rayboot-sidecar":
                side = node.log(namespace, name, c["name"])
                assert "made from RAYBOOT_TLS_CA_KEY=/var/run/secrets/ray-tls/ca.key" in side, side


def test_tls_indexed_job_runs_to_completion(node, ca_secret):
    namespace = ca_secret
    docs = with_program([for_this_node(d, namespace) for d in load("indexed-job/ray-cluster-tls.yaml")],
                        TLS_JOB.read_text())
    apply(node, namespace, docs)
    selector = "job-name=ray-indexed-tls"
    ips = []

    def record_ips():
        if len(ips) < 3:
            ips[:] = [ip for ip in pod_ips(node, namespace, selector) if ip]
    wait_job_complete(node, namespace, "ray-indexed-tls", 420, record_ips)
    pods = {p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]: p
            for p in node.pods(namespace, selector)}
    assert pods["0"]["status"]["phase"] == "Succeeded", pod_logs(node, namespace)
    assert_tls_job_ran(node, namespace, pods["0"]["metadata"]["name"], sorted(ips))
    assert_every_pod_spoke_tls(node, namespace, selector)


def test_tls_volcano_ray_cluster_runs_to_completion(node, ca_secret, volcano):
    namespace = ca_secret
    docs = with_program([for_this_node(d, namespace) for d in load("volcano/ray-cluster-tls.yaml")],
                        TLS_JOB.read_text())
    apply_rbac_if_used(node, namespace, docs)
    apply(node, namespace, docs)
    name, final = run_vcjob_to_end(node, namespace, volcano, "ray-cluster-tls")
    ips = sorted(p["status"]["podIP"] for p in final.values() if p["status"].get("podIP"))
    assert final[f"{name}-head-0"]["status"]["phase"] == "Succeeded", pod_logs(node, namespace)
    assert_tls_job_ran(node, namespace, f"{name}-head-0", ips)
    assert_every_pod_spoke_tls(node, namespace, f"volcano.sh/job-name={name}")
