"""A small stand-in for JobSet's controller (sigs.k8s.io/jobset v0.12), for the real node: JobSet's
controller is not on the Go module proxy, so it cannot be built here. For each
jobset.x-k8s.io/v1alpha2 JobSet the API server has validated against JobSet's own CRD, it applies
JobSet's webhook defaults and makes the real objects JobSet's controller would
(tests/fixtures/README.md): the Jobs, whose pods the real Job controller makes (hostnames,
JOB_COMPLETION_INDEX), and the headless Service; scheduler, kubelet, downward API volumes and CoreDNS
are the real thing.

What it does:
- Defaults as JobSet's webhook sets them: completionMode Indexed and pod restartPolicy OnFailure
  unless set, enableDNSHostnames and publishNotReadyAddresses true, successPolicy All.
- The headless Service <subdomain> (spec.network.subdomain, default the JobSet's name; clusterIP
  None, selector jobset.sigs.k8s.io/jobset-name, publishNotReadyAddresses as set), owned by the
  JobSet, when enableDNSHostnames.
- Per replicated job R and index j < replicas, the Job JS-R-j, owned by the JobSet, with JobSet's
  labels and annotations on it and on its pod template (jobset-name, jobset-uid,
  replicatedjob-name, replicatedjob-replicas, global-replicas, job-index, job-global-index,
  job-key, restart-attempt, group-name, group-replicas, job-group-index, coordinator when
  spec.coordinator is set), and the template's subdomain.
- The end: when the success policy holds (All, or Any, over targetReplicatedJobs) the JobSet gets
  the Completed condition and terminalState, and the Jobs still active are deleted (foreground);
  a failed Job without a failurePolicy makes it Failed the same way.

What it leaves out: failurePolicy restarts (maxRestarts, rules), startupPolicy and dependsOn,
suspend, exclusive placement (its pod webhook), ttlSecondsAfterFinished, volumeClaimPolicies,
managedBy, in-place restarts, elastic scaling, and every status field but conditions and
terminalState."""
import copy
import datetime
import hashlib
import urllib.parse

from kube import PollingController, owner_references

GROUP = "/apis/jobset.x-k8s.io/v1alpha2"
PREFIX = "jobset.sigs.k8s.io/"


def job_key(namespace, job):
    return hashlib.sha1(f"{namespace}/{job}".encode()).hexdigest()


def with_defaults(js):
    """What JobSet's mutating webhook would have set before the object was stored."""
    js = copy.deepcopy(js)
    spec = js["spec"]
    spec.setdefault("successPolicy", {"operator": "All"})
    network = spec.setdefault("network", {})
    network.setdefault("enableDNSHostnames", True)
    network.setdefault("publishNotReadyAddresses", True)
    for rjob in spec["replicatedJobs"]:
        jspec = rjob["template"]["spec"]
        jspec.setdefault("completionMode", "Indexed")
        jspec["template"].setdefault("spec", {}).setdefault("restartPolicy", "OnFailure")
    return js


def condition(obj, kind):
    return any(c["type"] == kind and c["status"] == "True" for c in obj.get("status", {}).get("conditions") or [])


class Controller(PollingController):
    """Reconciles the JobSets of one namespace."""

    def list_path(self):
        return f"{GROUP}/namespaces/{self.ns}/jobsets"

    def reconcile(self, js):
        self._reconcile(with_defaults(js))

    @staticmethod
    def _owner(js):
        return owner_references(js, "JobSet", "jobset.x-k8s.io/v1alpha2")

    @staticmethod
    def subdomain(js):
        return js["spec"]["network"].get("subdomain") or js["metadata"]["name"]

    def _service(self, js):
        if not js["spec"]["network"]["enableDNSHostnames"]:
            return
        self.kube.post_unless_exists(f"/api/v1/namespaces/{self.ns}/services", {
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": self.subdomain(js), "ownerReferences": self._owner(js)},
            "spec": {"clusterIP": "None", "selector": {PREFIX + "jobset-name": js["metadata"]["name"]},
                     "publishNotReadyAddresses": js["spec"]["network"]["publishNotReadyAddresses"]}})

    def _ids(self, js, rjob, j):
        """The labels (and, the same, annotations) JobSet puts on a Job and its pod template."""
        name, rjobs = js["metadata"]["name"], js["spec"]["replicatedJobs"]
        job = f"{name}-{rjob['name']}-{j}"
        before = sum(r.get("replicas", 1) for r in rjobs[:rjobs.index(rjob)])
        group = rjob.get("groupName", "default")
        in_group = [r for r in rjobs if r.get("groupName", "default") == group]
        before_in_group = sum(r.get("replicas", 1) for r in in_group[:in_group.index(rjob)])
        ids = {PREFIX + "jobset-name": name, PREFIX + "jobset-uid": js["metadata"]["uid"],
               PREFIX + "replicatedjob-name": rjob["name"],
               PREFIX + "restart-attempt": str(js.get("status", {}).get("restarts", 0)),
               PREFIX + "replicatedjob-replicas": str(rjob.get("replicas", 1)),
               PREFIX + "global-replicas": str(sum(r.get("replicas", 1) for r in rjobs)),
               PREFIX + "job-index": str(j), PREFIX + "job-key": job_key(self.ns, job),
               PREFIX + "job-global-index": str(before + j), PREFIX + "group-name": group,
               PREFIX + "group-replicas": str(sum(r.get("replicas", 1) for r in in_group)),
               PREFIX + "job-group-index": str(before_in_group + j)}
        coord = js["spec"].get("coordinator")
        if coord:
            ids[PREFIX + "coordinator"] = (f"{name}-{coord['replicatedJob']}-{coord.get('jobIndex', 0)}-"
                                           f"{coord.get('podIndex', 0)}.{self.subdomain(js)}")
        return ids

    def _job(self, js, rjob, j):
        name = f"{js['metadata']['name']}-{rjob['name']}-{j}"
        tmpl = copy.deepcopy(rjob["template"])
        meta, spec = tmpl.setdefault("metadata", {}), tmpl["spec"]
        ids = self._ids(js, rjob, j)
        for obj in (meta, spec["template"].setdefault("metadata", {})):
            obj.setdefault("labels", {}).update(ids)
            obj.setdefault("annotations", {}).update(ids)
        meta.update(name=name, namespace=self.ns, ownerReferences=self._owner(js))
        if js["spec"]["network"]["enableDNSHostnames"]:
            spec["template"]["spec"]["subdomain"] = self.subdomain(js)
        spec["suspend"] = False
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": spec}

    def _finish(self, js, jobs, kind, reason):
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        for job in jobs.values():
            if not (condition(job, "Complete") or condition(job, "Failed")) and \
                    not job["metadata"].get("deletionTimestamp"):
                self.kube.delete_unless_gone(f"/apis/batch/v1/namespaces/{self.ns}/jobs/{job['metadata']['name']}",
                                             {"kind": "DeleteOptions", "apiVersion": "v1",
                                              "propagationPolicy": "Foreground"})
        self.kube.patch(f"{GROUP}/namespaces/{self.ns}/jobsets/{js['metadata']['name']}/status", {"status": {
            "terminalState": kind, "conditions": [{"type": kind, "status": "True", "reason": reason,
                                                   "message": f"jobset {kind.lower()}",
                                                   "lastTransitionTime": now}]}})

    def _reconcile(self, js):
        if condition(js, "Completed") or condition(js, "Failed"):
            return
        sel = urllib.parse.urlencode({"labelSelector": f"{PREFIX}jobset-name={js['metadata']['name']}"})
        jobs = {j["metadata"]["name"]: j for j in self.kube.get(f"/apis/batch/v1/namespaces/{self.ns}/jobs?{sel}")["items"]}
        if any(condition(j, "Failed") for j in jobs.values()) and not js["spec"].get("failurePolicy"):
            self._finish(js, jobs, "Failed", "FailedJobs")
            return
        policy = js["spec"]["successPolicy"]
        targets = policy.get("targetReplicatedJobs") or [r["name"] for r in js["spec"]["replicatedJobs"]]
        chosen = [j for j in jobs.values() if j["metadata"]["labels"][PREFIX + "replicatedjob-name"] in targets]
        wanted = sum(r.get("replicas", 1) for r in js["spec"]["replicatedJobs"] if r["name"] in targets)
        done = [j for j in chosen if condition(j, "Complete")]
        if (policy["operator"] == "Any" and done) or (policy["operator"] == "All" and len(done) == wanted):
            self._finish(js, jobs, "Completed", "AllJobsCompleted")
            return
        self._service(js)
        for rjob in js["spec"]["replicatedJobs"]:
            for j in range(rjob.get("replicas", 1)):
                if f"{js['metadata']['name']}-{rjob['name']}-{j}" not in jobs:
                    self.kube.post_unless_exists(f"/apis/batch/v1/namespaces/{self.ns}/jobs", self._job(js, rjob, j))
