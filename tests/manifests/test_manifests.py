"""The shipped Kubernetes manifests (k8s/): every Volcano Job, LeaderWorkerSet and JobSet validates
against its project's own CRD schema (and the pod and Job templates inside them against
Kubernetes' own), every pod meets Pod Security "restricted", and the sidecar wiring is consistent:
the probes reach the sidecar's probes port, the preStop drain is `rayboot-sidecar drain` run inside
the pod (never an httpGet: the drain is not on the pod network) from a binary the Ray container
has, and the grace period outlasts the drain deadline; the API token is mounted in the sidecar
alone; every job ships a NetworkPolicy that admits only its own pods. The test node's bridge CNI
enforces no NetworkPolicy, so the policies are checked here, for what they select and admit, and
not by traffic."""
import json
import os
import pathlib
import re
import shutil
import subprocess

import jsonschema
import kubernetes_validate
import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
# Volcano's Job CRD, copied from the shared project files (../shared/schemas/volcano/) so that a
# clean clone validates on its own.
SCHEMAS = pathlib.Path(__file__).resolve().parent / "schemas"
CRD = SCHEMAS / "batch.volcano.sh_jobs.yaml"
# LeaderWorkerSet's and JobSet's CRDs from their source (the files' headers say which release).
PLATFORM_CRDS = {("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet"): "leaderworkerset.x-k8s.io_leaderworkersets.yaml",
                 ("jobset.x-k8s.io/v1alpha2", "JobSet"): "jobset.x-k8s.io_jobsets.yaml"}
MANIFESTS = sorted((REPO / "k8s").rglob("*.yaml"))
SIDECAR_PORT = 8077
# Ray's and rayboot's fixed ports: the GCS, the dashboard and Jobs API, the Ray client, the
# rendezvous, the sidecar's probes, Ray's metrics.
RAY_PORTS = {6379, 8265, 10001, 8079, 8077, 8080}
SA_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
# Where each image has `rayboot-sidecar` (images/Dockerfile puts it on PATH in the Ray image).
DRAIN_CLIENTS = {"registry.example.com/ray:2.60.0-rayboot0.1.0": "rayboot-sidecar"}
# The Kubernetes minor the core kinds are validated against (kubernetes-validate's schemas).
KUBERNETES_VERSION = "1.33.0"
# The placeholders every manifest uses; k8s/kustomization.yaml maps them to a real registry.
RAYBOOT_IMAGES = {"registry.example.com/rayboot:0.1.0", "registry.example.com/ray:2.60.0-rayboot0.1.0",
                  "registry.example.com/redis:7.0-rayboot0.1.0"}
STOCK_RAY = "rayproject/ray:2.60.0"


def documents():
    for path in MANIFESTS:
        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                yield path, doc


def core_documents():
    return [(p, d) for p, d in documents() if "/" not in d.get("apiVersion", "/") or
            d["apiVersion"].split("/")[0] in ("batch", "apps", "rbac.authorization.k8s.io")]


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
    for kind in PLATFORM_CRDS:
        assert platform_documents(kind), f"k8s/ holds no {kind[1]}"


def platform_documents(kind):
    return [(p, d) for p, d in documents() if (d.get("apiVersion"), d.get("kind")) == kind]


def crd_schema(file, version):
    crd = yaml.safe_load((SCHEMAS / file).read_text())
    (v,) = [v for v in crd["spec"]["versions"] if v["name"] == version]
    return v["schema"]["openAPIV3Schema"]


@pytest.mark.parametrize("kind", sorted(PLATFORM_CRDS), ids=lambda k: k[1])
def test_platform_manifests_match_their_crd(kind):
    schema = crd_schema(PLATFORM_CRDS[kind], kind[0].split("/")[1])
    for _path, doc in platform_documents(kind):
        jsonschema.validate(doc, schema)


def test_platform_crds_catch_mistakes():
    """The schemas bite: a size that is not a number, a replicated job without its template."""
    lws = next(d for p, d in platform_documents(("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet")))
    bad = json.loads(json.dumps(lws))
    bad["spec"]["leaderWorkerTemplate"]["size"] = "three"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, crd_schema(PLATFORM_CRDS[("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet")], "v1"))
    (_, js), = platform_documents(("jobset.x-k8s.io/v1alpha2", "JobSet"))
    bad = json.loads(json.dumps(js))
    del bad["spec"]["replicatedJobs"][1]["template"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, crd_schema(PLATFORM_CRDS[("jobset.x-k8s.io/v1alpha2", "JobSet")], "v1alpha2"))


def embedded_core_objects():
    """The pod templates of LeaderWorkerSets and the Job templates of JobSets, as the core objects
    their controllers make of them, for Kubernetes' own (strict) schema: the CRDs' copies of the pod
    schema let an unknown field through."""
    for path, doc in platform_documents(("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet")):
        for which in ("leaderTemplate", "workerTemplate"):
            tmpl = doc["spec"]["leaderWorkerTemplate"].get(which)
            if tmpl:
                yield path, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"{which.lower()}-0"},
                             "spec": tmpl["spec"]}
    for path, doc in platform_documents(("jobset.x-k8s.io/v1alpha2", "JobSet")):
        for rjob in doc["spec"]["replicatedJobs"]:
            yield path, {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": rjob["name"]},
                         "spec": rjob["template"]["spec"]}


@pytest.mark.parametrize("path,doc", list(embedded_core_objects()),
                         ids=lambda v: v.name if isinstance(v, pathlib.Path) else "")
def test_platform_templates_are_valid_kubernetes(path, doc):
    kubernetes_validate.validate(json.loads(json.dumps(doc)), KUBERNETES_VERSION, strict=True)


@pytest.mark.parametrize("path,doc", vcjobs(), ids=lambda v: v.name if isinstance(v, pathlib.Path) else "")
def test_vcjob_matches_volcano_crd(vcjob_schema, path, doc):
    jsonschema.validate(doc, vcjob_schema)


def ray_groups(doc):
    """(name, pod spec) of each kind of pod a manifest makes: a vcjob's tasks, a RayCluster's head
    and worker groups."""
    if doc["kind"] == "RayCluster":
        yield "head", doc["spec"]["headGroupSpec"]["template"]["spec"]
        yield from ((g["groupName"], g["template"]["spec"]) for g in doc["spec"]["workerGroupSpecs"])
    elif doc["kind"] == "LeaderWorkerSet":
        lwt = doc["spec"]["leaderWorkerTemplate"]
        yield from ((name, lwt[key]["spec"]) for name, key in (("leader", "leaderTemplate"), ("worker", "workerTemplate"))
                    if key in lwt)
    else:
        yield from ((t["name"], t["template"]["spec"]) for t in doc["spec"]["tasks"])


def sidecar_manifests():
    return vcjobs() + [(p, d) for p, d in documents() if d.get("kind") in ("RayCluster", "LeaderWorkerSet")]


@pytest.mark.parametrize("path,doc", sidecar_manifests(), ids=lambda v: v.name if isinstance(v, pathlib.Path) else "")
def test_sidecar_wiring(path, doc):
    for name, spec in ray_groups(doc):
        task = {"name": name}
        sidecars = [c for c in spec.get("initContainers", []) if c["name"] == "rayboot-sidecar"]
        assert "rayboot-sidecar" not in [c["name"] for c in spec["containers"]], \
            f"{path.name}/{task['name']}: a regular sidecar container would keep a finished pod alive"
        if not sidecars:
            continue
        sidecar = sidecars[0]
        # A native sidecar: up before the Ray container, still up during its preStop, and not
        # counted when the pod completes (nor in PodFailed, which reads the first container).
        assert sidecar.get("restartPolicy") == "Always", f"{path.name}/{task['name']}"
        env = {e["name"] for e in sidecar.get("env", [])}
        assert {"RAYBOOT_POD_IP", "RAYBOOT_POD_NAME", "RAYBOOT_POD_NAMESPACE"} <= env, path.name
        for c in spec["containers"]:
            for probe in ("readinessProbe", "livenessProbe"):
                if "httpGet" in c.get(probe, {}):
                    assert c[probe]["httpGet"]["port"] == SIDECAR_PORT, f"{path.name}/{c['name']} {probe}"
            pre = c.get("lifecycle", {}).get("preStop", {})
            assert "httpGet" not in pre, f"{path.name}/{c['name']}: the drain is not served on the pod network"
            if "exec" in pre:
                check_drain_hook(path, task, spec, c, pre["exec"]["command"])


def check_drain_hook(path, task, spec, c, command):
    """`rayboot-sidecar drain` from a binary the container has: on the image's PATH, or copied by
    `rayboot install` into an emptyDir the container mounts. No deadline is passed (the sidecar
    derives it from RAYBOOT_GRACE_PERIOD, which must be the pod's grace period)."""
    where = f"{path.name}/{task['name']}/{c['name']}"
    assert command[1:] == ["drain"], f"{where}: preStop {command}"
    (sidecar,) = [s for s in spec["initContainers"] if s["name"] == "rayboot-sidecar"]
    grace = {e["name"]: e.get("value") for e in sidecar["env"]}.get("RAYBOOT_GRACE_PERIOD")
    assert grace == str(spec["terminationGracePeriodSeconds"]), \
        f"{where}: the sidecar's RAYBOOT_GRACE_PERIOD {grace} is not the pod's grace period"
    if command[0] == DRAIN_CLIENTS.get(c["image"]):
        return
    directory, _, name = command[0].rpartition("/")
    assert name == "rayboot-sidecar" and directory, f"{where}: {command[0]} is not in {c['image']}"
    (mount,) = [m for m in c.get("volumeMounts", []) if m["mountPath"] == directory]
    installs = [i for i in spec.get("initContainers", []) if i.get("command", [None])[1:2] == ["install"]
                and any(v["name"] == mount["name"] for v in i.get("volumeMounts", []))]
    assert installs, f"{where}: nothing installs rayboot-sidecar into volume {mount['name']}"
    (volume,) = [v for v in spec["volumes"] if v["name"] == mount["name"]]
    assert "emptyDir" in volume and mount.get("readOnly") is True, f"{where}: {volume}, {mount}"


def test_api_token_only_in_the_sidecar():
    """The Ray container runs user code: no service-account token there, in any manifest. The
    sidecar gets one from a projected volume mounted in it alone, where it reads it (token,
    ca.crt, namespace)."""
    for path, spec in pod_specs():
        where = f"{path.name}"
        assert spec.get("automountServiceAccountToken") is False, f"{where}: the token is mounted everywhere"
        sidecars = [c for c in spec.get("initContainers", []) if c["name"] == "rayboot-sidecar"]
        tokens = {v["name"]: v for v in spec.get("volumes", []) if any(
            "serviceAccountToken" in s for s in v.get("projected", {}).get("sources", []))}
        for c in spec["containers"] + spec.get("initContainers", []):
            mounted = [m for m in c.get("volumeMounts", []) if m["name"] in tokens]
            if c in sidecars:
                (m,) = mounted
                assert m["mountPath"] == SA_PATH and m.get("readOnly") is True, f"{where}: {m}"
                paths = {i.get("path") for s in tokens[m["name"]]["projected"]["sources"]
                         for i in s.get("configMap", s.get("downwardAPI", {})).get("items", [])}
                paths |= {s["serviceAccountToken"]["path"] for s in tokens[m["name"]]["projected"]["sources"]
                          if "serviceAccountToken" in s}
                assert paths == {"token", "ca.crt", "namespace"}, f"{where}: {paths}"
            else:
                assert not mounted, f"{where}/{c['name']} mounts the sidecar's token"


def job_pod_labels(doc):
    """The labels every pod of a job gets from its controller, for NetworkPolicy selectors."""
    if doc["apiVersion"] == "batch.volcano.sh/v1alpha1":
        return {"volcano.sh/job-name": doc["metadata"]["name"]}
    if doc["kind"] == "LeaderWorkerSet":
        return {"leaderworkerset.sigs.k8s.io/name": doc["metadata"]["name"]}
    if doc["kind"] == "JobSet":
        return {"jobset.sigs.k8s.io/jobset-name": doc["metadata"]["name"]}
    if doc["kind"] == "RayCluster":
        return {"ray.io/cluster": doc["metadata"]["name"]}
    return {"batch.kubernetes.io/job-name": doc["metadata"]["name"]}


def matches(selector, labels):
    assert set(selector) <= {"matchLabels"}, selector  # no matchExpressions to reason about here
    return all(labels.get(k) == v for k, v in selector.get("matchLabels", {}).items())


JOB_KINDS = ("Job", "LeaderWorkerSet", "JobSet", "RayCluster")


@pytest.mark.parametrize("path", sorted({p for p, d in documents() if d.get("kind") in JOB_KINDS}),
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_job_ships_a_policy_admitting_only_its_own_pods(path):
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    (job,) = [d for d in docs if d["kind"] in JOB_KINDS]
    mine = job_pod_labels(job)
    policies = [d for d in docs if d["kind"] == "NetworkPolicy"]
    selecting = [p for p in policies if matches(p["spec"]["podSelector"], mine)]
    assert selecting, f"{path.name}: no NetworkPolicy selects the job's pods {mine}"
    # An empty selector would select every pod of the namespace: each must name this job.
    assert all(p["spec"]["podSelector"].get("matchLabels") for p in selecting)
    stranger = {"app": "something-else"}
    other_job = {k: v + "-other" for k, v in mine.items()}
    for p in selecting:
        spec = p["spec"]
        assert spec["policyTypes"] == ["Ingress"]
        for rule in spec["ingress"]:
            # No ports: the rule covers every port of the pod (Ray's ports are many and partly random).
            assert "ports" not in rule, rule
            assert rule["from"], rule  # an empty `from` admits everyone
            for peer in rule["from"]:
                assert set(peer) == {"podSelector"}, peer  # no ipBlock, no namespaceSelector: this namespace
                assert matches(peer["podSelector"], mine)
                assert not matches(peer["podSelector"], stranger) and not matches(peer["podSelector"], other_job)
    # A policy for part of the job (k8s/lws/ray-serve.yaml's leaders) opens only a server's port,
    # named in the pods it selects and none of Ray's, to its clients.
    for p in policies:
        if p in selecting:
            continue
        labels = p["spec"]["podSelector"]["matchLabels"]
        assert {k: labels.get(k) for k in mine} == mine, p  # within this job
        for rule in p["spec"]["ingress"]:
            assert {port["port"] for port in rule["ports"]} == {"http"}, rule
        served = {pt["containerPort"] for _, spec in ray_groups(job) for c in spec["containers"]
                  for pt in c.get("ports", []) if pt.get("name") == "http"}
        assert served and not served & RAY_PORTS, served


@pytest.mark.parametrize("path,doc", core_documents(), ids=lambda v: v.name if isinstance(v, pathlib.Path) else "")
def test_core_kinds_are_valid_kubernetes(path, doc):
    kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)


def pod_specs():
    for path, doc in documents():
        yield from pod_specs_of(path, doc)


def pod_specs_of(path, doc):
    if doc.get("kind") == "Job" and "tasks" in doc.get("spec", {}):
        yield from ((path, t["template"]["spec"]) for t in doc["spec"]["tasks"])
    elif doc.get("kind") == "Job":
        yield path, doc["spec"]["template"]["spec"]
    elif doc.get("kind") == "LeaderWorkerSet":
        lwt = doc["spec"]["leaderWorkerTemplate"]
        yield from ((path, t["spec"]) for t in (lwt.get("leaderTemplate"), lwt["workerTemplate"]) if t)
    elif doc.get("kind") == "JobSet":
        yield from ((path, r["template"]["spec"]["template"]["spec"]) for r in doc["spec"]["replicatedJobs"])
    elif doc.get("kind") == "RayCluster":
        yield from ((path, spec) for _, spec in ray_groups(doc))
    elif doc.get("kind") == "Deployment":
        yield path, doc["spec"]["template"]["spec"]


def test_every_pod_is_restricted():
    """Pod Security "restricted" as the shipped manifests meet it (the real node enforces it too):
    UID 1000, no privilege escalation, every capability dropped, RuntimeDefault seccomp, a read-only
    root with /tmp an emptyDir wherever Ray runs."""
    specs = list(pod_specs())
    assert specs
    for path, spec in specs:
        sc = spec.get("securityContext", {})
        assert sc.get("runAsNonRoot") is True and sc.get("runAsUser") == 1000, path.name
        assert sc.get("seccompProfile") == {"type": "RuntimeDefault"}, path.name
        empty_dirs = {v["name"] for v in spec.get("volumes", []) if "emptyDir" in v}
        for c in spec.get("containers", []) + spec.get("initContainers", []):
            csc = c.get("securityContext", {})
            assert csc.get("allowPrivilegeEscalation") is False, f"{path.name}/{c['name']}"
            assert csc.get("capabilities", {}).get("drop") == ["ALL"], f"{path.name}/{c['name']}"
            assert csc.get("readOnlyRootFilesystem") is True, f"{path.name}/{c['name']}"
            if c["image"].startswith("registry.example.com/ray:") or c["image"] == STOCK_RAY:
                tmp = [m for m in c.get("volumeMounts", []) if m["mountPath"] == "/tmp"]
                assert tmp and tmp[0]["name"] in empty_dirs, f"{path.name}/{c['name']}: /tmp is not an emptyDir"


def test_jobset_pods_mount_their_labels():
    """rayboot knows a JobSet pod by its labels at /etc/podinfo/labels (the downward API)."""
    for _path, doc in platform_documents(("jobset.x-k8s.io/v1alpha2", "JobSet")):
        for rjob in doc["spec"]["replicatedJobs"]:
            spec = rjob["template"]["spec"]["template"]["spec"]
            vols = {v["name"]: v for v in spec["volumes"]}
            for c in spec["containers"]:
                (m,) = [m for m in c["volumeMounts"] if m["mountPath"] == "/etc/podinfo"]
                items = vols[m["name"]]["downwardAPI"]["items"]
                assert {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}} in items, rjob["name"]


def test_images_are_the_documented_placeholders():
    kustomize = yaml.safe_load((REPO / "k8s" / "kustomization.yaml").read_text())
    mapped = {i["name"] for i in kustomize["images"]}
    for path, spec in pod_specs():
        for c in spec.get("containers", []) + spec.get("initContainers", []):
            assert c["image"] in RAYBOOT_IMAGES | {STOCK_RAY}, f"{path.name}/{c['name']}: {c['image']}"
            if c["image"] != STOCK_RAY:
                assert c["image"].rsplit(":", 1)[0] in mapped, f"{c['image']} is not in k8s/kustomization.yaml"
    for resource in kustomize["resources"]:
        assert (REPO / "k8s" / resource).exists(), resource


def test_dockerfile_builds_what_the_tests_build():
    """The builder runs `make all`, the target `make test` builds; no second recipe to drift."""
    dockerfile = (REPO / "Dockerfile").read_text()
    makefile = (REPO / "Makefile").read_text()
    builds = re.findall(r"^RUN .*?\bmake (\w+)", dockerfile, re.M)
    assert builds == ["all"], builds
    test_recipe = makefile.split("\ntest:", 1)[1].split("\n\n", 1)[0]
    assert "$(MAKE) all" in test_recipe
    assert "COPY --from=builder /src/build/bin/rayboot /rayboot" in dockerfile
    assert "COPY --from=builder /src/build/bin/rayboot-sidecar /rayboot-sidecar" in dockerfile
    assert re.search(r"^FROM scratch$", dockerfile, re.M)


def test_rbac_grants_get_pods_only():
    (role,) = [d for _, d in documents() if d["kind"] == "Role" and d["metadata"]["name"] == "rayboot-sidecar"]
    assert role["rules"] == [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]


AUTH_SECRET = "ray-auth-token"


def token_secrets():
    """(path, pod spec, the Secret and key its token comes from, the container given it by KubeRay
    or None) of every pod spec: ray-auth-token's `token`, which the user makes, except in a
    RayCluster with KubeRay's own `authOptions` (mode token, no secretName), where KubeRay makes a
    Secret named after the cluster with the key `auth_token` and puts it in the Ray container's env
    itself."""
    for path, doc in documents():
        auth = doc.get("spec", {}).get("authOptions") if doc.get("kind") == "RayCluster" else None
        if auth:
            assert auth == {"mode": "token"}, f"{path.name}: {auth}"
            for _, spec in ray_groups(doc):
                yield path, spec, (doc["metadata"]["name"], "auth_token"), spec["containers"][0]["name"]
            continue
        for p, spec in pod_specs_of(path, doc):
            yield p, spec, (AUTH_SECRET, "token"), None


def test_ray_token_auth_is_on_everywhere():
    """Ray's token authentication in every pod: each container that runs Ray, rayboot or the
    sidecar (everything but `rayboot install`) has RAY_AUTH_MODE=token and RAY_AUTH_TOKEN_PATH
    naming a file of the Secret ray-auth-token, mounted read-only, readable by the group only
    (0440), the pod's fsGroup giving UID 1000 that group. No manifest holds the Secret itself:
    the user makes it with a random token (the quickstarts' one command). A RayCluster uses
    KubeRay's own `authOptions` instead: KubeRay makes the Secret and gives its Ray container the
    token (that container sets none of it), and the sidecar reads that Secret's file the same way."""
    assert not [p.name for p, d in documents() if d.get("kind") == "Secret"], "a shipped token is everyone's token"
    specs = list(token_secrets())
    assert specs and any(given for *_, given in specs), "no RayCluster with authOptions checked"
    for path, spec, (secret_name, key), given in specs:
        secrets = {v["name"]: v["secret"] for v in spec.get("volumes", []) if "secret" in v}
        for c in spec.get("containers", []) + spec.get("initContainers", []):
            where = f"{path.name}/{c['name']}"
            if c.get("command", [None])[1:2] == ["install"] or c["image"].startswith("registry.example.com/redis:"):
                continue  # `rayboot install`, and Redis (GCS fault tolerance's store: no Ray there)
            env = {e["name"]: e.get("value") for e in c.get("env", [])}
            if c["name"] == given:  # KubeRay's authOptions: it sets both, from its Secret
                assert not {"RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"} & set(env), f"{where}: {env}"
                continue
            assert env.get("RAY_AUTH_MODE") == "token", f"{where}: {env}"
            assert "RAY_AUTH_TOKEN" not in env, f"{where}: the token belongs in a file, not in the pod spec"
            directory, _, file = env.get("RAY_AUTH_TOKEN_PATH", "").rpartition("/")
            (mount,) = [m for m in c.get("volumeMounts", []) if m["mountPath"] == directory]
            assert mount.get("readOnly") is True and "subPath" not in mount, f"{where}: {mount}"
            secret = secrets[mount["name"]]
            assert secret["secretName"] == secret_name, f"{where}: {secret}"
            assert secret["items"] == [{"key": key, "path": file}], f"{where}: {secret}"
            assert secret.get("defaultMode") == 0o440, f"{where}: {oct(secret.get('defaultMode', 0o644))}"
            assert spec["securityContext"].get("fsGroup") == spec["securityContext"]["runAsGroup"], where


def ray_containers():
    """(path, pod spec, container) of every container that runs a Ray node: a Ray image, not the
    submitter (which runs no Ray)."""
    for path, spec in pod_specs():
        for c in spec.get("containers", []):
            if (c["image"].startswith("registry.example.com/ray:") or c["image"] == STOCK_RAY) and \
                    c["name"] != "submitter":
                yield path, spec, c


def test_rayboots_ray_exports_metrics_at_the_port_named_metrics():
    """rayboot starts every node with --metrics-export-port=8080: each container where rayboot runs
    Ray names that port `metrics`, where Prometheus looks. (The Volcano ray plugin's own `ray start`,
    in sidecar-only.yaml, sets no metrics port: Ray picks one, so none is named there.)"""
    checked = 0
    for path, _, c in ray_containers():
        if "rayboot" not in " ".join(c.get("command", [])):
            continue
        ports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
        assert ports.get("metrics") == 8080, f"{path.name}/{c['name']}: {ports}"
        checked += 1
    assert checked >= 12, checked


QUANTITY_UNITS = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}


def quantity_bytes(q):
    """A Kubernetes memory quantity ("4Gi", "512Mi", "1000000") in bytes."""
    m = re.fullmatch(r"(\d+)([KMGT]i?|k)?", str(q))
    assert m, f"not a memory quantity this test reads: {q!r}"
    return int(m.group(1)) * QUANTITY_UNITS.get(m.group(2) or "", 1)


def test_every_ray_container_has_a_memory_limit_and_a_memory_backed_dev_shm():
    """Ray sizes its object store at 30% of the memory it sees and puts it in /dev/shm only if it
    fits there (a container runtime's /dev/shm is 64 MiB): every Ray container has a memory
    request and limit (without one Ray sizes itself from the whole node) and mounts at /dev/shm
    an emptyDir with medium Memory whose sizeLimit holds that 30%."""
    checked = 0
    for path, spec, c in ray_containers():
        where = f"{path.name}/{c['name']}"
        resources = c.get("resources", {})
        assert "memory" in resources.get("requests", {}), f"{where}: no memory request"
        limit = quantity_bytes(resources.get("limits", {}).get("memory", "0"))
        assert limit > 0, f"{where}: no memory limit"
        (shm,) = [m for m in c.get("volumeMounts", []) if m["mountPath"] == "/dev/shm"] or [None]
        assert shm, f"{where}: nothing mounted at /dev/shm"
        volume = {v["name"]: v for v in spec["volumes"]}[shm["name"]]
        empty_dir = volume.get("emptyDir")
        assert empty_dir and empty_dir.get("medium") == "Memory", f"{where}: /dev/shm is not a memory-backed emptyDir"
        assert quantity_bytes(empty_dir.get("sizeLimit", "0")) >= limit * 3 // 10, \
            f"{where}: /dev/shm's sizeLimit is below the object store, 30% of {resources['limits']['memory']}"
        checked += 1
    assert checked >= 14, checked


# GCS fault tolerance (docs/gcs-ft.md): the manifests with an external Redis.
GCS_FT = {"volcano": "metadata.annotations['scheduling.k8s.io/group-name']",
          "indexed-job": "metadata.labels['batch.kubernetes.io/controller-uid']"}


def env_of(container):
    return [(e["name"], e) for e in container.get("env", [])]


def expanded(value, earlier):
    """The names a value's $(NAME) references, each defined above it (Kubernetes expands only those)."""
    names = re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", value)
    assert all(n in earlier for n in names), f"{value}: references a variable not defined above it"
    return names


@pytest.mark.parametrize("platform", sorted(GCS_FT))
def test_gcs_ft_manifests_keep_the_heads_state_per_job_incarnation(platform):
    """The head has Ray's RAY_REDIS_ADDRESS (the Service of k8s/redis/redis.yaml), the password from
    the Secret (REDIS_PASSWORD, and `ray start --redis-password=$(REDIS_PASSWORD)` as KubeRay
    passes it), a RAY_external_storage_namespace built from the job's uid (and Volcano's job version,
    which a RestartJob raises), a label Redis' NetworkPolicy admits; the workers wait 600 s for a
    lost GCS as KubeRay sets it."""
    path = REPO / "k8s" / platform / "ray-cluster-gcs-ft.yaml"
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    (job,) = [d for d in docs if d["kind"] == "Job"]
    if platform == "volcano":
        templates = {t["name"]: t["template"] for t in job["spec"]["tasks"]}
        head, workers = templates["head"], [templates["worker"]]
    else:
        head = job["spec"]["template"]
        workers = [head]
    (ray,) = [c for c in head["spec"]["containers"] if c["name"] == "ray"]
    env = env_of(ray)
    names = [n for n, _ in env]
    values = dict(env)
    assert values["RAY_REDIS_ADDRESS"]["value"] == "ray-redis:6379"
    assert values["REDIS_PASSWORD"]["valueFrom"] == {"secretKeyRef": {"name": "ray-redis", "key": "password"}}
    assert "--redis-password=$(REDIS_PASSWORD)" in values["RAYBOOT_RAY_START_ARGS"]["value"].split()
    fields = {n: e["valueFrom"]["fieldRef"]["fieldPath"] for n, e in env if "fieldRef" in e.get("valueFrom", {})}
    ns = values["RAY_external_storage_namespace"]
    if "value" in ns:
        used = expanded(ns["value"], names[:names.index("RAY_external_storage_namespace")])
        sources = {fields[n] for n in used}
    else:
        sources = {ns["valueFrom"]["fieldRef"]["fieldPath"]}
    assert GCS_FT[platform] in sources, sources
    if platform == "volcano":
        assert "metadata.annotations['volcano.sh/job-version']" in sources, sources
    expanded(values["RAYBOOT_RAY_START_ARGS"]["value"], names[:names.index("RAYBOOT_RAY_START_ARGS")])
    assert head["metadata"]["labels"]["rayboot.io/gcs-ft-head"] == "true"
    for w in workers:
        (wray,) = [c for c in w["spec"]["containers"] if c["name"] == "ray"]
        assert dict(env_of(wray))["RAY_gcs_rpc_server_reconnect_timeout_s"]["value"] == "600"


def test_the_redis_of_gcs_ft_admits_the_heads_and_takes_its_password_from_the_secret():
    docs = [d for d in yaml.safe_load_all((REPO / "k8s" / "redis" / "redis.yaml").read_text()) if d]
    kinds = {d["kind"]: d for d in docs}
    (c,) = kinds["Deployment"]["spec"]["template"]["spec"]["containers"]
    assert c["image"] == "registry.example.com/redis:7.0-rayboot0.1.0"
    args = c["args"]
    assert args[args.index("--requirepass") + 1] == "$(REDIS_PASSWORD)"
    assert dict(env_of(c))["REDIS_PASSWORD"]["valueFrom"] == {"secretKeyRef": {"name": "ray-redis", "key": "password"}}
    assert kinds["Service"]["metadata"]["name"] == "ray-redis" and kinds["Service"]["spec"]["ports"][0]["port"] == 6379
    policy = kinds["NetworkPolicy"]["spec"]
    assert matches(policy["podSelector"], kinds["Deployment"]["spec"]["template"]["metadata"]["labels"])
    (rule,) = policy["ingress"]
    assert [p["podSelector"] for p in rule["from"]] == [{"matchLabels": {"rayboot.io/gcs-ft-head": "true"}}]
    assert (REPO / "images" / "redis" / "Dockerfile").exists()


def commands(spec):
    for c in spec.get("containers", []) + spec.get("initContainers", []):
        yield c, c.get("command", []) + c.get("args", [])


EXAMPLE_JOB = "/home/ray/job.py"
EXAMPLE_SERVER = "/home/ray/serve.py"


@pytest.mark.parametrize("path", sorted({p for p, d in documents() if d.get("kind") in JOB_KINDS}),
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_manifest_brings_the_program_it_runs(path):
    """A manifest runs as shipped: a container that runs /home/ray/job.py mounts it from the
    ConfigMap in the same file (the example program, one text in every manifest); a submitter,
    which hands that command to the head's Jobs API, does not, and its head does. The KubeRay
    RayCluster runs no command of ours: its head alone mounts the program, which the quickstart
    submits to the head's Jobs API."""
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    specs = [spec for p, spec in pod_specs() if p == path]
    runs = [c for spec in specs for c, argv in commands(spec) if EXAMPLE_JOB in argv]
    if not runs and any(d["kind"] == "RayCluster" for d in docs):
        (rc,) = [d for d in docs if d["kind"] == "RayCluster"]
        head = rc["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]
        runs = [head]  # the Jobs API runs the submitted entrypoint there
    if not runs:
        servers = [c for spec in specs for c, argv in commands(spec) if EXAMPLE_SERVER in argv]
        if servers:  # k8s/lws/ray-serve.yaml: its example server, from its own ConfigMap
            (cm,) = [d for d in docs if d["kind"] == "ConfigMap"]
            assert cm["metadata"]["name"] == "example-server" and set(cm["data"]) == {"serve.py"}, path.name
            compile(cm["data"]["serve.py"], f"{path.name}:serve.py", "exec")
            for spec in specs:
                vols = {v["name"]: v for v in spec.get("volumes", [])}
                for c in servers:
                    if c in spec.get("containers", []):
                        (m,) = [m for m in c["volumeMounts"] if m["mountPath"] == EXAMPLE_SERVER]
                        assert vols[m["name"]]["configMap"]["name"] == "example-server" and m["subPath"] == "serve.py"
            return
        assert not [d for d in docs if d["kind"] == "ConfigMap"], path.name
        return
    (cm,) = [d for d in docs if d["kind"] == "ConfigMap"]
    assert cm["metadata"]["name"] == "example-job" and set(cm["data"]) == {"job.py"}, path.name
    program = cm["data"]["job.py"]
    compile(program, f"{path.name}:job.py", "exec")
    (first,) = {d["data"]["job.py"] for _, d in documents() if d.get("kind") == "ConfigMap" and
                d["metadata"]["name"] == "example-job"}
    assert program == first, f"{path.name}: the example program differs from the other manifests'"
    mounted = []
    for spec in specs:
        vols = {v["name"]: v for v in spec.get("volumes", [])}
        for c in spec.get("containers", []):
            for m in c.get("volumeMounts", []):
                if m["mountPath"] == EXAMPLE_JOB:
                    assert vols[m["name"]]["configMap"]["name"] == "example-job" and m["subPath"] == "job.py"
                    mounted.append(c["name"])
    submitters = [c for c in runs if c["name"] == "submitter"]
    if submitters:  # the Jobs API runs the entrypoint on the head: the head has the file
        assert "submitter" not in mounted and "ray" in mounted, (path.name, mounted)
    else:
        for c in runs:
            assert any(m["mountPath"] == EXAMPLE_JOB for m in c.get("volumeMounts", [])), f"{path.name}/{c['name']}"


def test_no_manifest_fixes_a_namespace():
    """Every object lands in the namespace it is applied in (`kubectl apply -n`, or the
    kustomization's `namespace:`); only the RoleBinding's subject must name one, and
    k8s/kustomization.yaml rewrites it (test_kustomization_covers_every_manifest)."""
    for path, doc in documents():
        if doc.get("kind") == "Kustomization":
            continue
        assert "namespace" not in doc["metadata"], f"{path.name}: {doc['kind']} {doc['metadata']['name']}"


KUBECTL = pathlib.Path(os.environ.get("RAYBOOT_NODE_BUILD", REPO / "build" / "node")) / "bin" / "kubectl"
# One way of use each: the file a user lists under the kustomization's resources (redis.yaml
# comes with the GCS fault tolerance ones).
WAYS_OF_USE = sorted({p for p, d in documents() if d.get("kind") in JOB_KINDS})
TEST_REGISTRY = "registry.test:5000/team"


def kustomize(tmp_path, resources, namespace):
    """k8s/kustomization.yaml as a user adapts it: RESOURCES, NAMESPACE and their registry, rendered
    by kubectl's kustomize (the one `make node` builds from the Go module proxy)."""
    if not KUBECTL.exists():
        pytest.fail(f"{KUBECTL} is missing: run `make node` (tests/node/build.sh builds kubectl) first")
    root = tmp_path / "k8s"
    shutil.copytree(REPO / "k8s", root)
    k = yaml.safe_load((root / "kustomization.yaml").read_text())
    k["resources"], k["namespace"] = resources, namespace
    for image in k["images"]:
        image["newName"] = image["newName"].replace("registry.example.com", TEST_REGISTRY)
    (root / "kustomization.yaml").write_text(yaml.safe_dump(k))
    out = subprocess.run([KUBECTL, "kustomize", root], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return [d for d in yaml.safe_load_all(out.stdout) if d]


def images_in(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("containers", "initContainers"):
                yield from (c["image"] for c in value)
            else:
                yield from images_in(value)
    elif isinstance(node, list):
        for value in node:
            yield from images_in(value)


@pytest.mark.node  # kubectl comes with the node's build
def test_the_shipped_kustomization_renders(tmp_path):
    shipped = yaml.safe_load((REPO / "k8s" / "kustomization.yaml").read_text())
    docs = kustomize(tmp_path, shipped["resources"], shipped["namespace"])
    assert {d["kind"] for d in docs} >= {"Job", "ServiceAccount", "Role", "RoleBinding", "ConfigMap", "NetworkPolicy"}


@pytest.mark.node  # kubectl comes with the node's build
@pytest.mark.parametrize("path", WAYS_OF_USE, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_kustomization_covers_every_manifest(tmp_path, path):
    """What k8s/kustomization.yaml claims, for each way of use: listed under its resources (with
    the sidecar's RBAC), every image comes from the user's registry and every object, the
    RoleBinding's subject included, lands in the user's namespace."""
    resources = [str(path.relative_to(REPO / "k8s")), "rbac/sidecar.yaml"]
    docs = kustomize(tmp_path, resources, "team-a")
    images = list(images_in(docs))
    assert images, path.name
    for image in images:
        assert image.startswith(TEST_REGISTRY + "/") or image == STOCK_RAY, f"{path.name}: {image}"
    for d in docs:
        assert d["metadata"]["namespace"] == "team-a", f"{d['kind']} {d['metadata']['name']}"
        for s in d.get("subjects", []):
            assert s["namespace"] == "team-a", s
