"""Apply to cluster ready: from the create call of the cluster's object to every worker ALIVE in
the GCS's node table, as the recorder pod (gcs_poll.py) saw it from inside the node, for KubeRay,
rayboot on an Indexed Job and rayboot on a vcjob, alternating round by round.

Where the time goes, from the same round: the controller (create -> the last pod of the cluster
seen by a watch), the pods (-> every pod seen Running), the head's GCS first answering the
recorder, the head's own node ALIVE, and the last worker ALIVE. For rayboot's pods, from the
runtime's stamps on each log line: the head's `ray start` exec -> GCS serving (Ray's own), each
worker's `ray start` exec -> its node ALIVE (Ray's own), and rayboot's own part: the head's first
line -> its exec, and a worker's line saying the GCS serves -> its exec (and, apart, how soon it
knew: the recorder's first answer -> that line, negative when the worker knew first).

The GCS's serving instant is a window: after the send of the recorder's last look that was turned
away at the address and at or before the reply to its first answered one (gcs_poll.py: 50 ms
apart plus the look). Intervals that end at it count to the window's end (Ray's head start to
SERVING is never flattered). A node ALIVE before the window's start cannot be true: the run
fails. (A worker's exec is not held to the window: in a 5-round run one exec'd 1.8 s, and after
the recorder stopped counting DNS failures and timeouts as proof, another 125 ms, before the
window's start; a look turned away while the head's own Health/Check already answered, cause
not found.)"""
import time

import contenders
from nodecommon import (
    HOLD_JOB,
    WORKERS,
    MeasurementError,
    Namespace,
    PodWatch,
    attempt,
    interval,
    log,
    recorder_events,
    require,
    stamped_log,
    stats,
)

NAMES = ("kuberay", "indexed", "vcjob")
READY_TIMEOUT_S = 300
STARTED_RAY = "started ray (pid"  # rayboot's line right after it spawned `ray start`
KNEW_SERVING = "is SERVING at"  # a worker's rayboot: the instant it knew the GCS serves


def _gcs_timeline(events):
    """(serving, serving's not-before, head ALIVE, {worker node id: ALIVE}) in monotonic ns, once
    every worker is ALIVE; else None."""
    serving, not_before, head, workers = None, None, None, {}
    for mono, _real, kind, f in events:
        if kind == "serving" and serving is None:
            serving, not_before = mono, int(f[0])
        elif kind == "node" and f[1] == "ALIVE":
            if f[2] == "head":
                head = head or mono
            else:
                workers.setdefault(f[3], mono)
    if serving is None or head is None or len(workers) < WORKERS:
        return None
    return serving, not_before, head, workers


def _rayboot_parts(kube, ns, pods, watch, serving_mono, mono_of_real):
    """Ray's own and rayboot's own intervals from the Ray containers' stamped logs. A worker's own
    share runs from its line saying the GCS serves to its exec of `ray start` (one stream, one
    clock); how soon it knew is counted from the recorder's first answer (SERVING_MONO), which
    bounds nothing about the worker: a worker woken by the head's rendezvous can know first, and
    that figure may be negative."""
    head_ray, worker_ray_starts, overhead, knew = None, {}, [], []
    for name in pods:
        pod = watch.last[name]
        lines = stamped_log(kube, ns, name, "ray")
        require(lines, f"{name}: an empty log")
        first = mono_of_real(lines[0][0])
        exec_ = [mono_of_real(t) for t, text in lines if STARTED_RAY in text]
        require(exec_, f"{name}: no '{STARTED_RAY}' line in its log")
        is_head = _index(pod) == "0" if _index(pod) is not None else name.endswith("-head-0")
        if is_head:
            head_ray = exec_[0]
            overhead.append(("head", interval(first, exec_[0], f"{name}: first line -> exec of ray start")))
        else:
            worker_ray_starts[pod["status"]["podIP"]] = exec_[0]
            known = [mono_of_real(t) for t, text in lines if KNEW_SERVING in text]
            require(known, f"{name}: no '{KNEW_SERVING}' line in its log")
            overhead.append(("worker", interval(known[0], exec_[0], f"{name}: knew the GCS serves -> exec of ray start")))
            knew.append((known[0] - serving_mono) / 1e9)
    return head_ray, worker_ray_starts, overhead, knew


def _kuberay_parts(kube, ns, pods, watch, serving, mono_of_real):
    """From each KubeRay worker's wait-gcs-ready log (the runtime's stamps): the GCS serving ->
    the init container's "GCS is ready." (what its 5 s loop of `ray health-check` loses), and
    that line -> the worker's node ALIVE (the Ray container's start and Ray's own start-up)."""
    alive = _worker_alive_by_ip(recorder_events(kube, ns))
    seen, to_alive = [], []
    for name in pods:
        pod = watch.last[name]
        if pod["metadata"].get("labels", {}).get("ray.io/node-type") != "worker":
            continue
        ready = [mono_of_real(t) for t, text in stamped_log(kube, ns, name, "wait-gcs-ready") if "GCS is ready" in text]
        require(ready, f"{name}: no 'GCS is ready' in its wait-gcs-ready log")
        seen.append(interval(serving, ready[0], f"{name}: GCS serving -> wait-gcs-ready saw it"))
        to_alive.append(interval(ready[0], alive[pod["status"]["podIP"]], f"{name}: GCS is ready -> ALIVE"))
    return {"kuberay_init_sees_gcs_s": seen, "kuberay_init_done_to_alive_s": to_alive}


def _index(pod):
    return pod["metadata"].get("annotations", {}).get("batch.kubernetes.io/job-completion-index")


def one_round(node, name):
    kube = node.kube
    ns = Namespace(kube, name)
    docs, address, owners, selector = contenders.contender(name, ns.name)
    controller = None
    try:
        controller = contenders.set_up(kube, ns.name, name, docs, address, HOLD_JOB)
        watch = PodWatch(kube, ns.name)
        mono0, real0 = time.monotonic_ns(), time.time_ns()
        for d in docs:
            kube.create(d)
        t_created = time.monotonic_ns()

        def whole():
            return _gcs_timeline(recorder_events(kube, ns.name))
        serving, serving_nb, head, workers = kube.wait(f"{name}: every worker ALIVE", whole, READY_TIMEOUT_S, interval=0.2)
        watch.stop()
        if controller and controller.errors:
            raise MeasurementError(f"the Volcano stand-in failed: {controller.errors}")
        pods = [p for p in watch.created if p != "gcs-poll"]
        require(len(pods) == WORKERS + 1, f"{name}: {len(pods)} pods, not {WORKERS + 1}: {pods}")
        last_worker = max(workers.values())
        r = {"create_call_s": interval(mono0, t_created, "the create call"),
             "ready_s": interval(mono0, last_worker, "create -> every worker ALIVE"),
             "pods_created_s": interval(mono0, max(watch.created[p] for p in pods), "create -> last pod seen"),
             "pods_running_s": interval(mono0, max(watch.running.get(p, last_worker) for p in pods),
                                        "create -> every pod seen Running"),
             "gcs_serving_s": interval(mono0, serving, "create -> GCS serving"),
             "head_alive_s": interval(mono0, head, "create -> head ALIVE"),
             "head_to_last_worker_s": interval(head, last_worker, "head ALIVE -> last worker ALIVE")}
        require(serving_nb <= serving, f"{name}: the GCS's serving window ends before it begins")
        r["serving_window_s"] = interval(serving_nb, serving, "the serving window")
        require(head >= serving and min(workers.values()) >= serving,
                f"{name}: a node ALIVE before the GCS answered")
        offset = mono0 - real0

        def mono_of_real(real):
            return real + offset
        if name == "kuberay":
            r.update(_kuberay_parts(kube, ns.name, pods, watch, serving_nb, mono_of_real))
        else:
            head_exec, worker_execs, overhead, knew = _rayboot_parts(kube, ns.name, pods, watch, serving, mono_of_real)
            r["rayboot_worker_knew_s"] = knew
            r["head_ray_start_to_serving_s"] = interval(head_exec, serving, "head's ray start -> GCS serving")
            alive_by_ip = _worker_alive_by_ip(recorder_events(kube, ns.name))
            r["worker_ray_start_to_alive_s"] = [interval(worker_execs[ip], alive_by_ip[ip], f"worker {ip}: ray start -> ALIVE")
                                                for ip in worker_execs]
            r["rayboot_head_s"] = [s for role, s in overhead if role == "head"][0]
            r["rayboot_worker_s"] = [s for role, s in overhead if role == "worker"]
        return r
    finally:
        if controller:
            controller.stop()
        ns.close(owners)


def _worker_alive_by_ip(events):
    out = {}
    for mono, _real, kind, f in events:
        if kind == "node" and f[1] == "ALIVE" and f[2] == "worker":
            out.setdefault(f[0], mono)
    return out


def run(node, quick, rounds=None):
    rounds = rounds or (2 if quick else 5)
    got = {n: [] for n in NAMES}
    for i in range(rounds):
        for name in NAMES:
            t = time.monotonic()
            r = attempt(lambda name=name: one_round(node, name), f"round {i + 1} {name}")
            got[name].append(r)
            log(f"   apply round {i + 1}/{rounds} {name}: every worker ALIVE {r['ready_s']:.2f} s "
                f"(GCS {r['gcs_serving_s']:.2f}, head {r['head_alive_s']:.2f}; round {time.monotonic() - t:.0f} s)")
    return summarize(got)


def summarize(got):
    out = {}
    for name, rounds in got.items():
        s = {}
        for key in rounds[0]:
            vals = []
            for r in rounds:
                v = r[key]
                vals.extend(v if isinstance(v, list) else [v])
            s[key] = stats(vals)
        s["rounds"] = rounds
        out[name] = s
    k = out["kuberay"]["ready_s"]["median"]
    for name in ("indexed", "vcjob"):
        out[name]["ratio_to_kuberay"] = round(out[name]["ready_s"]["median"] / k, 3) if k else None
    return {"apply_ready": out}
