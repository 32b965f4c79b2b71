"""A small stand-in for Volcano's job controller and its svc, env and ray plugins, for the real
node: Volcano's controllers cannot be built here (the Go module proxy refuses volcano.sh/volcano).
It creates, for a batch.volcano.sh/v1alpha1 Job that the API server has validated against
Volcano's own CRD, the real objects Volcano would (shared/facts/volcano.md, and Volcano's
pkg/controllers/job/plugins/{svc,env,distributed-framework/ray}); everything downstream of them
(scheduling, kubelet, DNS, ConfigMap mounts, probes, hooks, eviction) is the real thing.

What it does:
- Pods `J-T-i` with Volcano's labels and annotations, owned by the Job; svc: hostname and
  subdomain (unless the template sets them), the headless Service `J`, the ConfigMap `J-svc`
  (`<t>.host`, `VC_<K>_HOSTS`, `VC_<K>_NUM`) mounted at /etc/volcano in every container and
  init container, and `VC_<K>_HOSTS`/`VC_<K>_NUM` as configMapKeyRef env; env: `VK_TASK_INDEX`
  and `VC_TASK_INDEX`; ray: the command overwrite of the `--headContainer`/`--workerContainer`
  containers, the head's named ports, the ClusterIP Service `J-head-svc`.
- Policies, task-level before job-level: `PodEvicted -> RestartJob` (a job pod deleted by
  anyone but this controller: every pod deleted and re-created under its name, the job version
  bumped, `J`, `J-svc` and `J-head-svc` made anew; maxRetry, default 3, then Failed; raised
  once the pod is gone, as Volcano's DELETE event is) and
  `TaskCompleted -> CompleteJob` (every replica of the task Succeeded: the pods still running
  are deleted with their grace period, then Completed). `status.state.phase` follows.

What it leaves out: the Volcano scheduler (pods get the default scheduler, so there is no gang
scheduling: all pods are created at once and minAvailable only decides Running), queues and
PodGroups, the NetworkPolicy the svc plugin makes (this node's CNI enforces none), PodFailed
and other events and actions our manifests do not use, and scaling a running job."""
import copy
import threading

from kube import ApiError

GROUP = "/apis/batch.volcano.sh/v1alpha1"
POLL_S = 0.5
DEFAULT_MAX_RETRY = 3
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


class Controller:
    """Reconciles the Volcano Jobs of one namespace from a background thread."""

    def __init__(self, kube, namespace):
        self.kube = kube
        self.ns = namespace
        self.jobs = {}  # name -> {"version", "retry", "phase", "deleting": set, "completing": bool}
        self.errors = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"volcano-{namespace}", daemon=True)

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=10)

    def _loop(self):
        while not self._stop.is_set():
            try:
                for job in self.kube.get(f"{GROUP}/namespaces/{self.ns}/jobs")["items"]:
                    self._reconcile(job)
            except Exception as e:  # noqa: BLE001 - kept for the test to report, the loop goes on
                self.errors.append(repr(e))
            self._stop.wait(POLL_S)

    # --- objects -------------------------------------------------------------------------

    def _owner(self, job):
        return [{"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": job["metadata"]["name"],
                 "uid": job["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]

    def _plugins(self, job):
        plugins = dict(job["spec"].get("plugins") or {})
        if "ray" in plugins:
            plugins.setdefault("svc", [])  # the ray plugin brings svc with it
        return plugins

    def _create(self, path, obj):
        try:
            self.kube.post(path, obj)
        except ApiError as e:
            if e.code != 409:
                raise

    def _job_objects(self, job):
        name = job["metadata"]["name"]
        plugins = self._plugins(job)
        labels = {"volcano.sh/job-name": name, "volcano.sh/job-namespace": self.ns}
        if "svc" in plugins:
            self._create(f"/api/v1/namespaces/{self.ns}/services", {
                "apiVersion": "v1", "kind": "Service",
                "metadata": {"name": name, "ownerReferences": self._owner(job)},
                "spec": {"clusterIP": "None", "selector": labels, "publishNotReadyAddresses": False}})
            self._create(f"/api/v1/namespaces/{self.ns}/configmaps", {
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": f"{name}-svc", "ownerReferences": self._owner(job)},
                "data": svc_configmap_data(job)})
        if "ray" in plugins:
            f = plugin_flags(plugins["ray"])
            self._create(f"/api/v1/namespaces/{self.ns}/services", {
                "apiVersion": "v1", "kind": "Service",
                "metadata": {"name": f"{name}-head-svc", "ownerReferences": self._owner(job)},
                "spec": {"selector": dict(labels, **{"volcano.sh/task-spec": f["head"]}),
                         "ports": [{"name": n, "port": int(f[k]), "targetPort": n, "protocol": "TCP"}
                                   for n, k in (("gcs", "port"), ("dashboard", "dashboardPort"),
                                                ("client-server", "clientPort"))]}})

    def _delete_job_objects(self, job):
        name = job["metadata"]["name"]
        for path in (f"services/{name}", f"configmaps/{name}-svc", f"services/{name}-head-svc"):
            try:
                self.kube.delete(f"/api/v1/namespaces/{self.ns}/{path}")
            except ApiError as e:
                if e.code != 404:
                    raise

    def _pod(self, job, task, index, version):
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
            "volcano.sh/job-version": str(version), "volcano.sh/template-uid": f"{name}-{task['name']}",
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

    # --- the job's life ------------------------------------------------------------------

    def _set_phase(self, job, state, phase):
        if state.get("phase") == phase:
            return
        state["phase"] = phase
        status = {"state": {"phase": phase}, "version": state["version"], "retryCount": state["retry"]}
        try:
            self.kube.patch(f"{GROUP}/namespaces/{self.ns}/jobs/{job['metadata']['name']}/status",
                            {"status": status})
        except ApiError as e:
            if e.code != 404:
                raise

    def _policy(self, job, task_name, event):
        for t in job["spec"]["tasks"]:
            if t["name"] == task_name:
                for p in t.get("policies") or []:
                    if p.get("event") == event:
                        return p.get("action")
        for p in job["spec"].get("policies") or []:
            if p.get("event") == event:
                return p.get("action")
        return None

    def _pods(self, job):
        sel = f"volcano.sh/job-name={job['metadata']['name']}"
        return {p["metadata"]["name"]: p for p in self.kube.pods(self.ns, sel)}

    def _kill(self, state, pods, keep_finished):
        for name, p in pods.items():
            if keep_finished and p["status"].get("phase") in ("Succeeded", "Failed"):
                continue
            if p["metadata"].get("deletionTimestamp"):
                continue
            state["deleting"].add(name)
            try:
                self.kube.delete(f"/api/v1/namespaces/{self.ns}/pods/{name}")
            except ApiError as e:
                if e.code != 404:
                    raise

    def _reconcile(self, job):
        name = job["metadata"]["name"]
        state = self.jobs.get(name)
        if state is None or state["uid"] != job["metadata"]["uid"]:
            state = self.jobs[name] = {"uid": job["metadata"]["uid"], "version": 0, "retry": 0, "phase": None,
                                       "deleting": set(), "created": set(), "action": None}
            self._job_objects(job)
            self._set_phase(job, state, "Pending")
        if state["phase"] in ("Completed", "Failed"):
            return
        pods = self._pods(job)

        if state["action"] in ("RestartJob", "CompleteJob"):
            if any(p["status"].get("phase") not in ("Succeeded", "Failed") for p in pods.values()
                   if state["action"] == "CompleteJob") or (state["action"] == "RestartJob" and pods):
                return  # still ending
            if state["action"] == "CompleteJob":
                self._set_phase(job, state, "Completed")
                return
            state.update(action=None, deleting=set(), created=set())
            state["version"] += 1
            self._job_objects(job)

        # PodEvicted: a pod this controller made and did not delete is gone. Volcano raises it on
        # the pod's DELETE event, which comes once the pod has terminated, not when the deletion
        # starts: the evicted pod's grace period (and its drain) runs before the restart.
        for pod_name in sorted(state["created"]):
            if pod_name not in pods and pod_name not in state["deleting"]:
                task = pod_name[len(name) + 1:].rsplit("-", 1)[0]
                if self._policy(job, task, "PodEvicted") == "RestartJob":
                    if state["retry"] >= job["spec"].get("maxRetry", DEFAULT_MAX_RETRY):
                        self._kill(state, pods, keep_finished=False)
                        self._set_phase(job, state, "Failed")
                        return
                    state["retry"] += 1
                    state["action"] = "RestartJob"
                    self._set_phase(job, state, "Restarting")
                    self._kill(state, pods, keep_finished=False)
                    self._delete_job_objects(job)
                    return
                state["deleting"].add(pod_name)  # no policy: the pod is simply gone

        # TaskCompleted: every replica of a task Succeeded.
        for t in job["spec"]["tasks"]:
            names = [f"{name}-{t['name']}-{i}" for i in range(t.get("replicas", 1))]
            if names and all(pods.get(n, {}).get("status", {}).get("phase") == "Succeeded" for n in names):
                if self._policy(job, t["name"], "TaskCompleted") == "CompleteJob":
                    state["action"] = "CompleteJob"
                    self._set_phase(job, state, "Completing")
                    self._kill(state, pods, keep_finished=True)
                    return

        # Create what is missing (the first time, and after a restart).
        for t in job["spec"]["tasks"]:
            for i in range(t.get("replicas", 1)):
                pod_name = f"{name}-{t['name']}-{i}"
                if pod_name not in pods and pod_name not in state["created"]:
                    self.kube.post(f"/api/v1/namespaces/{self.ns}/pods", self._pod(job, t, i, state["version"]))
                    state["created"].add(pod_name)
        running = sum(1 for p in pods.values() if p["status"].get("phase") in ("Running", "Succeeded"))
        if running >= job["spec"].get("minAvailable", 0) and pods:
            self._set_phase(job, state, "Running")
