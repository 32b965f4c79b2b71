"""Waiting cost on a real kubelet: one worker pod whose head is absent for 60 s, its head's name
resolving and nothing listening on the head's ports, measured from the containers' own cgroups as
runc made them (cgroup v1, no per-pod or QoS cgroups on this node: one cgroup per container under
/sys/fs/cgroup/<controller>/k8s.io/<container id>); every container of the pod counts, init
containers included (the sandbox's pause process does not: it is the same for both).

- kuberay: KubeRay's sample RayCluster with 1 worker, its head's command overwritten to `sleep`
  (annotation ray.io/overwrite-container-cmd): the head Service (headless, publishNotReadyAddresses)
  resolves to the head pod, whose GCS port is closed. The worker's `wait-gcs-ready` init container
  (bash, `ray health-check` every 5 s) is what waits.
- rayboot: a worker pod (`rayboot`, RAYBOOT_ROLE=worker, RAYBOOT_HEAD_ADDRESS=ray-head:6379) pointed
  at a headless Service (publishNotReadyAddresses) in front of a pod that sleeps: no rendezvous, no
  GCS. That sleeping pod is measured too (`floor`): what the runtime charges a container that runs
  `sleep` (runc's own start-up runs in the container's cgroup: its CPU and its memory high-water
  mark are in every contender's figures, and no waiter can go below them).
- rayboot_held: the same worker, its head running rayboot too, whose Ray is a stand-in that holds
  and never serves (RAYBOOT_RAY, a two-line script): the head's rayboot is up, its rendezvous open,
  its GCS absent, as while a head's Ray is starting.
All run side by side in each round, on the same image with the same requests and the token.

CPU: cpuacct.usage (ns, every task the cgroup ever held, the exited ones included). Memory:
memory.max_usage_in_bytes, v1's high-water mark of what is charged to the cgroup: anonymous memory
plus the page cache of files the container was first to read (Python's and Ray's modules read
first by this container are charged to it; pages another cgroup read first are not) plus kernel
memory on this kernel; memory.stat's total_rss and total_cache at the end say how it splits."""
import pathlib
import threading
import time

import contenders
from nodecommon import (
    RAY_IMAGE,
    RAY_RESOURCES,
    MeasurementError,
    Namespace,
    configmap,
    create_auth_secret,
    log,
    require,
    stats,
)

WAIT_S = 60
CGROUP = pathlib.Path("/sys/fs/cgroup")


def _cgroup_dir(controller, cid):
    for d in CGROUP.iterdir():
        if controller in d.name.split(",") and (d / "k8s.io" / cid).is_dir():
            return d / "k8s.io" / cid
    return None


def _read_container(cid):
    cpu = _cgroup_dir("cpuacct", cid)
    mem = _cgroup_dir("memory", cid)
    require(cpu and mem, f"container {cid[:12]}: no cpuacct or memory cgroup under {CGROUP}/*/k8s.io")
    st = dict(line.split() for line in (mem / "memory.stat").read_text().splitlines())
    return {"cpu_ns": int((cpu / "cpuacct.usage").read_text()),
            "max_usage_kb": int((mem / "memory.max_usage_in_bytes").read_text()) // 1024,
            "rss_kb": int(st.get("total_rss", 0)) // 1024, "cache_kb": int(st.get("total_cache", 0)) // 1024}


def _container_ids(pod):
    st = pod.get("status", {})
    out = {}
    for s in st.get("initContainerStatuses", []) + st.get("containerStatuses", []):
        cid = s.get("containerID", "")
        if cid:
            out[s["name"]] = cid.split("://", 1)[1]
    return out


def _kuberay(kube, ns):
    rc = contenders.kuberay_cluster(ns, workers=1)
    rc["metadata"].setdefault("annotations", {})["ray.io/overwrite-container-cmd"] = "true"
    head = rc["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]
    head["command"], head["args"] = ["sleep", "infinity"], []
    kube.create(rc)
    name = rc["metadata"]["name"]
    pods = kube.wait("KubeRay's worker pod", lambda: kube.pods(ns, f"ray.io/cluster={name},ray.io/node-type=worker"), 120)
    return [("kuberay", pods[0]["metadata"]["name"], "wait-gcs-ready")]


# rayboot's pods here are the bench's own (no shipped manifest waits alone): Ray's token as the
# shipped manifests mount it.
AUTH_MOUNT = {"name": "ray-auth", "mountPath": "/var/run/secrets/ray-auth", "readOnly": True}
AUTH_VOLUME = {"name": "ray-auth", "secret": {"secretName": contenders.AUTH_SECRET, "defaultMode": 0o440,
                                              "items": [{"key": "token", "path": "token"}]}}
AUTH_VARS = [{"name": "RAY_AUTH_MODE", "value": "token"},
             {"name": "RAY_AUTH_TOKEN_PATH", "value": "/var/run/secrets/ray-auth/token"}]


STAND_IN_RAY = "#!/bin/sh\n# a head's Ray that never serves: rayboot waits for its GCS\nexec sleep infinity\n"


def _head_service(kube, ns):
    kube.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "ray-head", "namespace": ns},
                 "spec": {"clusterIP": "None", "publishNotReadyAddresses": True, "selector": {"bench": "head"},
                          "ports": [{"name": "gcs", "port": 6379}]}})


def _rayboot_pod(kube, ns, name, role_env, labels=None, volumes=(), mounts=()):
    env = role_env + [{"name": "RAYBOOT_POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                      {"name": "RAYBOOT_WAIT_TIMEOUT", "value": "3600"}] + AUTH_VARS
    kube.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns, "labels": labels or {}},
                 "spec": {"terminationGracePeriodSeconds": 0, "volumes": [AUTH_VOLUME, *volumes],
                          "securityContext": {"fsGroup": 100},  # the token's file (0440), as for KubeRay's
                          "containers": [{"name": "ray", "image": RAY_IMAGE, "imagePullPolicy": "IfNotPresent",
                                          "command": ["rayboot"], "env": env, "resources": RAY_RESOURCES,
                                          "volumeMounts": [AUTH_MOUNT, *mounts]}]}})


WORKER_ENV = [{"name": "RAYBOOT_ROLE", "value": "worker"}, {"name": "RAYBOOT_HEAD_ADDRESS", "value": "ray-head:6379"}]


def _rayboot(kube, ns):
    _head_service(kube, ns)
    kube.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "ray-head", "namespace": ns,
                                                                 "labels": {"bench": "head"}},
                 "spec": {"terminationGracePeriodSeconds": 0,
                          "containers": [{"name": "ray", "image": RAY_IMAGE, "imagePullPolicy": "IfNotPresent",
                                          "command": ["sleep", "infinity"], "resources": RAY_RESOURCES}]}})
    _rayboot_pod(kube, ns, "ray-worker", WORKER_ENV)
    return [("rayboot", "ray-worker", "ray"), ("floor", "ray-head", "ray")]


def _rayboot_held(kube, ns):
    _head_service(kube, ns)
    kube.create(configmap(ns, "stand-in-ray", {"ray": STAND_IN_RAY}))
    _rayboot_pod(kube, ns, "ray-head",
                 [{"name": "RAYBOOT_ROLE", "value": "head"}, {"name": "RAYBOOT_WORKERS_EXPECTED", "value": "1"},
                  {"name": "RAYBOOT_RAY", "value": "/stand-in/ray"}], labels={"bench": "head"},
                 volumes=[{"name": "stand-in", "configMap": {"name": "stand-in-ray", "defaultMode": 0o555}}],
                 mounts=[{"name": "stand-in", "mountPath": "/stand-in", "readOnly": True}])
    _rayboot_pod(kube, ns, "ray-worker", WORKER_ENV)
    return [("rayboot_held", "ray-worker", "ray")]


SETUPS = {"kuberay": _kuberay, "rayboot": _rayboot, "rayboot_held": _rayboot_held}
MEASURED = ("kuberay", "rayboot", "rayboot_held", "floor")


def _measure(kube, ns, pod, waiter, out):
    """Waits until WAITER runs, then WAIT_S more; reads every container's cgroup of POD."""
    def started():
        p = kube.pod(ns, pod)
        for s in p["status"].get("initContainerStatuses", []) + p["status"].get("containerStatuses", []):
            if s["name"] == waiter and s.get("state", {}).get("running") and s.get("containerID"):
                return p
        return None
    kube.wait(f"{ns}/{pod}: {waiter} running", started, 120, interval=0.1)
    t0 = time.monotonic()
    time.sleep(WAIT_S)
    p = kube.pod(ns, pod)
    ids = _container_ids(p)
    require(waiter in ids, f"{pod}: {waiter} has no container")
    st = [s for s in p["status"].get("initContainerStatuses", []) + p["status"].get("containerStatuses", [])
          if s["name"] == waiter][0]
    require(st.get("state", {}).get("running") and st.get("restartCount", 0) == 0,
            f"{pod}: {waiter} is no longer the first one waiting: {st}")
    per = {name: _read_container(cid) for name, cid in ids.items()}
    elapsed = time.monotonic() - t0
    require(elapsed >= WAIT_S, "the wait was cut short")
    try:
        tail = kube.log(ns, pod, waiter).strip().splitlines()[-1:]
    except Exception as e:  # noqa: BLE001 - the evidence is only printed
        tail = [str(e)]
    total_cpu = sum(c["cpu_ns"] for c in per.values())
    require(total_cpu > 0, f"{pod}: zero CPU: the cgroups read are not the containers'")
    out.update({"cpu_ms": total_cpu / 1e6, "peak_kb": sum(c["max_usage_kb"] for c in per.values()),
                "containers": per, "window_s": round(elapsed, 2), "last_line": tail})


def run(node, quick, rounds=None):
    rounds = rounds or (2 if quick else 5)
    kube = node.kube
    got = {n: [] for n in MEASURED}
    for i in range(rounds):
        spaces, threads, outs = {}, [], {}
        try:
            for name, setup in SETUPS.items():
                ns = spaces[name] = Namespace(kube, f"wait-{name}")
                token = create_auth_secret(kube, ns.name)
                if name == "kuberay":
                    contenders.kuberay_token(kube, ns.name, token)
                kube.create(configmap(ns.name, "user-job", {"job.py": "pass\n"}))
                for key, pod, waiter in setup(kube, ns.name):
                    outs[key] = {}
                    t = threading.Thread(target=_guard, args=(_measure, kube, ns.name, pod, waiter, outs[key]))
                    threads.append(t)
                    t.start()
            for t in threads:
                t.join()
            for key in MEASURED:
                if "error" in outs[key]:
                    raise MeasurementError(f"waiting, {key}: {outs[key]['error']}")
                got[key].append(outs[key])
                log(f"   waiting round {i + 1}/{rounds} {key}: CPU {outs[key]['cpu_ms']:.1f} ms, "
                    f"peak {outs[key]['peak_kb']} kB ({outs[key]['last_line']})")
        finally:
            for name, ns in spaces.items():
                # KubeRay's operator would make its pods again while the namespace goes
                ns.close([f"/apis/ray.io/v1/namespaces/{ns.name}/rayclusters"] if name == "kuberay" else ())
    out = {}
    for name, rs in got.items():
        out[name] = {"cpu_ms": stats([r["cpu_ms"] for r in rs]), "peak_kb": stats([r["peak_kb"] for r in rs]),
                     "rounds": rs}
    ratios(out)
    return {"waiting": out}


def ratios(out):
    """KubeRay's median over each rayboot waiter's, as measured and above the `sleep` container's
    (what the waiter adds to what the runtime charges any container: runc's start-up). Above the
    floor is None where the waiter's excess is within the floor's own round-to-round spread: a
    ratio of noise is no figure."""
    k, floor = out["kuberay"], out["floor"]
    for name, suffix in (("rayboot", ""), ("rayboot_held", "_held")):
        r = out[name]
        for metric, key in (("cpu", "cpu_ms"), ("memory", "peak_kb")):
            out[f"ratio_{metric}{suffix}"] = round(k[key]["median"] / r[key]["median"], 1)
            per_round = [x[key] for x in floor["rounds"]]
            own = r[key]["median"] - floor[key]["median"]
            out[f"ratio_{metric}_above_floor{suffix}"] = (
                round((k[key]["median"] - floor[key]["median"]) / own, 1)
                if own > max(per_round) - min(per_round) else None)


def _guard(fn, *args):
    try:
        fn(*args)
    except Exception as e:  # noqa: BLE001 - reported by the caller as the measurement's failure
        args[-1]["error"] = repr(e)
