"""A small stand-in for Volcano's job controller and its svc, env and ray plugins, for the real
node: Volcano's controllers cannot be built here (the Go module proxy refuses volcano.sh/volcano).
It creates, for a batch.volcano.sh/v1alpha1 Job that the API server has validated against
Volcano's own CRD, the real objects Volcano would (shared/facts/volcano.md, and Volcano's
pkg/controllers/job/plugins/{svc,env,distributed-framework/ray}); everything downstream of them
(scheduling, kubelet, DNS, ConfigMap mounts, probes, hooks, eviction) is the real thing.

What it does, after Volcano's pkg/controllers/job (v1.16; where older releases differ, it says):
- Pods `J-T-i` with Volcano's labels and annotations, owned by the Job; svc: hostname and
  subdomain (unless the template sets them), the headless Service `J`, the ConfigMap `J-svc`
  (`<t>.host`, `VC_<K>_HOSTS`, `VC_<K>_NUM`) mounted at /etc/volcano in every container and
  init container, and `VC_<K>_HOSTS`/`VC_<K>_NUM` as configMapKeyRef env; env: `VK_TASK_INDEX`
  and `VC_TASK_INDEX`; ray: the command overwrite of the `--headContainer`/`--workerContainer`
  containers, the head's named ports, the ClusterIP Service `J-head-svc`.
- Events as Volcano's handlers raise them, in the order the API server sends the pod changes
  (one watch, one queue, one worker): a pod's change to Failed is `PodFailed` (the exit code of
  its FIRST container); its change to Succeeded is `TaskCompleted` when every replica of its
  task has Succeeded; its DELETE event (whoever deleted it, once it has terminated: the kubelet
  moves a deleted pod to Succeeded or Failed first, so those come before) is `PodEvicted`. The
  pods the controller deletes itself are first marked `volcano.sh/controller-out-of-sync`
  (v1.14+), and their events are its own.
- Policies, task-level before job-level, by event or exit code; no policy is `SyncJob`, which
  re-creates every missing pod under its name (a deleted pod comes back even without a policy).
  Actions by the job's phase (state/*.go): `RestartJob` (every pod deleted, the job version
  bumped, the plugins' objects deleted, re-created once the pods are gone), `RestartTask` and
  `RestartPod` (v1.11+; only that task's or that pod's remaining pods deleted, the version kept,
  the plugins' objects deleted and made again, the missing pods re-created at once; before
  v1.11 both fell through to SyncJob, which re-creates the missing pods alike), `CompleteJob`
  (every pod not finished deleted, then Completed); a restart counts in `retryCount`, and at
  `maxRetry` (default 3) the job Fails. `status` carries the phase, version, retryCount, counts,
  controlledResources and one condition per phase (the last of each), as Volcano writes them.

What it leaves out: the Volcano scheduler (pods get the default scheduler, so there is no gang
scheduling: a job's PodGroup is taken as made and enqueued at once, and minAvailable only
decides Running), queues and PodGroup objects, the NetworkPolicy the svc plugin makes (this node's CNI enforces
none), policy timeouts and PodPending policies, TaskFailed, the AbortJob, TerminateJob,
ResumeJob and RestartPartition actions, commands, minSuccess and per-task minAvailable, and
scaling a running job: a manifest that needs them makes the controller record an error."""
import copy
import datetime
import http.client
import queue
import threading

from kube import ApiError, owner_references

GROUP = "/apis/batch.volcano.sh/v1alpha1"
POLL_S = 0.5
JOBS_POLL_S = 0.5
WATCH_S = 5  # a pod watch ends after this long and is resumed: stop() never waits longer
DEFAULT_MAX_RETRY = 3
JOB_NAME, JOB_VERSION, TASK_SPEC = "volcano.sh/job-name", "volcano.sh/job-version", "volcano.sh/task-spec"
OUT_OF_SYNC = "volcano.sh/controller-out-of-sync"
RETAIN_NONE, RETAIN_SOFT = frozenset(), frozenset({"Succeeded", "Failed"})
RAY_DEFAULTS = {"head": "head", "headContainer": "head", "worker": "worker", "workerContainer": "worker",
                "port": "6379", "dashboardPort": "8265", "clientPort": "10001"}


def _env_key(task):
    return task.replace("-", "_")


def plugin_flags(args):
    """The ray plugin's Go flag set: `--name=value` or `--name value`; parsing stops at the
    first unknown flag, as Go's flag package (with ContinueOnError) does."""
    flags = dict(RAY_DEFAULTS)
    i = 0
    while i < len(args):
        arg = args[i].lstrip("-")
        name, eq, value = arg.partition("=")
        if name not in flags:
            break
        if not eq:
            i += 1
            value = args[i] if i < len(args) else ""
        flags[name] = value
        i += 1
    return flags


def host_entries(job):
    """svc's GenerateHosts: per task, `hostname.subdomain` per replica (one entry only when the
    template sets a hostname)."""
    name = job["metadata"]["name"]
    hosts = {}
    for t in job["spec"]["tasks"]:
        spec = t["template"].get("spec", {})
        entries = []
        for i in range(t.get("replicas", 1)):
            host = spec.get("hostname") or f"{name}-{t['name']}-{i}"
            entries.append(f"{host}.{spec.get('subdomain') or name}")
            if spec.get("hostname"):
                break
        hosts[t["name"]] = entries
    return hosts


def svc_configmap_data(job):
    data = {}
    for task, entries in host_entries(job).items():
        k = _env_key(task)
        data[f"{k}.host"] = "\n".join(entries)
        data[f"VC_{k.upper()}_HOSTS"] = ",".join(entries)
        data[f"VC_{k.upper()}_NUM"] = str(len(entries))
    return data


def _now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _annotations(pod):
    return pod["metadata"].get("annotations") or {}


def _out_of_sync(pod):
    return OUT_OF_SYNC in _annotations(pod)


def _phase(pod):
    return (pod or {}).get("status", {}).get("phase")


def _policy_events(policy):
    return list(policy.get("events") or []) + ([policy["event"]] if policy.get("event") else [])


class Controller:
    """Volcano's job controller for the Volcano Jobs of one namespace: a pod watch and a job poll
    feed one queue of requests, handled in order by one worker, as Volcano's informers feed its
    per-job work queues."""

    def __init__(self, kube, namespace):
        self.kube = kube
        self.ns = namespace
        self.errors = []
        self.jobs = {}    # name -> the Job as last listed (its spec and uid)
        self.status = {}  # name -> the status this controller keeps and writes, as Volcano's cache does
        self.pods = {}    # job name -> {pod name: pod}: the job cache, updated by the pod events
        self._lock = threading.Lock()
        self._queue = queue.Queue()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=f, name=f"volcano-{namespace}-{f.__name__}", daemon=True)
                         for f in (self._watch_pods, self._poll_jobs, self._work)]

    def start(self):
        for t in self._threads:
            t.start()
        return self

    def stop(self):
        self._stop.set()
        for t in self._threads:
            t.join(timeout=WATCH_S + 15)

    def _guard(self, what, fn, *args):
        try:
            fn(*args)
        except Exception as e:  # noqa: BLE001 - kept for the test to report, the controller goes on
            if not self._stop.is_set():
                self.errors.append(f"{what}: {e!r}")

    # --- informers: what Volcano's event handlers do (job_controller_handler.go) ----------

    def _poll_jobs(self):
        while not self._stop.is_set():
            self._guard("listing jobs", self._list_jobs)
            self._stop.wait(JOBS_POLL_S)

    def _list_jobs(self):
        items = self.kube.get(f"{GROUP}/namespaces/{self.ns}/jobs")["items"]
        with self._lock:
            for job in items:
                name = job["metadata"]["name"]
                known = self.jobs.get(name)
                if known is None or known["metadata"]["uid"] != job["metadata"]["uid"]:
                    self.jobs[name] = job  # addJob
                    self.status[name] = {"phase": "", "version": 0, "retry": 0, "resources": {},
                                         "conditions": [], "counts": {}}
                    self._queue.put({"job": name, "event": "OutOfSync"})
                elif known["spec"] != job["spec"]:
                    self.jobs[name] = job  # updateJob: a new spec
                    self._queue.put({"job": name, "event": "OutOfSync"})
            for name in set(self.jobs) - {j["metadata"]["name"] for j in items}:
                del self.jobs[name], self.status[name]  # deleteJob

    def _watch_pods(self):
        path = f"/api/v1/namespaces/{self.ns}/pods"
        rv = None
        while not self._stop.is_set():
            try:
                if rv is None:
                    listed = self.kube.get(path)
                    self._relist(listed["items"])
                    rv = listed["metadata"]["resourceVersion"]
                for kind, obj in self.kube.watch_events(path, rv, WATCH_S):
                    if kind == "ERROR":  # too old a version: list again
                        rv = None
                        break
                    rv = obj["metadata"].get("resourceVersion", rv)
                    if kind in ("ADDED", "MODIFIED", "DELETED"):
                        self._pod_event(kind, obj)
            except (ApiError, OSError, http.client.HTTPException):  # a watch cut short: list again, as informers do
                rv = None
                self._stop.wait(POLL_S)
            except Exception as e:  # noqa: BLE001 - a bug here: kept for the test to report
                self.errors.append(f"watching pods: {e!r}")
                rv = None
                self._stop.wait(POLL_S)

    def _relist(self, items):
        """An informer's relist: what changed while nobody watched, as events."""
        seen = {}
        for pod in items:
            seen[pod["metadata"]["name"]] = pod
            job = _annotations(pod).get(JOB_NAME)
            old = self.pods.get(job, {}).get(pod["metadata"]["name"])
            if old is None:
                self._pod_event("ADDED", pod)
            elif old["metadata"]["resourceVersion"] != pod["metadata"]["resourceVersion"]:
                self._pod_event("MODIFIED", pod)
        for cached in list(self.pods.values()):
            for name, pod in list(cached.items()):
                if name not in seen:
                    self._pod_event("DELETED", pod)

    def _task_completed(self, job_name, task):
        job = self.jobs.get(job_name)
        replicas = next((t.get("replicas", 1) for t in job["spec"]["tasks"] if t["name"] == task), 0) if job else 0
        done = sum(1 for p in self.pods.get(job_name, {}).values()
                   if _annotations(p).get(TASK_SPEC) == task and _phase(p) == "Succeeded")
        return replicas > 0 and done >= replicas

    def _pod_event(self, kind, pod):
        """addPod, updatePod, deletePod: the cache first, then the event the change raises."""
        ref = next((r for r in pod["metadata"].get("ownerReferences") or []
                    if r.get("controller") and r.get("kind") == "Job" and r.get("apiVersion", "").startswith("batch.volcano.sh/")), None)
        ann = _annotations(pod)
        if ref is None or not all(k in ann for k in (JOB_NAME, JOB_VERSION, TASK_SPEC)):
            return
        job, task, name = ann[JOB_NAME], ann[TASK_SPEC], pod["metadata"]["name"]
        req = {"job": job, "uid": ref["uid"], "task": task, "pod": name, "version": int(ann[JOB_VERSION]),
               "exit_code": None}
        with self._lock:
            cache = self.pods.setdefault(job, {})
            old = cache.get(name)
            if kind == "ADDED":
                cache[name] = pod
                req["event"] = "PodPending"
            elif kind == "MODIFIED":
                if old is not None and old["metadata"]["resourceVersion"] == pod["metadata"]["resourceVersion"]:
                    return
                cache[name] = pod
                req["event"] = "OutOfSync"
                phase, was = _phase(pod), _phase(old)
                if phase == "Failed" and was != "Failed":
                    req["event"] = "PodFailed"
                    statuses = pod["status"].get("containerStatuses") or []
                    terminated = statuses[0].get("state", {}).get("terminated") if statuses else None
                    req["exit_code"] = terminated["exitCode"] if terminated else 0  # the FIRST container's
                elif phase == "Succeeded" and was != "Succeeded" and self._task_completed(job, task):
                    req["event"] = "TaskCompleted"
                elif phase in ("Running", "Pending") and was != phase:
                    req["event"] = "Pod" + phase
            else:  # DELETED: whoever deleted it, and after its containers ended
                req["event"] = "PodEvicted" if old is not None else "OutOfSync"
                cache.pop(name, None)
            if _out_of_sync(pod):
                req["event"] = "OutOfSync"
            self._queue.put(req)

    # --- the worker: policies, then the job's state decides (job_controller.go, state/) -----

    def _work(self):
        while not self._stop.is_set():
            try:
                req = self._queue.get(timeout=POLL_S)
            except queue.Empty:
                continue
            with self._lock:
                self._guard(f"handling {req}", self._handle, req)

    def _handle(self, req):
        job = self.jobs.get(req["job"])
        if job is None:
            return
        st = self.status[req["job"]]
        action = self._apply_policies(job, st, req)
        target = None
        if action == "RestartTask":
            target = {"task": req["task"]}
        elif action == "RestartPod":
            target = {"task": req["task"], "pod": req["pod"]}
        phase = st["phase"] or "Pending"
        if phase in ("Pending", "Running"):
            if action == "RestartJob":
                self._kill(job, st, RETAIN_NONE, None, self._restart)
            elif target:
                self._kill(job, st, RETAIN_NONE, target, self._restart)
            elif action == "CompleteJob":
                self._kill(job, st, RETAIN_SOFT, None, lambda s: self._to(s, "Completing"))
            elif action == "SyncJob":
                self._sync(job, st, self._pending_update if phase == "Pending" else
                           lambda s: self._running_update(job, s))
            else:
                raise NotImplementedError(f"action {action} is not modelled (tests/node/volcano.py)")
        elif phase == "Restarting":
            if action == "SyncJob":
                self._sync(job, st, lambda s: self._restarting_update(job, s))
            else:
                self._kill(job, st, RETAIN_NONE, target, lambda s: self._restarting_update(job, s))
        elif phase == "Completing":
            self._kill(job, st, RETAIN_SOFT, None, self._completing_update)
        else:  # Completed, Failed: always kill the whole job, keeping finished pods
            self._kill(job, st, RETAIN_SOFT, None, None)

    @staticmethod
    def _apply_policies(job, st, req):
        """applyPolicies: task-level policies first, then job-level; an event no policy names, an
        internal event or an outdated pod's event is SyncJob."""
        event = req["event"]
        if event in ("OutOfSync", "CommandIssued", "PodRunning"):
            return "SyncJob"
        if req.get("uid") and req["uid"] != job["metadata"]["uid"]:
            return "SyncJob"
        if req.get("version") is not None and req["version"] < st["version"]:
            return "SyncJob"
        tasks = [t for t in job["spec"]["tasks"] if t["name"] == req.get("task")]
        for policies in ([tasks[0].get("policies") or []] if tasks else []) + [job["spec"].get("policies") or []]:
            for p in policies:
                events = _policy_events(p)
                if events and (event in events or "*" in events):
                    if p.get("timeout") or event == "PodPending":
                        raise NotImplementedError(f"policy {p} (a timeout, or PodPending) is not modelled")
                    return p["action"]
                if p.get("exitCode") is not None and p["exitCode"] == req.get("exit_code"):
                    return p["action"]
        return "SyncJob"

    # --- status updates (state/*.go) ------------------------------------------------------

    @staticmethod
    def _to(st, phase):
        st["phase"] = phase
        return True

    @staticmethod
    def _restart(st):
        st["phase"] = "Restarting"
        st["retry"] += 1
        return True

    @staticmethod
    def _max_retry(job):
        return job["spec"].get("maxRetry", DEFAULT_MAX_RETRY)

    def _restarting_update(self, job, st):
        if st["retry"] >= self._max_retry(job):
            return self._to(st, "Failed")
        total = sum(t.get("replicas", 1) for t in job["spec"]["tasks"])
        if total - st["counts"].get("terminating", 0) >= st.get("minAvailable", 0):
            return self._to(st, "Pending")
        return False

    def _pending_update(self, st):
        c = st["counts"]
        if st.get("minAvailable", 0) <= c.get("running", 0) + c.get("succeeded", 0) + c.get("failed", 0):
            return self._to(st, "Running")
        return False

    def _running_update(self, job, st):
        c = st["counts"]
        replicas = sum(t.get("replicas", 1) for t in job["spec"]["tasks"])
        if replicas == 0 or c.get("succeeded", 0) + c.get("failed", 0) != replicas:
            return False
        return self._to(st, "Completed" if c.get("succeeded", 0) >= job["spec"].get("minAvailable", 0) else "Failed")

    @staticmethod
    def _completing_update(st):
        c = st["counts"]
        if c.get("terminating", 0) or c.get("pending", 0) or c.get("running", 0):
            return False
        st["phase"] = "Completed"
        return True

    def _write_status(self, job, st, before):
        """UpdateStatus, with a condition per phase change (appendJobCondition keeps the last of
        each phase); a new phase is a job update, which Volcano's updateJob turns into a request."""
        if st["phase"] != before:
            st["conditions"] = [c for c in st["conditions"] if c["status"] != st["phase"]] + \
                [{"status": st["phase"], "lastTransitionTime": _now()}]
        c = st["counts"]
        status = {"state": {"phase": st["phase"]}, "minAvailable": st.get("minAvailable", 0),
                  "version": st["version"], "retryCount": st["retry"], "conditions": st["conditions"],
                  "controlledResources": {k: st["resources"].get(k) for k in ("plugin-svc", "plugin-ray", "plugin-env")},
                  **{k: c.get(k, 0) for k in ("pending", "running", "succeeded", "failed", "terminating", "unknown")}}
        try:
            self.kube.patch(f"{GROUP}/namespaces/{self.ns}/jobs/{job['metadata']['name']}/status", {"status": status})
        except ApiError as e:
            if e.code != 404:
                raise
        if st["phase"] != before:
            self._queue.put({"job": job["metadata"]["name"], "event": "OutOfSync"})

    # --- actions (job_controller_actions.go: killPods, syncJob) ---------------------------

    def _delete_pod(self, name):
        self.kube.delete_unless_gone(f"/api/v1/namespaces/{self.ns}/pods/{name}")

    def _kill(self, job, st, retain, target, update):
        """killJob (target None) or killTarget: the pods to kill are marked out-of-sync (their
        events are then the controller's own, not PodEvicted) and deleted with their grace period;
        the plugins' objects are deleted (pluginOnJobDelete), even for a target."""
        name, before = job["metadata"]["name"], st["phase"]
        cache = self.pods.get(name, {})
        terminating, to_kill = 0, {}
        if target:
            to_kill = {n: p for n, p in cache.items() if _annotations(p).get(TASK_SPEC) == target["task"] and
                       ("pod" not in target or n == target["pod"])}
        else:
            st["version"] += 1  # a job's version is bumped only when the whole job is killed
            for n, p in cache.items():
                if p["metadata"].get("deletionTimestamp"):
                    terminating += 1
                    continue
                keep = RETAIN_SOFT if st["retry"] >= self._max_retry(job) - 1 else retain
                if _phase(p) not in keep:
                    to_kill[n] = p
        for n in to_kill:
            try:
                self.kube.request("PATCH", f"/api/v1/namespaces/{self.ns}/pods/{n}",
                                  [{"op": "add", "path": f"/metadata/annotations/{OUT_OF_SYNC.replace('/', '~1')}",
                                    "value": "true"}], content_type="application/json-patch+json")
            except ApiError as e:
                if e.code != 404:
                    raise
        for n, p in to_kill.items():
            if not p["metadata"].get("deletionTimestamp"):
                self._delete_pod(n)
            terminating += 1
        st["counts"] = {"terminating": terminating}
        if update:
            update(st)
        self._plugins_on_job_delete(job, st)
        self._write_status(job, st, before)

    def _sync(self, job, st, update):
        """syncJob: the job initiated (the plugins' objects) or its plugins updated, and its
        PodGroup made if a kill deleted it (taken as enqueued at once: no Volcano scheduler), then
        every missing pod created (whatever deleted it), out-of-sync and surplus pods deleted."""
        name, before = job["metadata"]["name"], st["phase"]
        if st["phase"] in ("", "Pending"):
            if st["phase"] == "":
                st["phase"], st["minAvailable"] = "Pending", job["spec"].get("minAvailable", 0)
            self._plugins_on_job_add(job, st)
        else:
            self._plugins_on_job_update(job)
        cache = dict(self.pods.get(name, {}))
        counts = {k: 0 for k in ("pending", "running", "succeeded", "failed", "terminating", "unknown")}
        for t in job["spec"]["tasks"]:
            for i in range(t.get("replicas", 1)):
                pod_name = f"{name}-{t['name']}-{i}"
                pod = cache.pop(pod_name, None)
                if pod is None:
                    try:
                        pod = self.kube.post(f"/api/v1/namespaces/{self.ns}/pods", self._pod(job, t, i, st))
                    except ApiError as e:
                        if e.code != 409:  # already there: its ADDED event is on its way
                            raise
                        continue
                elif pod["metadata"].get("deletionTimestamp"):
                    counts["terminating"] += 1
                    continue
                elif _out_of_sync(pod):
                    self._delete_pod(pod_name)
                phase = (_phase(pod) or "Pending").lower()
                counts[phase if phase in counts else "unknown"] += 1
        for pod_name in cache:  # beyond the replicas the spec asks for
            self._delete_pod(pod_name)
        st["counts"] = counts
        if update:
            update(st)
        self._write_status(job, st, before)

    # --- plugins: their job-level objects (svc, ray) --------------------------------------

    def _owner(self, job):
        return owner_references(job, "Job", "batch.volcano.sh/v1alpha1")

    def _plugins(self, job):
        plugins = dict(job["spec"].get("plugins") or {})
        if "ray" in plugins:
            plugins.setdefault("svc", [])  # the ray plugin brings svc with it
        return plugins

    def _svc_configmap(self, job):
        name = job["metadata"]["name"]
        cm = {"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": f"{name}-svc", "ownerReferences": self._owner(job)}, "data": svc_configmap_data(job)}
        try:
            self.kube.post(f"/api/v1/namespaces/{self.ns}/configmaps", cm)
        except ApiError as e:
            if e.code != 409:
                raise
            self.kube.patch(f"/api/v1/namespaces/{self.ns}/configmaps/{name}-svc", {"data": cm["data"]})

    def _plugins_on_job_add(self, job, st):
        name = job["metadata"]["name"]
        plugins = self._plugins(job)
        labels = {"volcano.sh/job-name": name, "volcano.sh/job-namespace": self.ns}
        if "svc" in plugins and st["resources"].get("plugin-svc") != "svc":
            self._svc_configmap(job)
            self.kube.post_unless_exists(f"/api/v1/namespaces/{self.ns}/services", {
                "apiVersion": "v1", "kind": "Service",
                "metadata": {"name": name, "ownerReferences": self._owner(job)},
                "spec": {"clusterIP": "None", "selector": labels, "publishNotReadyAddresses": False}})
            st["resources"]["plugin-svc"] = "svc"
        if "ray" in plugins and st["resources"].get("plugin-ray") != "ray":
            f = plugin_flags(plugins["ray"])
            self.kube.post_unless_exists(f"/api/v1/namespaces/{self.ns}/services", {
                "apiVersion": "v1", "kind": "Service",
                "metadata": {"name": f"{name}-head-svc", "ownerReferences": self._owner(job)},
                "spec": {"selector": dict(labels, **{"volcano.sh/task-spec": f["head"]}),
                         "ports": [{"name": n, "port": int(f[k]), "targetPort": n, "protocol": "TCP"}
                                   for n, k in (("gcs", "port"), ("dashboard", "dashboardPort"),
                                                ("client-server", "clientPort"))]}})
            st["resources"]["plugin-ray"] = "ray"

    def _plugins_on_job_update(self, job):
        if "svc" in self._plugins(job):
            self._svc_configmap(job)

    def _plugins_on_job_delete(self, job, st):
        name = job["metadata"]["name"]
        paths = []
        if st["resources"].pop("plugin-svc", None):
            paths += [f"configmaps/{name}-svc", f"services/{name}"]
        if st["resources"].pop("plugin-ray", None):
            paths.append(f"services/{name}-head-svc")
        for path in paths:
            self.kube.delete_unless_gone(f"/api/v1/namespaces/{self.ns}/{path}")

    # --- pods (createJobPod and the plugins' OnPodCreate) ---------------------------------

    def _pod(self, job, task, index, st):
        name = job["metadata"]["name"]
        plugins = self._plugins(job)
        tmpl = copy.deepcopy(task["template"])
        spec = tmpl.setdefault("spec", {})
        pod_name = f"{name}-{task['name']}-{index}"
        ids = {"volcano.sh/job-name": name, "volcano.sh/job-namespace": self.ns,
               "volcano.sh/task-spec": task["name"], "volcano.sh/task-index": str(index),
               "volcano.sh/queue-name": job["spec"].get("queue", "default")}
        meta = tmpl.setdefault("metadata", {})
        meta.update(name=pod_name, namespace=self.ns, ownerReferences=self._owner(job))
        meta.setdefault("labels", {}).update(ids)
        meta.setdefault("annotations", {}).update(ids, **{
            JOB_VERSION: str(st["version"]), "volcano.sh/job-retry-count": str(st["retry"]),
            "volcano.sh/template-uid": f"{name}-{task['name']}",
            "scheduling.k8s.io/group-name": f"{name}-{job['metadata']['uid']}"})
        # No Volcano scheduler here: the default scheduler places the pods.
        spec["schedulerName"] = "default-scheduler"
        everyone = spec.get("containers", []) + spec.get("initContainers", [])
        if "env" in plugins:
            for c in everyone:
                c.setdefault("env", []).extend([{"name": "VK_TASK_INDEX", "value": str(index)},
                                                {"name": "VC_TASK_INDEX", "value": str(index)}])
        if "svc" in plugins:
            spec.setdefault("hostname", pod_name)
            spec.setdefault("subdomain", name)
            cm = f"{name}-svc"
            keys = []
            for t in job["spec"]["tasks"]:
                k = _env_key(t["name"]).upper()
                keys += [f"VC_{k}_HOSTS", f"VC_{k}_NUM"]
            for c in everyone:
                c.setdefault("env", []).extend(
                    {"name": k, "valueFrom": {"configMapKeyRef": {"name": cm, "key": k}}} for k in keys)
                c.setdefault("volumeMounts", []).append({"name": cm, "mountPath": "/etc/volcano"})
            spec.setdefault("volumes", []).append({"name": cm, "configMap": {"name": cm}})
        if "ray" in plugins:
            self._ray_pod(job, task, spec, plugin_flags(plugins["ray"]))
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}

    def _ray_pod(self, job, task, spec, f):
        name = job["metadata"]["name"]
        heads = [t for t in job["spec"]["tasks"] if t["name"] == f["head"]]
        if not heads:
            raise RuntimeError(f"job {name} doesn't have head task {f['head']}")
        head_spec = heads[0]["template"].get("spec", {})
        head_host = head_spec.get("hostname") or f"{name}-{f['head']}-0"
        head_addr = f"{head_host}.{head_spec.get('subdomain') or name}"
        for c in spec.get("containers", []):
            if task["name"] == f["head"] and c["name"] == f["headContainer"]:
                have = {p["containerPort"] for p in c.get("ports", [])}
                for pname, key in (("gcs", "port"), ("dashboard", "dashboardPort"), ("client-server", "clientPort")):
                    if int(f[key]) not in have:
                        c.setdefault("ports", []).append({"name": pname, "containerPort": int(f[key])})
                c["command"] = ["sh", "-c", "ray start --head --block --dashboard-host=0.0.0.0 "
                                f"--port={f['port']} --dashboard-port={f['dashboardPort']} "
                                f"--ray-client-server-port={f['clientPort']}"]
            if task["name"] == f["worker"] and c["name"] == f["workerContainer"]:
                c["command"] = ["sh", "-c", f"ray start --block --address={head_addr}:{f['port']}"]
