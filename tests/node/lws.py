"""A small stand-in for LeaderWorkerSet's controller and pod webhook (sigs.k8s.io/lws v0.10), for the
real node: LeaderWorkerSet's controller is not on the Go module proxy, so it cannot be built here.
For each leaderworkerset.x-k8s.io/v1 LeaderWorkerSet the API server has validated against
LeaderWorkerSet's own CRD, it makes the real objects LeaderWorkerSet's controllers, its webhook and
the StatefulSet controller under them would (tests/fixtures/README.md); the scheduler, kubelet,
CoreDNS and everything downstream are the real thing.

What it does:
- The headless Service L (clusterIP None, selector leaderworkerset.sigs.k8s.io/name, not-ready
  addresses published), owned by the LeaderWorkerSet.
- Per group g: the leader pod L-g (leaderTemplate, else workerTemplate) and, once it exists and
  is not being deleted (LeaderCreated; with LeaderReady once it is Ready), the workers L-g-1 ..
  L-g-(size-1) (workerTemplate), owned by their leader pod as LeaderWorkerSet's worker StatefulSet
  is. Each pod as the StatefulSet controller names it (hostname = name, subdomain L, restartPolicy
  Always, statefulset.kubernetes.io/pod-name and apps.kubernetes.io/pod-index) and as the webhook
  labels it (name, group-index, group-key, worker-index, template-revision-hash; annotations size
  and, on workers, leader-name), with LWS_LEADER_ADDRESS, LWS_GROUP_SIZE and LWS_WORKER_INDEX
  first in every container and init container (replacing any of the same name).
- RecreateGroupOnPodRestart (the default): when a container of a group's pod has restarted, or a
  pod of the group is being deleted, the leader is deleted with foreground propagation (its
  workers go first) and the group is made again under the same names.

What it leaves out: the StatefulSets themselves (pods are made directly, so no rolling updates,
revisions, partitions, scaling of a running set, volumeClaimTemplates), UniquePerReplica
subdomains, subgroups, exclusive placement, TPU variables, the Volcano scheduler provider, the
RecreateGroupAfterStart and None policies, and status."""
import copy
import hashlib

from kube import PollingController, owner_references

GROUP = "/apis/leaderworkerset.x-k8s.io/v1"
PREFIX = "leaderworkerset.sigs.k8s.io/"
LWS_VARS = ("LWS_LEADER_ADDRESS", "LWS_GROUP_SIZE", "LWS_WORKER_INDEX")


def group_key(namespace, leader):
    return hashlib.sha1(f"{namespace}/{leader}".encode()).hexdigest()


class Controller(PollingController):
    """Reconciles the LeaderWorkerSets of one namespace."""

    def __init__(self, kube, namespace):
        super().__init__(kube, namespace)
        self.recreated = []  # (group leader, reason) for each group made again

    def list_path(self):
        return f"{GROUP}/namespaces/{self.ns}/leaderworkersets"

    def reconcile(self, lws):
        self._reconcile(lws)

    @staticmethod
    def _owner(obj, kind, api_version):
        return owner_references(obj, kind, api_version)

    def _service(self, lws):
        name = lws["metadata"]["name"]
        self.kube.post_unless_exists(f"/api/v1/namespaces/{self.ns}/services", {
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "labels": {PREFIX + "name": name},
                         "ownerReferences": self._owner(lws, "LeaderWorkerSet", "leaderworkerset.x-k8s.io/v1")},
            "spec": {"clusterIP": "None", "selector": {PREFIX + "name": name}, "publishNotReadyAddresses": True}})

    def _pod(self, lws, group, worker, owner):
        """Pod L-g (worker 0) or L-g-w, as the StatefulSet controller and LeaderWorkerSet's webhook
        make it."""
        name = lws["metadata"]["name"]
        lwt = lws["spec"]["leaderWorkerTemplate"]
        size = lwt.get("size", 1)
        leader = f"{name}-{group}"
        pod_name = leader if worker == 0 else f"{leader}-{worker}"
        tmpl = copy.deepcopy((lwt.get("leaderTemplate") if worker == 0 else None) or lwt["workerTemplate"])
        meta, spec = tmpl.setdefault("metadata", {}), tmpl["spec"]
        labels = meta.setdefault("labels", {})
        labels.update({PREFIX + "name": name, PREFIX + "group-index": str(group), PREFIX + "worker-index": str(worker),
                       PREFIX + "group-key": group_key(self.ns, leader),
                       PREFIX + "template-revision-hash": lws["metadata"]["uid"][:8],
                       "statefulset.kubernetes.io/pod-name": pod_name,
                       "apps.kubernetes.io/pod-index": str(group if worker == 0 else worker)})
        annotations = meta.setdefault("annotations", {})
        annotations[PREFIX + "size"] = str(size)
        if worker:
            annotations[PREFIX + "leader-name"] = leader
        meta.update(name=pod_name, namespace=self.ns, ownerReferences=owner)
        spec.update(hostname=pod_name, subdomain=name, restartPolicy="Always")
        values = {"LWS_LEADER_ADDRESS": f"{leader}.{name}.{self.ns}", "LWS_GROUP_SIZE": str(size),
                  "LWS_WORKER_INDEX": str(worker)}
        for c in spec.get("containers", []) + spec.get("initContainers", []):
            c["env"] = [{"name": k, "value": values[k]} for k in LWS_VARS] + \
                [e for e in c.get("env", []) if e["name"] not in LWS_VARS]
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}

    def _group_pods(self, lws, group):
        sel = f"{PREFIX}name={lws['metadata']['name']},{PREFIX}group-index={group}"
        return {p["metadata"]["name"]: p for p in self.kube.pods(self.ns, sel)}

    @staticmethod
    def _restarted(pod):
        if pod["status"].get("phase") not in ("Running", "Pending"):
            return False
        statuses = pod["status"].get("containerStatuses", []) + pod["status"].get("initContainerStatuses", [])
        return any(s.get("restartCount", 0) > 0 for s in statuses)

    def _reconcile(self, lws):
        name = lws["metadata"]["name"]
        lwt = lws["spec"]["leaderWorkerTemplate"]
        size = lwt.get("size", 1)
        policy = lwt.get("restartPolicy") or "RecreateGroupOnPodRestart"
        self._service(lws)
        for group in range(lws["spec"].get("replicas", 1)):
            leader_name = f"{name}-{group}"
            pods = self._group_pods(lws, group)
            leader = pods.get(leader_name)
            if leader is None:
                if not pods:  # the old group is gone: make it again (the leader StatefulSet's job)
                    self.kube.post(f"/api/v1/namespaces/{self.ns}/pods", self._pod(
                        lws, group, 0, self._owner(lws, "LeaderWorkerSet", "leaderworkerset.x-k8s.io/v1")))
                continue
            if leader["metadata"].get("deletionTimestamp"):
                continue
            if policy == "RecreateGroupOnPodRestart":
                why = [n for n, p in pods.items() if self._restarted(p) or p["metadata"].get("deletionTimestamp")]
                if why:
                    self.recreated.append((leader_name, why))
                    self.kube.delete_unless_gone(f"/api/v1/namespaces/{self.ns}/pods/{leader_name}",
                                                 {"kind": "DeleteOptions", "apiVersion": "v1",
                                                  "propagationPolicy": "Foreground"})
                    continue
            if lws["spec"].get("startupPolicy") == "LeaderReady" and not any(
                    c["type"] == "Ready" and c["status"] == "True" for c in leader["status"].get("conditions", [])):
                continue
            for worker in range(1, size):
                if f"{leader_name}-{worker}" not in pods:
                    self.kube.post_unless_exists(f"/api/v1/namespaces/{self.ns}/pods",
                                 self._pod(lws, group, worker, self._owner(leader, "Pod", "v1")))
