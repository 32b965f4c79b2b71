"""What the real-node benchmarks share: the node (tests/node/cluster.py) and the KubeRay operator,
a namespace per measurement torn down fast, the GCS recorder pod (gcs_poll.py), pod logs with
the runtime's stamps, and the statistics. Figures are printed, not judged; the one thing checked
is that an interval can be true: a negative or impossible one fails the run (MeasurementError)."""
import datetime
import os
import pathlib
import statistics
import sys
import threading
import time
import uuid

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO / "tests" / "node"))
sys.path.insert(0, str(REPO / "bench"))
import cluster  # noqa: E402
from common import MeasurementError, log  # noqa: E402,F401
from kube import ApiError  # noqa: E402
from test_shipped_manifests import AUTH_ENV, create_auth_secret  # noqa: E402,F401

RAY_IMAGE = cluster.IMAGE_NAMES["ray"]  # every contender's Ray containers run this one image
# The same requests and limits for every contender's Ray containers: five pods fit a 2-core node.
RAY_RESOURCES = {"requests": {"cpu": "300m", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "2Gi"}}
WORKERS = 4


def stats(values):
    """n, median and maximum (few rounds: no p99), rounded to ms or kB."""
    values = [v for v in values if v is not None]
    if not values:
        return {"n": 0, "median": None, "max": None}
    return {"n": len(values), "median": round(statistics.median(values), 3), "max": round(max(values), 3)}


def require(ok, what):
    if not ok:
        raise MeasurementError(what)


def attempt(fn, what, tries=2):
    """fn(), once more if the node was too slow to set a round up (a TimeoutError: no figure was
    taken). A MeasurementError is never retried: it fails the run."""
    for i in range(tries):
        try:
            return fn()
        except TimeoutError as e:
            if i == tries - 1:
                raise
            log(f"   {what}: {e}; once more")


def interval(start_ns, end_ns, what):
    """end - start in seconds; a negative interval cannot be true."""
    if start_ns is None or end_ns is None:
        raise MeasurementError(f"{what}: an instant is missing ({start_ns}, {end_ns})")
    if end_ns < start_ns:
        raise MeasurementError(f"{what}: ends {(start_ns - end_ns) / 1e6:.1f} ms before it begins")
    return (end_ns - start_ns) / 1e9


class Namespace:
    """A fresh namespace for one measurement; close() deletes its owners' objects, then every pod
    at once (grace 0: the next round must not share the cores with this one's shutdown), then
    the namespace, and waits until it is gone."""

    def __init__(self, kube, what):
        self.kube = kube
        self.name = f"b-{what.replace('_', '-')}-{uuid.uuid4().hex[:5]}"  # a DNS label
        kube.create_namespace(self.name)

    def close(self, owners=()):
        for path in owners:
            try:
                self.kube.delete(path, {"propagationPolicy": "Background"})
            except ApiError as e:
                if e.code != 404:
                    raise
        self.kube.delete(f"/api/v1/namespaces/{self.name}/pods", {"gracePeriodSeconds": 0})
        self.kube.delete_namespace(self.name, timeout=240)


def configmap(namespace, name, data):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}, "data": data}


HOLD_JOB = "import time\nprint('the job holds the cluster', flush=True)\ntime.sleep(86400)\n"


def start_recorder(kube, namespace, address, auth=True):
    """The recorder pod (gcs_poll.py) polling ADDRESS; returns once it polls."""
    kube.create(configmap(namespace, "bench-programs", {"gcs_poll.py": (HERE / "gcs_poll.py").read_text()}))
    kube.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "gcs-poll", "namespace": namespace},
                 "spec": {"restartPolicy": "Never", "terminationGracePeriodSeconds": 0,
                          "containers": [{"name": "poll", "image": RAY_IMAGE, "imagePullPolicy": "IfNotPresent",
                                          "command": ["python", "/programs/gcs_poll.py", address],
                                          "env": AUTH_ENV if auth else [],
                                          "volumeMounts": [{"name": "programs", "mountPath": "/programs"}]}],
                          "volumes": [{"name": "programs", "configMap": {"name": "bench-programs"}}]}})
    try:
        kube.wait("the GCS recorder polling", lambda: " start " in recorder_log(kube, namespace), 240, interval=0.5)
    except TimeoutError as e:
        raise TimeoutError(f"{e}; the pod: {kube.pod(namespace, 'gcs-poll').get('status')}") from None


def recorder_log(kube, namespace):
    try:
        return kube.log(namespace, "gcs-poll", "poll")
    except ApiError:
        return ""


def recorder_events(kube, namespace):
    """[(mono_ns, real_ns, kind, fields)] from the recorder's log."""
    out = []
    for line in recorder_log(kube, namespace).splitlines():
        f = line.split()
        if len(f) >= 3 and f[0].isdigit():
            out.append((int(f[0]), int(f[1]), f[2], f[3:]))
    return out


def stamped_log(kube, namespace, pod, container):
    """[(real_ns, text)]: each line of the container's log with the instant containerd wrote it."""
    out = []
    for line in kube.log(namespace, pod, container, timestamps=True).splitlines():
        stamp, _, text = line.partition(" ")
        out.append((rfc3339_ns(stamp), text))
    return out


def keep_logs(kube, namespace, tag, t0_real_ns=None, extra=None):
    """With BENCH_LOG_DIR set, writes every container's log in NAMESPACE (stamped by containerd, and
    the previous one of a restarted container) to BENCH_LOG_DIR/TAG-POD-CONTAINER.log, for
    finding where a round's time went; T0_REAL_NS (the round's instant) heads each file."""
    out = os.environ.get("BENCH_LOG_DIR")
    if not out:
        return
    pathlib.Path(out).mkdir(parents=True, exist_ok=True)
    head = f"# t0 {t0_real_ns}\n" if t0_real_ns else ""
    for what, text in (extra or {}).items():  # logs read earlier, of pods gone since
        (pathlib.Path(out) / f"{tag}-{what}.log").write_text(head + text)
    for pod in kube.pods(namespace, None):
        name = pod["metadata"]["name"]
        for c in pod["spec"].get("containers", []):
            for previous in (False, True):
                try:
                    text = kube.log(namespace, name, c["name"], previous=previous, timestamps=True)
                except ApiError:
                    continue
                suffix = "-previous" if previous else ""
                (pathlib.Path(out) / f"{tag}-{name}-{c['name']}{suffix}.log").write_text(head + text)
        _keep_ray_logs(pod, pathlib.Path(out) / f"{tag}-{name}-ray")


def _keep_ray_logs(pod, dest):
    """Ray's own logs (raylet, GCS, `ray start`'s) of every session the pod's /tmp emptyDir holds,
    read from the kubelet's directory on this machine: no exec into the pod needed."""
    import shutil
    vols = cluster.KUBELET_ROOT / "pods" / pod["metadata"]["uid"] / "volumes" / "kubernetes.io~empty-dir"
    for logs in vols.glob("*/ray/session_2*/logs"):
        for f in logs.glob("*"):
            if f.is_file() and f.suffix in (".out", ".err", ".log"):
                d = dest / logs.parent.name
                d.mkdir(parents=True, exist_ok=True)
                shutil.copy(f, d / f.name)


def rfc3339_ns(stamp):
    """2026-11-28T01:02:03.123456789Z -> ns since the epoch."""
    whole, _, frac = stamp.rstrip("Z").partition(".")
    secs = datetime.datetime.strptime(whole, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc).timestamp()
    return int(secs) * 1_000_000_000 + int((frac + "000000000")[:9])


class PodWatch:
    """Watches a namespace's pods from now: the instant (this process's CLOCK_MONOTONIC) each pod
    was first seen, first seen Running, and its last state."""

    def __init__(self, kube, namespace):
        self.kube, self.ns = kube, namespace
        self.created, self.running, self.last = {}, {}, {}
        self._stop = threading.Event()
        self._rv = kube.get(f"/api/v1/namespaces/{namespace}/pods")["metadata"]["resourceVersion"]
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self):
        path = f"/api/v1/namespaces/{self.ns}/pods"
        while not self._stop.is_set():
            try:
                for kind, pod in self.kube.watch_events(path, self._rv, 5):
                    now = time.monotonic_ns()
                    if kind == "ERROR":
                        self._rv = self.kube.get(path)["metadata"]["resourceVersion"]
                        break
                    self._rv = pod["metadata"].get("resourceVersion", self._rv)
                    if kind == "BOOKMARK":
                        continue
                    name = pod["metadata"]["name"]
                    self.created.setdefault(name, now)
                    self.last[name] = pod
                    if pod.get("status", {}).get("phase") == "Running":
                        self.running.setdefault(name, now)
                    if self._stop.is_set():
                        return
            except (OSError, ApiError):
                time.sleep(0.2)

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=15)


class Node:
    """The node up, the KubeRay operator and Volcano's CRD installed; down at close()."""

    def __init__(self):
        import kuberay
        try:
            cluster.up(tie_to_caller=True)
            self.kube = cluster.admin()
            kuberay.start_operator(self.kube)
            self._volcano_crd()
        except BaseException:
            cluster.down(quiet=True)  # a node half up is still the machine's: take it down
            raise

    def _volcano_crd(self):
        import yaml
        crd = yaml.safe_load((REPO / "tests" / "manifests" / "schemas" / "batch.volcano.sh_jobs.yaml").read_text())
        path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
        self.kube.post_unless_exists(path, crd)

        def established():
            got = self.kube.get(f"{path}/{crd['metadata']['name']}")
            return any(c["type"] == "Established" and c["status"] == "True"
                       for c in got.get("status", {}).get("conditions") or [])
        self.kube.wait("Volcano's Job CRD established", established, 60)

    def close(self):
        cluster.down()
        left = cluster.leftovers()
        if left:
            log(f"node: left behind: {left}")
