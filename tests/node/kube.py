"""A small client for the test node's API server: HTTPS with the admin's client certificate, JSON
in and out, nothing else (no kubectl, no client library to keep in step with the server).

What the tests need and no more: get, list, create, patch, delete, the eviction subresource,
server-side waits by polling, and pod logs. Errors carry the server's Status message."""
import contextlib
import json
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request


class ApiError(RuntimeError):
    def __init__(self, method, path, code, body):
        self.code = code
        try:
            msg = json.loads(body).get("message", body)
        except ValueError:
            msg = body
        super().__init__(f"{method} {path}: HTTP {code}: {msg}")


# Where each kind of object lives in the API (the ones the tests create).
_RESOURCES = {
    ("v1", "Namespace"): ("/api/v1", "namespaces", False),
    ("v1", "Pod"): ("/api/v1", "pods", True),
    ("v1", "Service"): ("/api/v1", "services", True),
    ("v1", "ConfigMap"): ("/api/v1", "configmaps", True),
    ("v1", "Secret"): ("/api/v1", "secrets", True),
    ("v1", "ServiceAccount"): ("/api/v1", "serviceaccounts", True),
    ("v1", "Endpoints"): ("/api/v1", "endpoints", True),
    ("batch/v1", "Job"): ("/apis/batch/v1", "jobs", True),
    ("discovery.k8s.io/v1", "EndpointSlice"): ("/apis/discovery.k8s.io/v1", "endpointslices", True),
    ("rbac.authorization.k8s.io/v1", "Role"): ("/apis/rbac.authorization.k8s.io/v1", "roles", True),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): ("/apis/rbac.authorization.k8s.io/v1", "rolebindings", True),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): ("/apis/rbac.authorization.k8s.io/v1", "clusterroles", False),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"):
        ("/apis/rbac.authorization.k8s.io/v1", "clusterrolebindings", False),
    ("networking.k8s.io/v1", "NetworkPolicy"): ("/apis/networking.k8s.io/v1", "networkpolicies", True),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"):
        ("/apis/apiextensions.k8s.io/v1", "customresourcedefinitions", False),
    ("batch.volcano.sh/v1alpha1", "Job"): ("/apis/batch.volcano.sh/v1alpha1", "jobs", True),
    ("kueue.x-k8s.io/v1beta2", "ResourceFlavor"): ("/apis/kueue.x-k8s.io/v1beta2", "resourceflavors", False),
    ("kueue.x-k8s.io/v1beta2", "ClusterQueue"): ("/apis/kueue.x-k8s.io/v1beta2", "clusterqueues", False),
    ("kueue.x-k8s.io/v1beta2", "LocalQueue"): ("/apis/kueue.x-k8s.io/v1beta2", "localqueues", True),
    ("kueue.x-k8s.io/v1beta2", "WorkloadPriorityClass"):
        ("/apis/kueue.x-k8s.io/v1beta2", "workloadpriorityclasses", False),
}


def resource_path(api_version, kind, namespace=None, name=None, plural=None):
    """The URL path of a kind (and of one object of it)."""
    if (api_version, kind) in _RESOURCES:
        base, plural_known, namespaced = _RESOURCES[(api_version, kind)]
    else:
        group_path = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
        base, plural_known, namespaced = group_path, plural or kind.lower() + "s", True
    path = base
    if namespaced and namespace:
        path += f"/namespaces/{namespace}"
    path += f"/{plural or plural_known}"
    if name:
        path += f"/{name}"
    return path


class Kube:
    def __init__(self, server, ca_file, cert_file, key_file):
        self.server = server.rstrip("/")
        self.ctx = ssl.create_default_context(cafile=ca_file)
        self.ctx.load_cert_chain(cert_file, key_file)

    def request(self, method, path, body=None, content_type="application/json", timeout=30, raw=False):
        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        req = urllib.request.Request(self.server + path, data=data, method=method)
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(req, context=self.ctx, timeout=timeout) as r:
                payload = r.read()
        except urllib.error.HTTPError as e:
            raise ApiError(method, path, e.code, e.read().decode(errors="replace")) from None
        if raw:
            return payload.decode(errors="replace")
        return json.loads(payload) if payload else None

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body, **kw):
        return self.request("POST", path, body, **kw)

    def delete(self, path, body=None, **kw):
        return self.request("DELETE", path, body, **kw)

    def delete_unless_gone(self, path, body=None):
        """DELETEs path; one that is gone already (404) is what was asked for."""
        try:
            self.delete(path, body)
        except ApiError as e:
            if e.code != 404:
                raise

    def patch(self, path, body, **kw):
        return self.request("PATCH", path, body, content_type="application/merge-patch+json", **kw)

    def create(self, obj, namespace=None):
        """POSTs one manifest object; its namespace is the object's own, else NAMESPACE."""
        ns = obj.get("metadata", {}).get("namespace") or namespace
        return self.post(resource_path(obj["apiVersion"], obj["kind"], ns), obj)

    def post_unless_exists(self, path, obj):
        """POSTs obj; one that is there already (409) is left as it is, as a controller's create does."""
        try:
            self.post(path, obj)
        except ApiError as e:
            if e.code != 409:
                raise

    def grant_cluster_role(self, role, user):
        """ClusterRole ROLE made (unless there) and bound to USER, a client certificate's CN: what
        a component's Helm chart or DaemonSet grants its ServiceAccount, for a node process."""
        rbac = "/apis/rbac.authorization.k8s.io/v1"
        self.post_unless_exists(f"{rbac}/clusterroles", role)
        self.post_unless_exists(f"{rbac}/clusterrolebindings", {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": f"{user}-test"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": role["metadata"]["name"]},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]})

    def exists(self, path):
        try:
            self.get(path)
            return True
        except ApiError as e:
            if e.code == 404:
                return False
            raise

    def pod(self, namespace, name):
        return self.get(f"/api/v1/namespaces/{namespace}/pods/{name}")

    def pods(self, namespace, selector=None):
        q = "?" + urllib.parse.urlencode({"labelSelector": selector}) if selector else ""
        return self.get(f"/api/v1/namespaces/{namespace}/pods{q}")["items"]

    def log(self, namespace, pod, container=None, previous=False, timestamps=False):
        """The container's log; with TIMESTAMPS each line starts with the instant containerd
        wrote it (RFC 3339, nanoseconds)."""
        q = {"timestamps": "true"} if timestamps else {}
        if container:
            q["container"] = container
        if previous:
            q["previous"] = "true"
        qs = "?" + urllib.parse.urlencode(q) if q else ""
        return self.request("GET", f"/api/v1/namespaces/{namespace}/pods/{pod}/log{qs}", raw=True)

    def follow_log(self, namespace, pod, container, timeout):
        """The container's log, followed with timestamps until the container ends (the stream
        closes) or TIMEOUT passes: what a pod that is about to be deleted said last."""
        q = urllib.parse.urlencode({"container": container, "follow": "true", "timestamps": "true"})
        req = urllib.request.Request(f"{self.server}/api/v1/namespaces/{namespace}/pods/{pod}/log?{q}")
        lines = []
        try:
            with urllib.request.urlopen(req, context=self.ctx, timeout=timeout) as r:
                for line in r:
                    lines.append(line.decode(errors="replace"))
        except (OSError, urllib.error.HTTPError):
            pass  # the pod went with the stream: what came is kept
        return "".join(lines)

    def watch_pod(self, namespace, name, on_event, timeout):
        """Calls ON_EVENT(type, pod, arrival time.time()) for each change of one pod until it
        returns True or TIMEOUT passes."""
        q = urllib.parse.urlencode({"watch": "1", "fieldSelector": f"metadata.name={name}",
                                    "timeoutSeconds": str(int(timeout))})
        req = urllib.request.Request(f"{self.server}/api/v1/namespaces/{namespace}/pods?{q}")
        with urllib.request.urlopen(req, context=self.ctx, timeout=timeout + 10) as r:
            for line in r:
                event = json.loads(line)
                if on_event(event["type"], event["object"], time.time()):
                    return True
        return False

    def watch_events(self, path, resource_version, timeout):
        """The events of a watch on PATH (a list URL) from RESOURCE_VERSION, in the order the API
        server sends them, for at most TIMEOUT seconds: (type, object) pairs. An ERROR event (the
        version is too old: HTTP 410 in its Status) is yielded like any other."""
        q = urllib.parse.urlencode({"watch": "1", "resourceVersion": resource_version,
                                    "allowWatchBookmarks": "true", "timeoutSeconds": str(int(timeout))})
        sep = "&" if "?" in path else "?"
        req = urllib.request.Request(f"{self.server}{path}{sep}{q}")
        with urllib.request.urlopen(req, context=self.ctx, timeout=timeout + 10) as r:
            for line in r:
                event = json.loads(line)
                yield event["type"], event["object"]

    def follow_pod_until_gone(self, namespace, name, timeout):
        """Watches one pod until the API server deletes it and returns the last state it had
        (the DELETED event carries it): how a pod that ends by deletion is seen ending."""
        q = urllib.parse.urlencode({"watch": "1", "fieldSelector": f"metadata.name={name}",
                                    "timeoutSeconds": str(int(timeout))})
        req = urllib.request.Request(f"{self.server}/api/v1/namespaces/{namespace}/pods?{q}")
        last = None
        with urllib.request.urlopen(req, context=self.ctx, timeout=timeout + 10) as r:
            for line in r:
                event = json.loads(line)
                last = event["object"]
                if event["type"] == "DELETED":
                    return last
        raise TimeoutError(f"pod {namespace}/{name} not gone within {timeout} s (last: {last})")

    def evict(self, namespace, pod, grace_seconds=None):
        body = {"apiVersion": "policy/v1", "kind": "Eviction",
                "metadata": {"name": pod, "namespace": namespace}}
        if grace_seconds is not None:
            body["deleteOptions"] = {"gracePeriodSeconds": grace_seconds}
        return self.post(f"/api/v1/namespaces/{namespace}/pods/{pod}/eviction", body)

    def wait(self, what, check, timeout, interval=0.25):
        """Calls CHECK until it returns something true, and returns that; after TIMEOUT seconds
        raises, naming WHAT and the last value or error CHECK gave."""
        deadline = time.monotonic() + timeout
        last = None
        while True:
            try:
                got = check()
                if got:
                    return got
                last = got
            except (ApiError, OSError) as e:
                last = e
            if time.monotonic() > deadline:
                raise TimeoutError(f"{what}: not within {timeout} s (last: {last!r})")
            time.sleep(interval)

    def wait_pod_phase(self, namespace, name, phases, timeout):
        def check():
            p = self.pod(namespace, name)
            return p if p.get("status", {}).get("phase") in phases else None
        return self.wait(f"pod {namespace}/{name} in {phases}", check, timeout)

    def wait_pod_ready(self, namespace, name, timeout):
        def check():
            p = self.pod(namespace, name)
            conds = {c["type"]: c["status"] for c in p.get("status", {}).get("conditions", [])}
            return p if conds.get("Ready") == "True" else None
        return self.wait(f"pod {namespace}/{name} Ready", check, timeout)

    def create_namespace(self, name, labels=None):
        self.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                          "metadata": {"name": name, "labels": labels or {}}})
        # The ServiceAccount controller makes `default` shortly after; pods need it.
        self.wait(f"serviceaccount {name}/default",
                  lambda: self.exists(f"/api/v1/namespaces/{name}/serviceaccounts/default"), 60)

    def delete_namespace(self, name, timeout=120):
        self.delete_unless_gone(f"/api/v1/namespaces/{name}")
        self.wait(f"namespace {name} gone", lambda: not self.exists(f"/api/v1/namespaces/{name}"), timeout)


def owner_references(obj, kind, api_version):
    """The ownerReferences that make obj the controlling owner: deleting obj deletes what holds them."""
    return [{"apiVersion": api_version, "kind": kind, "name": obj["metadata"]["name"], "uid": obj["metadata"]["uid"],
             "controller": True, "blockOwnerDeletion": True}]


class PollingController:
    """A test controller that lists its objects every poll_s seconds from a background thread and
    reconciles each (subclasses give list_path and reconcile). An error is kept in .errors for the
    test to report, and the loop goes on, as a real controller's would."""

    poll_s = 0.5

    def __init__(self, kube, namespace):
        self.kube = kube
        self.ns = namespace
        self.errors = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"{type(self).__module__}-{namespace}", daemon=True)

    def list_path(self):
        raise NotImplementedError

    def reconcile(self, obj):
        raise NotImplementedError

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=10)

    def _loop(self):
        while not self._stop.is_set():
            try:
                for obj in self.kube.get(self.list_path())["items"]:
                    self.reconcile(obj)
            except Exception as e:  # noqa: BLE001 - kept for the test to report, the loop goes on
                self.errors.append(repr(e))
            self._stop.wait(self.poll_s)


@contextlib.contextmanager
def running(controller):
    """controller started for the with block, stopped after it whatever happened."""
    controller.start()
    try:
        yield controller
    finally:
        controller.stop()
