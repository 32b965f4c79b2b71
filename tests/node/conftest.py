"""The real-node tier: one node (tests/node/cluster.py) for the whole session, brought up before
the first test that asks for it and taken down after the last, then checked to have left
nothing on the machine. Each test works in a namespace of its own, deleted afterwards.

RAYBOOT_NODE_KEEP=1 leaves the node running after the session (to look at it by hand:
scripts/k8s-node.sh env), and reuses a node that is already up."""
import os
import pathlib
import re
import subprocess
import sys
import uuid

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import cluster  # noqa: E402
from kube import running  # noqa: E402


@pytest.fixture(scope="session")
def node():
    keep = os.environ.get("RAYBOOT_NODE_KEEP") == "1"
    if os.geteuid() != 0:
        pytest.fail("the real-node tier needs root (make test runs it as root)")
    missing = [p for p in [cluster.BIN / "kubelet", cluster.BIN / "coredns"] +
               [cluster.IMAGES / f"{k}.tar" for k in cluster.IMAGE_NAMES] if not p.exists()]
    if missing:
        pytest.fail(f"{missing[0]} is missing: run `make node` (tests/node/build.sh and images.sh) first")
    if not (keep and cluster.status() == 0):
        try:
            cluster.up(tie_to_caller=not keep)
        except Exception as e:
            cluster.down(quiet=True)
            pytest.fail(f"the node did not come up: {e}")
    try:
        yield cluster.admin()
    finally:
        if not keep:
            cluster.down()
            left = cluster.leftovers()
            assert not left, f"the node left {left} behind"


@pytest.fixture
def namespace(node, request):
    """A fresh namespace for one test, with its `default` ServiceAccount; deleted afterwards
    (pods and all), so one test's leftovers never meet the next."""
    base = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower())[:40].strip("-")
    name = f"t-{base}-{uuid.uuid4().hex[:5]}"
    node.create_namespace(name)
    try:
        yield name
    finally:
        node.delete_namespace(name, timeout=180)


@pytest.fixture(scope="session")
def volcano_crd(node):
    """Volcano's Job CRD (shared/schemas/volcano, kept in tests/manifests/schemas), installed so
    that the API server validates every vcjob against Volcano's own schema."""
    return install_crd(node, "batch.volcano.sh_jobs.yaml")


@pytest.fixture
def volcano(node, volcano_crd, namespace):
    """The test Volcano job controller (tests/node/volcano.py) for this test's namespace."""
    import volcano as vc
    with running(vc.Controller(node, namespace)) as controller:
        yield controller


RESTRICTED = {"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/warn": "restricted"}


@pytest.fixture
def restricted_namespace(node, namespace):
    """The test's namespace under Pod Security "restricted", enforced by the API server's
    PodSecurity admission: a pod that is not restricted is refused at creation."""
    from kube import ApiError
    node.patch(f"/api/v1/namespaces/{namespace}", {"metadata": {"labels": RESTRICTED}})
    # It bites: a pod with no security context is refused.
    try:
        node.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "unrestricted"},
                     "spec": {"containers": [{"name": "c", "image": cluster.IMAGE_NAMES["debian"]}]}}, namespace)
    except ApiError as e:
        assert e.code == 403 and "restricted" in str(e), e
    else:
        raise AssertionError(f"namespace {namespace} admitted a pod that is not restricted")
    return namespace


@pytest.fixture(scope="session")
def kuberay(node):
    """The real KubeRay operator (tests/node/kuberay.py), started once for the session."""
    import kuberay as kr
    kr.start_operator(node)
    return kr


SCHEMAS = HERE.parent / "manifests" / "schemas"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def install_crd(node, file):
    """The CRD in tests/manifests/schemas/FILE installed and Established."""
    import yaml
    crd = yaml.safe_load((SCHEMAS / file).read_text())
    if not node.exists(f"{CRDS}/{crd['metadata']['name']}"):
        node.post(CRDS, crd)

    def established():
        got = node.get(f"{CRDS}/{crd['metadata']['name']}")
        return any(c["type"] == "Established" and c["status"] == "True"
                   for c in got.get("status", {}).get("conditions") or [])
    node.wait(f"CRD {crd['metadata']['name']} established", established, 60)
    return crd


@pytest.fixture(scope="session")
def lws(node):
    """The real LeaderWorkerSet controller with its webhooks live (tests/node/controllers.py),
    started once for the session."""
    import controllers
    controllers.start(node, controllers.LWS)
    return controllers.LWS


@pytest.fixture(scope="session")
def jobset(node):
    """The real JobSet controller with its webhooks live (tests/node/controllers.py), started once
    for the session."""
    import controllers
    controllers.start(node, controllers.JOBSET)
    return controllers.JOBSET


@pytest.fixture(scope="session")
def kueue(node, lws, jobset, kuberay):
    """The real Kueue controller with its webhooks (admission and CRD conversion) live
    (tests/node/controllers.py), started once for the session after the LeaderWorkerSet and JobSet
    controllers and the KubeRay operator, whose CRDs its integrations need."""
    import controllers
    controllers.start(node, controllers.KUEUE)
    return controllers.KUEUE


@pytest.fixture
def ca_secret(node, restricted_namespace, tmp_path):
    """The CA's Secret, made as docs/tls.md says, for the `-tls` manifests (test_tls_on_node.py,
    test_network_policy.py)."""
    key, crt = tmp_path / "ca.key", tmp_path / "ca.crt"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-days", "2", "-keyout", key, "-out", crt, "-subj", "/CN=ray-tls-ca",
                    "-addext", "basicConstraints=critical,CA:TRUE",
                    "-addext", "keyUsage=critical,keyCertSign,cRLSign"], check=True, capture_output=True)
    node.create({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                 "metadata": {"name": "ray-tls-ca", "namespace": restricted_namespace},
                 "stringData": {"ca.crt": crt.read_text(), "ca.key": key.read_text()}})
    return restricted_namespace
