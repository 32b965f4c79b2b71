"""A worker evicted through the Eviction API, as a node drain evicts it: was it drained in the
GCS (its node's death reason as the recorder pod saw it), how its Ray container ended (exit code,
reason), the pod's last phase, and the seconds from the eviction call to the pod gone from the API.

- kuberay:         KubeRay's sample RayCluster (contenders.kuberay_cluster): `ray start --block`
                   under KubeRay's `bash -lc`.
- kuberay+sidecar: k8s/kuberay/ray-cluster.yaml: the same KubeRay pods with rayboot-sidecar and
                   its preStop drain.
- rayboot:         k8s/indexed-job/ray-cluster.yaml: rayboot as the entrypoint.
- vcjob:           k8s/volcano/ray-cluster.yaml under the Volcano stand-in (tests/node/volcano.py):
                   rayboot, and its sidecar's preStop drain.
- lws, jobset:     k8s/lws/ray-cluster.yaml and k8s/jobset/ray-cluster.yaml under the real
                   LeaderWorkerSet and JobSet controllers (tests/node/controllers.py, started once).
Each a head and one worker (the same for all), the worker idle (no tasks), alternating, evicted
AFTER_JOIN_S after its node is ALIVE in the GCS: a worker in service. Then, for the pods whose
`ray start` is not rayboot's to stop (KubeRay's, with and without our sidecar) and the vcjob (the
sidecar's drain), a worker evicted JOINING_AFTER_S after it joined, while Ray's own start-up may
still be waiting to see its node (docs/sidecar.md, "On KubeRay's pods"). What the platform does
next (Volcano's RestartJob, LWS's group re-made, JobSet's failure policy) follows the worker's end
and is not timed here."""
import pathlib
import threading
import time

import contenders
from nodecommon import (
    HOLD_JOB,
    MeasurementError,
    Namespace,
    attempt,
    interval,
    log,
    recorder_events,
    require,
    stamped_log,
    stats,
)

from test_shipped_manifests import load

# A worker in service: past Ray's own start-up, which looks for its node once a second.
AFTER_JOIN_S = 3.0
# A worker that has just joined: where, before the sidecar held its drain, 6 KubeRay rounds with
# it in 14 took 28 s (docs/sidecar.md).
JOINING_AFTER_S = 0.5
JOINING_NAMES = ("kuberay", "kuberay+sidecar", "vcjob")

NAMES = ("kuberay", "kuberay+sidecar", "rayboot", "vcjob", "lws", "jobset")
# The controllers a contender needs besides the node's own, started once for the run.
CONTROLLERS = {"lws": "LWS", "jobset": "JOBSET"}


def _kuberay_sidecar(namespace):
    docs = []
    for d in load("kuberay/ray-cluster.yaml"):
        d = contenders._uniform(d, namespace)
        if d["kind"] == "RayCluster":
            contenders.with_bench_token(d)
            g = d["spec"]["workerGroupSpecs"][0]
            g["replicas"] = g["minReplicas"] = g["maxReplicas"] = 1
        docs.append(d)
    return docs


def _one_worker(name, ns):
    """A shipped manifest (rayboot as every pod's entrypoint) with one worker, and the selector of
    that worker's pod."""
    if name == "rayboot":
        return (contenders.indexed_job(ns, workers=1),
                "job-name=ray-indexed,batch.kubernetes.io/job-completion-index=1")
    if name == "vcjob":
        return contenders.vcjob(ns, workers=1), "volcano.sh/job-name=ray-cluster,volcano.sh/task-spec=worker"
    manifest = {"lws": "lws/ray-cluster.yaml", "jobset": "jobset/ray-cluster.yaml"}[name]
    docs = [contenders._uniform(d, ns) for d in load(manifest)]
    for d in docs:
        if d["kind"] == "LeaderWorkerSet":
            d["spec"]["leaderWorkerTemplate"]["size"] = 2
        elif d["kind"] == "JobSet":
            (workers,) = [j for j in d["spec"]["replicatedJobs"] if j["name"] == "workers"]
            workers["replicas"] = 1
    if name == "lws":
        return docs, "leaderworkerset.sigs.k8s.io/name=ray-lws,leaderworkerset.sigs.k8s.io/worker-index!=0"
    return docs, "jobset.sigs.k8s.io/jobset-name=ray-jobset,jobset.sigs.k8s.io/replicatedjob-name=workers"


def _setup(name, ns):
    """(docs, GCS address, worker selector, Ray container, owner paths)."""
    if name == "kuberay":
        rc = contenders.kuberay_cluster(ns, workers=1)
        c = rc["metadata"]["name"]
        return ([rc], f"{c}-head-svc:6379", f"ray.io/cluster={c},ray.io/node-type=worker", "ray-worker",
                [f"/apis/ray.io/v1/namespaces/{ns}/rayclusters/{c}"])
    if name == "kuberay+sidecar":
        docs = _kuberay_sidecar(ns)
        c = [d for d in docs if d["kind"] == "RayCluster"][0]["metadata"]["name"]
        return (docs, f"{c}-head-svc:6379", f"ray.io/cluster={c},ray.io/node-type=worker", "ray-worker",
                [f"/apis/ray.io/v1/namespaces/{ns}/rayclusters/{c}"])
    docs, selector = _one_worker(name, ns)
    address, owner = {
        "rayboot": ("ray-indexed-0.ray-indexed:6379", "/apis/batch/v1/namespaces/{}/jobs/ray-indexed"),
        "vcjob": ("ray-cluster-head:6379", "/apis/batch.volcano.sh/v1alpha1/namespaces/{}/jobs/ray-cluster"),
        "lws": ("ray-lws-0.ray-lws:6379", "/apis/leaderworkerset.x-k8s.io/v1/namespaces/{}/leaderworkersets/ray-lws"),
        "jobset": ("ray-jobset-head-0-0.ray-jobset:6379", "/apis/jobset.x-k8s.io/v1alpha2/namespaces/{}/jobsets/ray-jobset"),
    }[name]
    return docs, address, selector, "ray", [owner.format(ns)]


def _worker_pod(kube, ns, selector):
    for p in kube.pods(ns, selector):
        if p["status"].get("podIP") and not p["metadata"].get("deletionTimestamp"):
            return p
    return None


def _alive(kube, ns, ip):
    return any(k == "node" and f[0] == ip and f[1] == "ALIVE" for _, _, k, f in recorder_events(kube, ns))


def _record_of(kube, ns, ip):
    mine = [f for _, _, k, f in recorder_events(kube, ns) if k == "node" and f[0] == ip]
    return mine[-1] if mine else None


class LogTail:
    """Reads a container's stamped log every 0.2 s until stopped, keeping the last read: the log
    of a pod that is about to be deleted (its end, after SIGTERM, is what the figures explain)."""

    def __init__(self, kube, ns, pod, container):
        self.lines, self._stop = [], threading.Event()
        self._args = (ns, pod, container)
        self._kube = kube
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self):
        while not self._stop.is_set():
            try:
                self.lines = stamped_log(self._kube, *self._args)
            except Exception:  # noqa: BLE001 - the pod is gone: keep the last read
                pass
            self._stop.wait(0.2)

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=10)
        return self.lines


def _after(lines, t0_real):
    """The log lines written after the eviction call, as `+seconds text`."""
    return [f"+{(t - t0_real) / 1e9:.2f} s {text[:160]}" for t, text in lines if t >= t0_real]


def _ray_start_state(ip):
    """What the pod's `ray start` is doing (the process whose argv has `ray` and `start`), read from
    the node's /proc: its signal masks, and each thread's state, wait channel and kernel stack.
    For a round where the pod is slow to go (once Ray's SIGTERM handler ran 27 s late)."""
    import cluster
    out = []
    try:
        procs = cluster.processes_in_netns(cluster.pod_sandboxes()[ip])
    except (KeyError, OSError) as e:
        return [f"no sandbox for {ip}: {e}"]
    for pid, argv in procs.items():
        words = [a.rsplit(b"/", 1)[-1] for a in argv]
        if b"start" not in words or not any(w.startswith(b"ray") for w in words):
            continue
        base = pathlib.Path(f"/proc/{pid}")
        try:
            status = (base / "status").read_text().splitlines()
            out.append(f"pid {pid}: {b' '.join(argv)[:120]!r}")
            out += [ln for ln in status if ln.split(":")[0] in ("State", "NSpid", "SigPnd", "ShdPnd", "SigBlk",
                                                                  "SigIgn", "SigCgt", "Threads")]
            for t in sorted((base / "task").iterdir(), key=lambda x: int(x.name)):
                stat = (t / "stat").read_text()
                comm, state = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2]
                wchan = (t / "wchan").read_text()
                stack = " < ".join(ln.split()[-1] for ln in (t / "stack").read_text().splitlines()[:4])
                blk = [ln for ln in (t / "status").read_text().splitlines() if ln.startswith("SigBlk")]
                out.append(f"  tid {t.name} {comm} {state} {wchan} {blk[0] if blk else ''} [{stack}]")
        except OSError as e:
            out.append(f"pid {pid}: {e}")
    return out


class SlowLook(threading.Thread):
    """After AFTER_S seconds, if the pod is not gone yet, takes _ray_start_state once."""

    def __init__(self, ip, after_s=3.0):
        super().__init__(daemon=True)
        self.ip, self.after_s, self.state, self.done = ip, after_s, None, threading.Event()
        self.start()

    def run(self):
        if not self.done.wait(self.after_s):
            self.state = _ray_start_state(self.ip)


def one_round(node, name, after_join_s=AFTER_JOIN_S):
    kube = node.kube
    ns = Namespace(kube, "ev-" + name.replace("+", "-"))
    docs, address, selector, container, owners = _setup(name, ns.name)
    controller = None
    try:
        controller = contenders.set_up(kube, ns.name, name, docs, address, HOLD_JOB)
        for d in docs:
            kube.create(d)
        worker = kube.wait(f"{name}: the worker pod", lambda: _worker_pod(kube, ns.name, selector), 180)
        ip, pod = worker["status"]["podIP"], worker["metadata"]["name"]
        kube.wait(f"{name}: the worker ALIVE in the GCS", lambda: _alive(kube, ns.name, ip), 240, interval=0.25)
        tail = LogTail(kube, ns.name, pod, container)
        has_sidecar = any(c["name"] == "rayboot-sidecar"
                          for c in worker["spec"]["containers"] + worker["spec"].get("initContainers", []))
        side_tail = LogTail(kube, ns.name, pod, "rayboot-sidecar") if has_sidecar else None
        time.sleep(after_join_s)
        t0, t0_real = time.monotonic_ns(), time.time_ns()
        kube.evict(ns.name, pod)
        slow = SlowLook(ip)
        last = kube.follow_pod_until_gone(ns.name, pod, 120)
        gone = interval(t0, time.monotonic_ns(), "eviction -> pod gone")
        slow.done.set()
        slow.join(timeout=30)
        log_after = _after(tail.stop(), t0_real)
        sidecar_after = _after(side_tail.stop(), t0_real) if side_tail else []

        def dead():
            r = _record_of(kube, ns.name, ip)
            return r if r and r[1] == "DEAD" else None
        try:
            rec = kube.wait(f"{name}: the evicted worker DEAD in the GCS", dead, 90, interval=0.5)
        except TimeoutError:
            rec = _record_of(kube, ns.name, ip)
        statuses = last["status"].get("containerStatuses", []) + last["status"].get("initContainerStatuses", [])
        ray = [s for s in statuses if s["name"] == container]
        require(ray, f"{name}: no status of container {container}")
        term = ray[0]["state"].get("terminated") or ray[0].get("lastState", {}).get("terminated") or {}
        reason = rec[4] if rec and len(rec) > 4 else "-"
        side = [x for x in statuses if x["name"] == "rayboot-sidecar"]
        side_term = (side[0]["state"].get("terminated") or side[0].get("lastState", {}).get("terminated") or {}) if side else {}
        return {"gone_s": gone, "phase": last["status"].get("phase"), "exit_code": term.get("exitCode"),
                "container_reason": term.get("reason"), "message": (term.get("message") or "")[-200:],
                "gcs_state": rec[1] if rec else None, "death_reason": reason,
                "drained": reason.startswith("AUTOSCALER_DRAIN"), "sidecar_message": (side_term.get("message") or "")[-300:], "log_after": log_after[-12:],
                "sidecar_log_after": sidecar_after[-12:],
                "ray_start_after_3s": slow.state}
    finally:
        if controller:
            controller.stop()
        ns.close(owners)


def start_controllers(node, names):
    import controllers
    for name in names:
        if name in CONTROLLERS:
            controllers.start(node.kube, getattr(controllers, CONTROLLERS[name]))


def run(node, quick, rounds=None):
    rounds = rounds or (2 if quick else 5)
    start_controllers(node, NAMES)
    got = {n: [] for n in NAMES}
    for i in range(rounds):
        for name in NAMES:
            r = attempt(lambda name=name: one_round(node, name), f"round {i + 1} {name}")
            got[name].append(r)
            log(f"   evict round {i + 1}/{rounds} {name}: gone {r['gone_s']:.1f} s, {r['phase']}, exit "
                f"{r['exit_code']} ({r['container_reason']}), GCS {r['gcs_state']} {r['death_reason']}")
    joining = {n: [] for n in JOINING_NAMES}
    for i in range(1 if quick else 3):
        for name in JOINING_NAMES:
            r = attempt(lambda name=name: one_round(node, name, JOINING_AFTER_S), f"joining round {i + 1} {name}")
            joining[name].append(r)
            log(f"   evict as it joins, round {i + 1} {name}: gone {r['gone_s']:.1f} s, exit {r['exit_code']}, "
                f"GCS {r['gcs_state']} {r['death_reason']}")
    out = {name: _summary(rs) for name, rs in got.items()}
    out["joining"] = {name: _summary(rs) for name, rs in joining.items()}
    if not all(out[n]["rounds"] for n in NAMES) or not all(out["joining"][n]["rounds"] for n in JOINING_NAMES):
        raise MeasurementError("an eviction without a result")
    return {"evict": out}


def _summary(rs):
    kinds = sorted({f"drained {r['drained']}, {r['death_reason']}, exit {r['exit_code']}, {r['phase']}" for r in rs})
    return {"gone_s": stats([r["gone_s"] for r in rs]), "summary": " | ".join(kinds), "rounds": rs}
