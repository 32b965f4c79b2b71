"""Head lost: the head pod deleted (or evicted) once the cluster is whole, and the seconds from
that call until every worker is ALIVE in the next head's GCS (nodes that joined after the loss),
as the recorder pod saw it; with the new GCS's first answer and its head ALIVE on the way, each
worker pod's container restarts, and whether the head's job ran again.

- kuberay: KubeRay's sample RayCluster, the head pod deleted (`kubectl delete`); its workers are
  idle (a KubeRay head runs no job of the user's here).
- vcjob:   k8s/volcano/ray-cluster.yaml, the head deleted while its job (BUSY_JOB: tasks on every
  node) runs: PodEvicted -> RestartTask re-creates it alone.
- indexed: k8s/indexed-job/ray-cluster.yaml, the head evicted while its job runs: podFailurePolicy
  ignores the disruption and the Job controller re-creates index 0.
Without GCS fault tolerance for all three (`run`), and with it for all three (`run_ft`: NAME_ft in
contenders.py, each with its own Redis). With fault tolerance the new GCS reads the cluster back
from Redis: the workers keep their node ids (whole again = each of them listed ALIVE by the new
GCS, next to a new head node), and no worker container may restart. That listing says the
workers' raylets lived on; it does not say they take tasks yet (Ray's raylet resumes its GCS
subscription later: tests/node/test_gcs_ft_on_node.py asks a detached actor for that)."""
import os
import threading
import time

import contenders
from nodecommon import (
    WORKERS,
    MeasurementError,
    Namespace,
    attempt,
    interval,
    keep_logs,
    log,
    recorder_events,
    require,
    stats,
)

from kube import ApiError
from test_shipped_manifests import BUSY_JOB

NAMES = ("kuberay", "vcjob", "indexed")
NAMES_FT = ("kuberay_ft", "vcjob_ft", "indexed_ft")
TIMEOUT_S = 300


def _whole(events, old_ids, t0, ft=False):
    """(whole instant, serving instant, head ALIVE instant) once every worker is ALIVE among nodes
    not in OLD_IDS (FT: among the old workers, as the new GCS lists them), after T0; else None.
    The serving instant is the last first-answer before the whole instant (the GCS that holds the new nodes; a look that failed under load and answered
    again is not the new head)."""
    serving, head, workers = [], None, {}
    for mono, _real, kind, f in events:
        if mono < t0:
            continue
        if kind == "serving":
            serving.append(mono)
        elif kind == "node" and f[1] == "ALIVE" and serving:
            if f[2] == "head" and f[3] not in old_ids:
                head = head or mono
            elif f[2] == "worker" and (f[3] in old_ids) == ft:
                workers.setdefault(f[3], mono)
    if not serving or head is None or len(workers) < WORKERS:
        return None
    whole = max(workers.values())
    return whole, max(s for s in serving if s <= whole), head


def _first_cluster(events):
    """The node ids of the first cluster once its head and every worker are ALIVE; else None."""
    ids = {f[3] for _m, _r, k, f in events if k == "node"}
    alive = {f[3] for _m, _r, k, f in events if k == "node" and f[1] == "ALIVE" and f[2] == "worker"}
    heads = {f[3] for _m, _r, k, f in events if k == "node" and f[1] == "ALIVE" and f[2] == "head"}
    return ids if len(alive) >= WORKERS and heads else None


def _is_head(pod):
    meta = pod["metadata"]
    idx = meta.get("annotations", {}).get("batch.kubernetes.io/job-completion-index")
    return idx == "0" or meta["name"].endswith("-head-0") or meta.get("labels", {}).get("ray.io/node-type") == "head"


def _head_pod(kube, ns, selector):
    for p in kube.pods(ns, selector):
        if _is_head(p) and not p["metadata"].get("deletionTimestamp"):
            return p
    return None


class HeadWatch(threading.Thread):
    """Where the re-creation's time goes, from the API polled every 0.2 s (a watch's view, on the
    bench's monotonic clock): the old head pod gone, a new one made, its containers running."""

    def __init__(self, kube, ns, selector, old_uid, old_name=None, containers=("ray",)):
        super().__init__(daemon=True)
        self.kube, self.ns, self.selector, self.old_uid = kube, ns, selector, old_uid
        self.old_name, self.containers, self.old_logs = old_name, containers, {}
        self.seen, self.done = {}, threading.Event()

    def _follow_old(self):
        """The old head's containers' logs as last read while it lives (with BENCH_LOG_DIR): they go
        with its pod."""
        if not self.old_name or not os.environ.get("BENCH_LOG_DIR") or "old_head_gone" in self.seen:
            return
        for c in self.containers:
            try:
                text = self.kube.log(self.ns, self.old_name, c, timestamps=True)
            except Exception:  # noqa: BLE001 - gone, or not yet readable: the last text read stays
                continue
            if not text.startswith("unable to retrieve container logs"):  # the kubelet's word once it is gone
                self.old_logs[f"old-head-{c}"] = text

    def run(self):
        while not self.done.is_set() and len(self.seen) < 3:
            self._follow_old()
            try:
                pods = [p for p in self.kube.pods(self.ns, self.selector) if _is_head(p)]
            except Exception:  # noqa: BLE001 - a failed look is retried; a missing instant shows as None
                pods = None
            now = time.monotonic_ns()
            if pods is not None:
                uids = {p["metadata"]["uid"] for p in pods}
                if self.old_uid not in uids:
                    self.seen.setdefault("old_head_gone", now)
                for p in pods:
                    if p["metadata"]["uid"] != self.old_uid:
                        self.seen.setdefault("new_head_pod", now)
                        statuses = p.get("status", {}).get("containerStatuses", [])
                        if statuses and all(c.get("state", {}).get("running") for c in statuses):
                            self.seen.setdefault("new_head_running", now)
            self.done.wait(0.2)


def one_round(node, name):
    kube = node.kube
    ft = name.endswith("_ft")
    kuberay = name.startswith("kuberay")
    ns = Namespace(kube, "hl-" + name)
    docs, address, owners, selector = contenders.contender(name, ns.name)
    controller = watch = None
    try:
        controller = contenders.set_up(kube, ns.name, name, docs, address, BUSY_JOB)
        for d in docs:
            kube.create(d)
        old_ids = kube.wait(f"{name}: the first cluster whole", lambda: _first_cluster(recorder_events(kube, ns.name)),
                            TIMEOUT_S, interval=0.5)
        head = _head_pod(kube, ns.name, selector)
        require(head, f"{name}: no head pod")
        if not kuberay:
            kube.wait(f"{name}: the head's job running", lambda: "started the command" in kube.log(
                ns.name, head["metadata"]["name"], "ray"), 120, interval=0.5)
        time.sleep(2)  # the tasks spread over the workers
        before = {p["metadata"]["name"]: _restarts(p) for p in kube.pods(ns.name, selector)}
        containers = [c["name"] for c in head["spec"]["containers"] + head["spec"].get("initContainers", [])]
        watch = HeadWatch(kube, ns.name, selector, head["metadata"]["uid"], head["metadata"]["name"], containers)
        t0, t0_real = time.monotonic_ns(), time.time_ns()
        watch.start()
        if name.startswith("indexed"):
            kube.evict(ns.name, head["metadata"]["name"])
        else:
            kube.delete(f"/api/v1/namespaces/{ns.name}/pods/{head['metadata']['name']}")
        got = kube.wait(f"{name}: every worker ALIVE in a new GCS",
                        lambda: _whole(recorder_events(kube, ns.name), old_ids, t0, ft), TIMEOUT_S, interval=0.5)
        whole, serving, new_head = got
        _stop(watch)
        keep_logs(kube, ns.name, name, t0_real, watch.old_logs)
        steps = {f"{k}_s": interval(t0, v, f"head lost -> {k}") for k, v in watch.seen.items()}
        if controller and controller.errors:
            raise MeasurementError(f"the Volcano stand-in failed: {controller.errors}")
        after = {p["metadata"]["name"]: _restarts(p) for p in kube.pods(ns.name, selector)}
        restarted = sum(after[w] - before[w] for w in before if w in after and w != head["metadata"]["name"])
        new = _head_pod(kube, ns.name, selector)
        ran_again = None
        if not kuberay and new:
            try:
                ran_again = kube.wait("the new head's job", lambda: "started the command" in kube.log(
                    ns.name, new["metadata"]["name"], "ray"), 60, interval=0.5)
            except TimeoutError:
                ran_again = False
        return {"whole_s": interval(t0, whole, "head lost -> every worker ALIVE in the new GCS"),
                "new_gcs_serving_s": interval(t0, serving, "head lost -> new GCS serving"),
                "new_head_alive_s": interval(t0, new_head, "head lost -> new head ALIVE"),
                "serving_to_whole_s": interval(serving, whole, "new GCS serving -> whole"),
                "worker_container_restarts": restarted, "job_ran_again": ran_again, **steps}
    finally:
        _stop(watch)  # a round that failed half-way leaves no poller behind
        if controller:
            controller.stop()
        if kuberay and ft:
            _without_redis_cleanup(kube, owners[0])
        ns.close(owners)


def _stop(watch):
    if watch:
        watch.done.set()
        watch.join()


def _without_redis_cleanup(kube, path):
    """Deletes the RayCluster without KubeRay's Redis cleanup Job (its finalizer waits for the head
    pod to go, then runs a Job for up to 300 s): this round's Redis goes with its namespace."""
    try:
        kube.delete(path, {"propagationPolicy": "Background"})
        kube.patch(path, {"metadata": {"finalizers": None}})
    except ApiError as e:
        if e.code != 404:
            raise


def _restarts(pod):
    return sum(s.get("restartCount", 0) for s in pod["status"].get("containerStatuses", []))


def run(node, quick, rounds=None, names=NAMES, key="head_lost"):
    rounds = rounds or (1 if quick else 3)
    got = {n: [] for n in names}
    for i in range(rounds):
        for name in names:
            r = attempt(lambda name=name: one_round(node, name), f"round {i + 1} {name}")
            got[name].append(r)
            log(f"   head lost round {i + 1}/{rounds} {name}: whole again {r['whole_s']:.1f} s (new GCS "
                f"{r['new_gcs_serving_s']:.1f} s, its head ALIVE {r['new_head_alive_s']:.1f} s), worker restarts "
                f"{r['worker_container_restarts']}, job again {r['job_ran_again']}; old head gone "
                f"{r.get('old_head_gone_s')}, new head pod {r.get('new_head_pod_s')}, running {r.get('new_head_running_s')}")
    out = {}
    for name, rs in got.items():
        out[name] = {k: stats([r.get(k) for r in rs]) for k in (
            "whole_s", "new_gcs_serving_s", "new_head_alive_s", "serving_to_whole_s", "worker_container_restarts",
            "old_head_gone_s", "new_head_pod_s", "new_head_running_s")}
        out[name]["job_ran_again"] = [r["job_ran_again"] for r in rs]
        out[name]["rounds"] = rs
    return {key: out}


def run_ft(node, quick, rounds=None):
    return run(node, quick, rounds, NAMES_FT, "head_lost_ft")
