"""The shipped Kubernetes manifests (k8s/): every Volcano Job validates against Volcano's own CRD
schema, and the sidecar wiring is consistent: the preStop drain and the probes
reach the sidecar's port, and the grace period outlasts the drain deadline."""
import pathlib
import re

import jsonschema
import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
# Volcano's Job CRD, copied from the shared project files (../shared/schemas/volcano/) so that a
# clean clone validates on its own.
CRD = pathlib.Path(__file__).resolve().parent / "schemas" / "batch.volcano.sh_jobs.yaml"
MANIFESTS = sorted((REPO / "k8s").rglob("*.yaml"))
SIDECAR_PORT = 8077


def documents():
    for path in MANIFESTS:
        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                yield path, doc


def vcjobs():
    return [(p, d) for p, d in documents() if d.get("apiVersion") == "batch.volcano.sh/v1alpha1" and d["kind"] == "Job"]


@pytest.fixture(scope="module")
def vcjob_schema():
    if not CRD.exists():
        pytest.fail(f"{CRD} is missing")
    crd = yaml.safe_load(CRD.read_text())
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1"]
    return version["schema"]["openAPIV3Schema"]


def test_there_are_manifests():
    assert vcjobs(), "k8s/ holds no Volcano Job"


@pytest.mark.parametrize("path,doc", vcjobs(), ids=lambda v: v.name if isinstance(v, pathlib.Path) else "")
def test_vcjob_matches_volcano_crd(vcjob_schema, path, doc):
    jsonschema.validate(doc, vcjob_schema)


@pytest.mark.parametrize("path,doc", vcjobs(), ids=lambda v: v.name if isinstance(v, pathlib.Path) else "")
def test_sidecar_wiring(path, doc):
    for task in doc["spec"]["tasks"]:
        spec = task["template"]["spec"]
        names = [c["name"] for c in spec["containers"]]
        if "rayboot-sidecar" not in names:
            continue
        # Volcano's PodFailed reads the first container's exit code: Ray's, not the sidecar's.
        assert names[0] != "rayboot-sidecar", f"{path.name}/{task['name']}: the Ray container must come first"
        sidecar = spec["containers"][names.index("rayboot-sidecar")]
        env = {e["name"] for e in sidecar.get("env", [])}
        assert {"RAYBOOT_POD_IP", "RAYBOOT_POD_NAME", "RAYBOOT_POD_NAMESPACE"} <= env, path.name
        for c in spec["containers"]:
            for probe in ("readinessProbe", "livenessProbe"):
                if "httpGet" in c.get(probe, {}):
                    assert c[probe]["httpGet"]["port"] == SIDECAR_PORT, f"{path.name}/{c['name']} {probe}"
            pre = c.get("lifecycle", {}).get("preStop", {}).get("httpGet")
            if pre:
                m = re.fullmatch(r"/drain\?deadline=(\d+)", pre["path"])
                assert m and pre["port"] == SIDECAR_PORT, f"{path.name}/{c['name']}: preStop {pre}"
                assert spec["terminationGracePeriodSeconds"] > int(m.group(1)), \
                    f"{path.name}/{task['name']}: the grace period must outlast the drain deadline"


def test_rbac_grants_get_pods_only():
    (role,) = [d for _, d in documents() if d["kind"] == "Role" and d["metadata"]["name"] == "rayboot-sidecar"]
    assert role["rules"] == [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]
