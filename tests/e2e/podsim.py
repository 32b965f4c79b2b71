"""A pod simulator: turns a Volcano Job manifest (or a Kubernetes Indexed Job, a LeaderWorkerSet or a
JobSet) into "pods" on this machine, as faithfully as shared/facts/volcano.md and
tests/fixtures/README.md describe them, so that rayboot and real Ray run as they would in a
cluster.

- The cluster: one network namespace holding a bridge and dnsmasq (the cluster DNS for
  cluster.local). It has no route anywhere, so nothing a pod sends can leave the machine.
- A pod: its own network namespace (a veth on the bridge, a private address, a default route to
  the bridge so that Ray can find its node IP), UTS namespace (its hostname), PID namespace (the
  entrypoint is PID 1) and mount namespace (a private /etc with the kubelet's hosts and resolv.conf and the svc plugin's
  /etc/volcano ConfigMap, a private /tmp and /dev/shm), and exactly the environment the
  kubelet and Volcano's plugins give it.
- DNS: a pod's A record exists only while the pod is Ready (a headless Service without
  publishNotReadyAddresses), or, for LeaderWorkerSet's and JobSet's Services (which publish
  not-ready addresses), while it runs; names that do not exist answer NXDOMAIN.
- Hosts outside any pod (`Hosts`: a VM, `docker run`, a hostNetwork pod): the same namespaces,
  but no Kubernetes variables, no DNS name, no HOSTNAME variable (the program reads the UTS
  hostname), and an /etc/hosts of loopback lines only.
- Operations: create the whole job at once (gang scheduling), mark Ready, delete with a grace
  period (SIGTERM to PID 1, SIGKILL at the end), re-create under the same name with a new IP,
  exec inside a pod, drop packets, stop and restart DNS. Teardown kills by PID and deletes every
  namespace it made; nothing is ever killed by name.

Which tier covers what: the real node (tests/node/: a real API server, scheduler, Job controller,
kubelet, containerd, CoreDNS and kube-proxy, our images) shows what Kubernetes itself does with
what we ship: every k8s/ manifest to its result under Pod Security "restricted", eviction and
deletion through the API with the kubelet's preStop and the sidecar's reason, readiness gating
DNS, cgroup limits. This simulator stays for what a real node cannot do on demand: the fault
matrix (tests/FAULTS.md), DNS that misbehaves, dropped packets, a head replaced by another
cluster, signals at exact moments, and fast runs of many scenarios.
"""
import json
import os
import pathlib
import random
import shutil
import signal
import subprocess
import sys
import threading
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from kubelet import hosts_file, resolv_conf, svc_configmap, svc_env, write_configmap  # noqa: E402

DOMAIN = "cluster.local"
BRIDGE_MAC = "02:72:62:00:00:01"  # locally administered; each cluster is its own network
K8S_ENV = {
    "KUBERNETES_SERVICE_HOST": "10.96.0.1",
    "KUBERNETES_SERVICE_PORT": "443",
    "KUBERNETES_SERVICE_PORT_HTTPS": "443",
    "KUBERNETES_PORT": "tcp://10.96.0.1:443",
    # Each pod's own home, as each container has one: Ray 2.60 keeps a token in ~/.ray/auth_token
    # (a local `ray.init()` writes it) and turns token authentication on for every later `ray
    # start --head` that finds it. Sharing the machine's /root let one pod's stray `ray.init()`
    # switch every later cluster on the machine to token mode. /tmp is private to the pod.
    "HOME": "/tmp",
}


class SimulatorUnavailable(RuntimeError):
    """This machine cannot run the simulator; the message says what is missing."""


def run(*argv, check=True, timeout=30):
    """Runs a setup command (argv only, never a shell); its errors carry its stderr."""
    r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {r.returncode}: {r.stderr.strip()}")
    return r


def check_host():
    if os.geteuid() != 0:
        raise SimulatorUnavailable("the pod simulator needs root (network, PID and mount namespaces)")
    for tool in ("ip", "unshare", "nsenter", "mount"):
        if not shutil.which(tool):
            raise SimulatorUnavailable(f"the pod simulator needs `{tool}` (util-linux / iproute2)")
    if not shutil.which("dnsmasq") and not os.path.exists("/usr/sbin/dnsmasq"):
        raise SimulatorUnavailable("the pod simulator needs dnsmasq (apt-get install dnsmasq-base)")
    name = f"rbcheck{os.getpid()}"
    r = run("ip", "netns", "add", name, check=False)
    if r.returncode != 0:
        raise SimulatorUnavailable(f"cannot create network namespaces: {r.stderr.strip()}")
    run("ip", "netns", "del", name, check=False)


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_until(predicate, timeout, what, interval=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout} s waiting for {what}")


class Cluster:
    """The cluster network and DNS, and every pod created in it."""

    def __init__(self, workdir: pathlib.Path, venv: pathlib.Path, binaries: dict, net=None):
        """NET: (a, b) for the network 10.a.b.0/24 (a page's own example addresses); else one
        picked at random."""
        check_host()
        self.dir = workdir
        self.dir.mkdir(parents=True, exist_ok=True)
        self.venv = venv
        self.binaries = binaries
        self.prefix = f"rb{os.getpid() % 100000}{random.randrange(16 ** 3):03x}"
        self.net = net or (random.randrange(200, 250), random.randrange(0, 256))
        self.ns = f"{self.prefix}c"
        self.bridge_ip = self.address(1)
        self.pods = []
        self.netns_made = []
        self.dns_proc = None
        self.dns_hosts = self.dir / "dns-hosts"
        self.dns_log = self.dir / "dns.log"
        self.dns_lock = threading.Lock()  # pods deleted at once from threads each write the file
        self.next_host = 10
        self._setup_network()
        self.dns_start()

    def address(self, host: int) -> str:
        return f"10.{self.net[0]}.{self.net[1]}.{host}"

    def _netns(self, name):
        run("ip", "netns", "add", name)
        self.netns_made.append(name)
        run("ip", "-n", name, "link", "set", "lo", "up")

    def _setup_network(self):
        self._netns(self.ns)
        # A fixed MAC, as CNI's bridge plugin sets one: a bridge left to itself takes the lowest MAC
        # among its ports and changes it as pods come and go, and a pod that had already resolved
        # the bridge's address then sends its DNS queries into the void until the kernel
        # re-probes that ARP entry: tens of seconds (a worker joined 35 s and 52 s late).
        run("ip", "-n", self.ns, "link", "add", "br0", "address", BRIDGE_MAC, "type", "bridge")
        run("ip", "-n", self.ns, "addr", "add", f"{self.bridge_ip}/24", "dev", "br0")
        run("ip", "-n", self.ns, "link", "set", "br0", "up")

    # DNS -------------------------------------------------------------------------------------
    def dns_start(self):
        """dnsmasq as the cluster DNS: authoritative for cluster.local, nothing forwarded."""
        self._write_dns()
        self.dns_proc = subprocess.Popen(
            ["ip", "netns", "exec", self.ns, shutil.which("dnsmasq") or "/usr/sbin/dnsmasq",
             "--keep-in-foreground", "--no-resolv", "--no-hosts", "--user=root",
             f"--addn-hosts={self.dns_hosts}", f"--listen-address={self.bridge_ip}", "--bind-interfaces",
             f"--local=/{DOMAIN}/", "--domain-needed", "--no-negcache", "--cache-size=0",
             "--log-queries", f"--log-facility={self.dns_log}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_until(lambda: self.dns_log.exists() and "started" in self.dns_log.read_text(), 10, "dnsmasq to start")

    def dns_stop(self):
        if self.dns_proc and self.dns_proc.poll() is None:
            self.dns_proc.terminate()
            self.dns_proc.wait(timeout=10)
        self.dns_proc = None

    def _write_dns(self):
        lines = [f"{p.ip}\t{p.fqdn}\n" for p in self.pods
                 if p.fqdn and (p.ready or p.job.publish_not_ready) and p.running()]
        # A manifest's own headless Services that publish not-ready addresses (Job.add_service).
        lines += [f"{p.ip}\t{name}.{p.job.namespace}.svc.{DOMAIN}\n" for p in self.pods if p.running()
                  for name, task in getattr(p.job, "services", {}).items() if task == p.task]
        with self.dns_lock:
            tmp = self.dns_hosts.with_suffix(".tmp")
            tmp.write_text("".join(lines))
            os.rename(tmp, self.dns_hosts)
            if self.dns_proc and self.dns_proc.poll() is None:
                self.dns_proc.send_signal(signal.SIGHUP)  # re-reads --addn-hosts

    def dns_queries(self, name_part=""):
        """Queries dnsmasq logged so far (optionally only those naming name_part)."""
        if not self.dns_log.exists():
            return []
        return [line for line in self.dns_log.read_text().splitlines() if "query[" in line and name_part in line]

    # Pods ------------------------------------------------------------------------------------
    def job(self, manifest: dict) -> "Job":
        """A Volcano Job, a Kubernetes Indexed Job (batch/v1, completionMode: Indexed), a
        LeaderWorkerSet or a JobSet."""
        if manifest["apiVersion"] == "batch/v1":
            return IndexedJob(self, manifest)
        if manifest["apiVersion"] == "leaderworkerset.x-k8s.io/v1":
            return LeaderWorkerSet(self, manifest)
        if manifest["apiVersion"] == "jobset.x-k8s.io/v1alpha2":
            return JobSet(self, manifest)
        return Job(self, manifest)

    def hosts(self, machines: dict) -> "Hosts":
        """Machines outside Kubernetes, started with start() like a job's pods; see Hosts."""
        return Hosts(self, machines)

    def _new_pod_network(self):
        host = self.next_host
        self.next_host += 1
        ns = f"{self.prefix}p{host}"
        self._netns(ns)
        veth = f"v{self.prefix[-5:]}{host}"[:15]
        run("ip", "-n", self.ns, "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns)
        run("ip", "-n", self.ns, "link", "set", veth, "master", "br0", "up")
        ip = self.address(host)
        run("ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", "eth0")
        run("ip", "-n", ns, "link", "set", "eth0", "up")
        run("ip", "-n", ns, "route", "add", "default", "via", self.bridge_ip)
        return ns, ip

    def _drop_netns(self, ns):
        run("ip", "netns", "del", ns, check=False)
        if ns in self.netns_made:
            self.netns_made.remove(ns)

    def close(self):
        for pod in self.pods:
            pod.kill()
        self.dns_stop()
        for ns in list(self.netns_made):
            self._drop_netns(ns)

    def leftovers(self):
        """What this cluster left behind: namespaces or processes. Empty after close()."""
        names = run("ip", "netns", "list").stdout.split()
        left = [n for n in names if n.startswith(self.prefix)]
        left += [f"pid {p.pid1}" for p in self.pods if p.pid1 and alive(p.pid1)]
        left += [f"pid {c.pid}" for p in self.pods for c in p.sidecars + p.added if alive(c.pid)]
        if self.dns_proc and self.dns_proc.poll() is None:
            left.append("dnsmasq")
        return left


class Job:
    """A Volcano Job (batch.volcano.sh/v1alpha1) as the controller and its plugins set it up."""

    publish_not_ready = False  # the svc plugin's headless Service publishes Ready pods only

    def __init__(self, cluster: Cluster, manifest: dict):
        self.cluster = cluster
        meta, spec = manifest["metadata"], manifest["spec"]
        self.name = meta["name"]
        self.namespace = meta.get("namespace", "default")
        self.plugins = spec.get("plugins", {}) or {}
        self.tasks = spec["tasks"]
        self.hosts = {}  # task -> ["hostname.subdomain", ...]
        for task in self.tasks:
            tspec = task["template"]["spec"]
            sub = tspec.get("subdomain", self.name)
            if tspec.get("hostname"):
                self.hosts[task["name"]] = [f"{tspec['hostname']}.{sub}"]
            else:
                self.hosts[task["name"]] = [f"{self.name}-{task['name']}-{i}.{sub}"
                                            for i in range(task.get("replicas", 1))]
        if "ray" in self.plugins:
            self._ray_plugin_overwrites(self.plugins["ray"] or [])
        self.pods = {}
        for task in self.tasks:
            for i in range(task.get("replicas", 1)):
                pod = Pod(self, task, i)
                self.pods[pod.name] = pod
                cluster.pods.append(pod)

    def _ray_plugin_overwrites(self, args):
        """What Volcano's ray plugin does to the containers it names (facts/volcano.md): their
        command becomes its own `sh -c "ray start ..."`; containers with other names are left alone."""
        flags = {"head": "head", "headContainer": "head", "worker": "worker", "workerContainer": "worker",
                 "port": "6379", "dashboardPort": "8265", "clientPort": "10001"}
        for a in args:
            name, _, value = a.lstrip("-").partition("=")
            flags[name] = value
        head_host = f"{self.name}-{flags['head']}-0.{self.name}"
        commands = {
            (flags["head"], flags["headContainer"]):
                f"ray start --head --block --dashboard-host=0.0.0.0 --port={flags['port']} "
                f"--dashboard-port={flags['dashboardPort']} --ray-client-server-port={flags['clientPort']}",
            (flags["worker"], flags["workerContainer"]): f"ray start --block --address={head_host}:{flags['port']}",
        }
        for task in self.tasks:
            for c in task["template"]["spec"]["containers"]:
                if (task["name"], c["name"]) in commands:
                    c["command"] = ["sh", "-c", commands[(task["name"], c["name"])]]
                    c.pop("args", None)

    def pod_identity(self, task: dict, index: int):
        """(pod name, hostname, subdomain) as the Volcano controller names them."""
        tspec = task["template"]["spec"]
        return (f"{self.name}-{task['name']}-{index}", tspec.get("hostname") or f"{self.name}-{task['name']}-{index}",
                tspec.get("subdomain", self.name))

    def pod_env(self, pod: "Pod") -> dict:
        env = {}
        if "svc" in self.plugins or "ray" in self.plugins:
            env.update(svc_env(self.hosts))
        if "env" in self.plugins:
            env["VK_TASK_INDEX"] = env["VC_TASK_INDEX"] = str(pod.index)
        return env

    def pod(self, task: str, index: int = 0) -> "Pod":
        return self.pods[f"{self.name}-{task}-{index}"]

    def add_service(self, name: str, task: str):
        """A headless Service of the manifest's own, next to the job (publishNotReadyAddresses:
        true, selecting one task's pods): its name resolves to them as soon as they run, e.g.
        k8s/volcano/ray-cluster.yaml's `<job>-head`."""
        self.services = dict(getattr(self, "services", {}), **{name: task})

    def pod_files(self, pod: "Pod", etc: pathlib.Path):
        """Files the job's controller puts under the pod's /etc besides the kubelet's (none here)."""

    def start(self, ready=True):
        """Starts every pod at once, as gang scheduling does; Ready at once unless told otherwise
        (a pod without a readinessProbe is Ready as soon as its container starts)."""
        for pod in self.pods.values():
            pod.start(ready=ready)


class IndexedJob(Job):
    """A Kubernetes Job with completionMode: Indexed: pods JOB-INDEX with hostname JOB-INDEX,
    the template's subdomain (a headless Service) and JOB_COMPLETION_INDEX; no Volcano files."""

    def __init__(self, cluster: Cluster, manifest: dict):
        spec = manifest["spec"]
        assert spec.get("completionMode") == "Indexed", "the simulator runs Indexed Jobs only"
        self.cluster = cluster
        self.name = manifest["metadata"]["name"]
        self.namespace = manifest["metadata"].get("namespace", "default")
        self.plugins = {}
        self.tasks = [{"name": "", "replicas": spec["completions"], "template": spec["template"]}]
        self.hosts = {}
        self.pods = {}
        for i in range(spec["completions"]):
            pod = Pod(self, self.tasks[0], i)
            self.pods[pod.name] = pod
            cluster.pods.append(pod)

    def pod_identity(self, task: dict, index: int):
        return f"{self.name}-{index}", f"{self.name}-{index}", task["template"]["spec"]["subdomain"]

    def pod_env(self, pod: "Pod") -> dict:
        return {"JOB_COMPLETION_INDEX": str(pod.index)}

    def pod(self, task=None, index: int = 0) -> "Pod":
        return self.pods[f"{self.name}-{index}"]


class LeaderWorkerSet(Job):
    """A LeaderWorkerSet (sigs.k8s.io/lws) as its controller, its pod webhook and the StatefulSet
    controller set it up (tests/fixtures/README.md): `replicas` groups of `size` pods, the leader
    L-g (from leaderTemplate, else workerTemplate) and the workers L-g-1..L-g-(size-1), hostname
    the pod's name, subdomain L (or L-g under UniquePerReplica), LWS_LEADER_ADDRESS,
    LWS_GROUP_SIZE and LWS_WORKER_INDEX in every container, a headless Service that publishes
    not-ready addresses. Restarts (RecreateGroupOnPodRestart) are not simulated."""

    publish_not_ready = True

    def __init__(self, cluster: Cluster, manifest: dict):
        meta, spec = manifest["metadata"], manifest["spec"]
        lwt = spec["leaderWorkerTemplate"]
        self.cluster = cluster
        self.name = meta["name"]
        self.namespace = meta.get("namespace", "default")
        self.plugins, self.hosts, self.pods = {}, {}, {}
        self.size = lwt.get("size", 1)
        self.groups = spec.get("replicas", 1)
        self.unique = (spec.get("networkConfig") or {}).get("subdomainPolicy") == "UniquePerReplica"
        self.tasks = [{"name": "leader", "replicas": self.groups,
                       "template": lwt.get("leaderTemplate") or lwt["workerTemplate"]},
                      {"name": "worker", "replicas": self.groups * (self.size - 1), "template": lwt["workerTemplate"]}]
        for task in self.tasks:
            for i in range(task["replicas"]):
                pod = Pod(self, task, i)
                self.pods[pod.name] = pod
                cluster.pods.append(pod)

    def place(self, task: str, index: int):
        """(group, index in the group) of a task's index-th pod."""
        if task == "leader":
            return index, 0
        return index // (self.size - 1), index % (self.size - 1) + 1

    def pod_identity(self, task: dict, index: int):
        group, worker = self.place(task["name"], index)
        name = f"{self.name}-{group}" + (f"-{worker}" if worker else "")
        return name, name, f"{self.name}-{group}" if self.unique else self.name

    def pod_env(self, pod: "Pod") -> dict:
        group, worker = self.place(pod.task, pod.index)
        return {"LWS_LEADER_ADDRESS": f"{self.name}-{group}.{pod.subdomain}.{self.namespace}",
                "LWS_GROUP_SIZE": str(self.size), "LWS_WORKER_INDEX": str(worker)}

    def pod(self, group: int = 0, worker: int = 0) -> "Pod":
        return self.pods[f"{self.name}-{group}" + (f"-{worker}" if worker else "")]


class JobSet(Job):
    """A JobSet (sigs.k8s.io/jobset) as its controller and the Job controller set it up
    (tests/fixtures/README.md): per replicated job R, `replicas` Indexed Jobs JS-R-j of
    `parallelism` pods each (completions = parallelism), hostnames JS-R-j-i under the subdomain
    (spec.network.subdomain, default JS), JOB_COMPLETION_INDEX, the JobSet's labels (given to a
    container only through a downwardAPI volume of metadata.labels, which must be mounted under
    /etc here), a headless Service that publishes not-ready addresses by default. Restarts and
    the JobSet's end (deleting what still runs) are not simulated."""

    def __init__(self, cluster: Cluster, manifest: dict):
        meta, spec = manifest["metadata"], manifest["spec"]
        network = spec.get("network") or {}
        assert network.get("enableDNSHostnames", True), "the simulator needs enableDNSHostnames"
        self.cluster = cluster
        self.name = meta["name"]
        self.namespace = meta.get("namespace", "default")
        self.plugins, self.hosts, self.pods = {}, {}, {}
        self.subdomain = network.get("subdomain") or self.name
        self.publish_not_ready = network.get("publishNotReadyAddresses", True)
        self.rjobs = spec["replicatedJobs"]
        self.tasks = []
        for rjob in self.rjobs:
            jspec = rjob["template"]["spec"]
            parallelism = jspec.get("parallelism", 1)
            assert jspec.get("completions", parallelism) == parallelism, "the simulator runs every pod at once"
            self.tasks.append({"name": rjob["name"], "replicas": rjob.get("replicas", 1) * parallelism,
                               "parallelism": parallelism, "template": jspec["template"]})
        for task in self.tasks:
            for i in range(task["replicas"]):
                pod = Pod(self, task, i)
                self.pods[pod.name] = pod
                cluster.pods.append(pod)

    def _task(self, name):
        (task,) = [t for t in self.tasks if t["name"] == name]
        return task

    def pod_identity(self, task: dict, index: int):
        job, i = divmod(index, task["parallelism"])
        host = f"{self.name}-{task['name']}-{job}-{i}"
        return f"{host}-{random.randrange(16 ** 5):05x}", host, self.subdomain

    def pod_env(self, pod: "Pod") -> dict:
        return {"JOB_COMPLETION_INDEX": str(pod.index % self._task(pod.task)["parallelism"])}

    def labels(self, pod: "Pod") -> dict:
        task = self._task(pod.task)
        job, i = divmod(pod.index, task["parallelism"])
        total = sum(r.get("replicas", 1) for r in self.rjobs)
        before = sum(r.get("replicas", 1) for r in self.rjobs[:[r["name"] for r in self.rjobs].index(pod.task)])
        job_name = f"{self.name}-{pod.task}-{job}"
        return {"batch.kubernetes.io/job-completion-index": str(i), "batch.kubernetes.io/job-name": job_name,
                "job-name": job_name, "jobset.sigs.k8s.io/jobset-name": self.name,
                "jobset.sigs.k8s.io/replicatedjob-name": pod.task,
                "jobset.sigs.k8s.io/replicatedjob-replicas": str(task["replicas"] // task["parallelism"]),
                "jobset.sigs.k8s.io/global-replicas": str(total), "jobset.sigs.k8s.io/job-index": str(job),
                "jobset.sigs.k8s.io/job-global-index": str(before + job), "jobset.sigs.k8s.io/restart-attempt": "0"}

    def pod_files(self, pod: "Pod", etc: pathlib.Path):
        """A downwardAPI volume of metadata.labels, in the kubelet's format and layout."""
        spec = self._task(pod.task)["template"]["spec"]
        volumes = {v["name"]: v for v in spec.get("volumes", []) if "downwardAPI" in v}
        for mount in pod.container.get("volumeMounts", []):
            if mount["name"] not in volumes:
                continue
            assert mount["mountPath"].startswith("/etc/"), "the simulator mounts downwardAPI volumes under /etc only"
            data = {}
            for item in volumes[mount["name"]]["downwardAPI"]["items"]:
                assert item["fieldRef"]["fieldPath"] == "metadata.labels", item
                data[item["path"]] = "\n".join(f'{k}={json.dumps(v)}' for k, v in sorted(self.labels(pod).items()))
            write_configmap(etc / mount["mountPath"][len("/etc/"):], data)

    def pod(self, task: str, job: int = 0, index: int = 0) -> "Pod":
        t = self._task(task)
        return [p for p in self.pods.values() if p.task == task and p.index == job * t["parallelism"] + index][0]



class Hosts(Job):
    """Machines outside any pod: a VM, `docker run`, a hostNetwork pod. machines: {hostname:
    {"command": argv, "env": {K: V}, "hosts": extra /etc/hosts lines (e.g. Debian's
    "127.0.1.1 <hostname>"; "{ip}" stands for the machine's address, as Docker writes a
    container's line), "grace": seconds, "dns_name": a name the cluster's DNS gives its address
    while it runs (a LAN's DNS, Docker's on a network of its own), "cwd": its working directory
    (kept visible), "keep": more host paths it sees, "shm_size"}}. Each is a Host: its own network namespace with a non-loopback
    address on the cluster bridge, its UTS hostname and PID 1, and nothing from Kubernetes: no
    KUBERNETES_* or HOSTNAME variable, no DNS name unless given one, an /etc/hosts that gives its
    address only if told to. Nothing else tells the program its address; Ray finds it by the
    default route."""

    publish_not_ready = True  # a dns_name resolves while its machine runs: no readiness outside Kubernetes

    def __init__(self, cluster: Cluster, machines: dict):
        self.cluster = cluster
        self.name, self.namespace, self.plugins, self.hosts, self.pods = "hosts", "default", {}, {}, {}
        self.tasks = []
        for hostname, m in machines.items():
            container = {"name": "main", "command": list(m["command"]),
                         "env": [{"name": k, "value": str(v)} for k, v in m.get("env", {}).items()]}
            task = {"name": hostname, "replicas": 1, "hosts": m.get("hosts", []), "dns_name": m.get("dns_name"),
                    "cwd": m.get("cwd"), "keep": m.get("keep", []), "shm_size": m.get("shm_size"),
                    "template": {"spec": {"terminationGracePeriodSeconds": m.get("grace", 30),
                                          "containers": [container]}}}
            self.tasks.append(task)
            host = Host(self, task, 0)
            self.pods[hostname] = host
            cluster.pods.append(host)

    def pod_identity(self, task: dict, index: int):
        return task["name"], task["name"], "none"

    def pod_env(self, pod: "Pod") -> dict:
        return {}

    def start(self, ready=False):
        """No DNS name for any of them (ready only ever publishes one)."""
        for host in self.pods.values():
            host.start(ready=False)

    def pod(self, hostname: str) -> "Host":
        return self.pods[hostname]


class Pod:
    def __init__(self, job: Job, task: dict, index: int):
        self.job, self.task, self.index = job, task["name"], index
        self.cluster = job.cluster
        tspec = task["template"]["spec"]
        self.container = tspec["containers"][0]
        # Started beside PID 1: native sidecars (initContainers with restartPolicy: Always) and any
        # further containers.
        self.more_containers = [c for c in tspec.get("initContainers", []) or []
                                if c.get("restartPolicy") == "Always"] + tspec["containers"][1:]
        self.name, self.hostname, self.subdomain = job.pod_identity(task, index)
        self.fqdn = f"{self.hostname}.{self.subdomain}.{job.namespace}.svc.{DOMAIN}"
        self.grace = tspec.get("terminationGracePeriodSeconds", 30)
        self.dir = self.cluster.dir / "pods" / self.name
        self.ns = self.ip = None
        self.proc = None
        self.pid1 = None
        self.ready = False
        self.exit_code = None
        self.extra_env = {}
        self.keep = []  # more host paths the pod must see (e.g. a test's termination-log directory)
        self.sidecars = []
        self.added = []  # containers a test added (add_container): killed with the pod
        self.hook_results = []
        self.incarnation = 0
        # (soft, hard) RLIMIT_NOFILE the pod's PID 1 starts with, as a container runtime sets it
        # (containerd 2.x: a soft limit of 1,024); None: the host's.
        self.nofile = None
        self.shm_size = None  # the size of its /dev/shm ("64m" as a container runtime's), None: unbounded
        self.cwd = None  # the entrypoint's working directory, None: /

    # What the pod is given ---------------------------------------------------------------------
    def env(self, container=None) -> dict:
        env = dict(K8S_ENV)
        env["PATH"] = f"{self.cluster.venv / 'bin'}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
        env["HOSTNAME"] = self.hostname
        env.update(self.job.pod_env(self))
        fields = {"metadata.name": self.name, "metadata.namespace": self.job.namespace, "status.podIP": self.ip,
                  "spec.nodeName": "node-1"}
        for item in (container or self.container).get("env", []) or []:
            if "value" in item:
                env[item["name"]] = str(item["value"])
            elif "valueFrom" in item and "fieldRef" in item["valueFrom"]:
                env[item["name"]] = fields[item["valueFrom"]["fieldRef"]["fieldPath"]]
        env["RAY_USAGE_STATS_ENABLED"] = "0"
        env.update(self.extra_env)
        return env

    def argv(self, container=None) -> list:
        container = container or self.container
        argv = list(container.get("command", []) or []) + list(container.get("args", []) or [])
        if not argv:
            raise ValueError(f"pod {self.name}: the simulator needs an explicit command")
        # Images aside: /rayboot-sidecar or /rayboot/rayboot are the binaries under test.
        exe = self.cluster.binaries.get(argv[0]) or self.cluster.binaries.get(os.path.basename(argv[0]))
        if exe is None:
            exe = shutil.which(argv[0], path=self.env()["PATH"])
        if exe is None:
            raise ValueError(f"pod {self.name}: {argv[0]} not found")
        return [str(exe)] + argv[1:]

    def _write_files(self):
        """The kubelet's /etc/hosts and resolv.conf, and /etc/volcano in atomic-writer layout."""
        upper = self.dir / f"etc-upper-{self.incarnation}"
        work = self.dir / f"etc-work-{self.incarnation}"
        upper.mkdir(parents=True)
        work.mkdir(parents=True)
        (upper / "hosts").write_text(hosts_file(self.ip, self.fqdn, self.hostname))
        (upper / "resolv.conf").write_text(resolv_conf(self.job.namespace, self.cluster.bridge_ip, DOMAIN))
        if "svc" in self.job.plugins or "ray" in self.job.plugins:
            write_configmap(upper / "volcano", svc_configmap(self.job.hosts))
        self.job.pod_files(self, upper)
        return upper, work

    # Lifecycle -------------------------------------------------------------------------------
    def start(self, ready=True):
        self.incarnation += 1
        self.ns, self.ip = self.cluster._new_pod_network()
        upper, work = self._write_files()
        spec = self.dir / f"spec-{self.incarnation}.json"
        keep = [str(HERE.parent.parent), str(self.cluster.venv)] + [str(p) for p in self.keep]
        spec.write_text(json.dumps({"etc_upper": str(upper), "etc_work": str(work), "argv": self.argv(),
                                    "env": self.env(), "keep": keep, "hostname": self.hostname,
                                    "shm_size": self.shm_size, "cwd": self.cwd}))
        self.log_path = self.dir / f"log-{self.incarnation}.txt"
        # prlimit(1), not a preexec_fn: Python then forks instead of vforking.
        limits = ["prlimit", f"--nofile={self.nofile[0]}:{self.nofile[1]}", "--"] if self.nofile else []
        self.proc = subprocess.Popen(
            [*limits, "ip", "netns", "exec", self.ns, "unshare", "--pid", "--fork", "--mount", "--mount-proc", "--uts",
             "--propagation", "private", "--kill-child", sys.executable, str(HERE / "podinit.py"), str(spec)],
            stdout=open(self.log_path, "w"), stderr=subprocess.STDOUT, start_new_session=True)
        self.pid1 = wait_until(self._find_pid1, 10, f"pod {self.name} to start")
        # Until podinit.py has made the pod's mounts and exec'd the entrypoint, a process joining the
        # pod (exec, a second container) would see the host's /etc.
        wait_until(self._entrypoint_running, 10, f"pod {self.name}'s entrypoint")
        self.sidecars = [Container(self, self.argv(c), self.env(c), self.dir / f"{c['name']}-{self.incarnation}.log")
                         for c in self.more_containers]
        self.exit_code = None
        if ready:
            self.mark_ready()
        elif self.job.publish_not_ready:
            self.cluster._write_dns()  # its Service publishes it before it is Ready

    def processes(self, exe_name):
        """Host PIDs of the pod's processes (its PID namespace) whose executable is named exe_name."""
        pidns = os.readlink(f"/proc/{self.pid1}/ns/pid")
        found = []
        for entry in pathlib.Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                argv0 = (entry / "cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
                if os.path.basename(argv0) == exe_name and os.readlink(entry / "ns" / "pid") == pidns:
                    found.append(int(entry.name))
            except OSError:
                continue
        return found

    def _find_pid1(self):
        try:
            children = pathlib.Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text().split()
        except OSError:
            return None
        return int(children[0]) if children else None

    def _entrypoint_running(self):
        try:
            return b"podinit.py" not in pathlib.Path(f"/proc/{self.pid1}/cmdline").read_bytes()
        except OSError:
            return True  # it exited already: nothing left to join

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def mark_ready(self):
        self.ready = True
        self.cluster._write_dns()

    def mark_unready(self):
        self.ready = False
        self.cluster._write_dns()

    def wait(self, timeout) -> int:
        """Waits for the pod's PID 1 to exit; returns its exit code (128+N for signal N). Its
        sidecars then get SIGTERM, as the kubelet ends native sidecars after the main container."""
        rc = self.proc.wait(timeout=timeout)
        self.exit_code = 128 - rc if rc < 0 else rc
        self.ready = False
        self.cluster._write_dns()
        self._stop_sidecars(time.monotonic() + self.grace)
        return self.exit_code

    def _stop_sidecars(self, deadline):
        for c in self.sidecars:
            c.signal(signal.SIGTERM)
        for c in self.sidecars:
            try:
                c.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                c.kill()

    def _run_prestop_hooks(self, deadline):
        """Each container's lifecycle.preStop, before SIGTERM and bounded by the grace period, as the
        kubelet runs it: an httpGet from the node (the cluster network) to the pod's IP, an exec
        inside the pod with that container's environment. What each hook did is kept in
        self.hook_results: (container name, exit code or None when it overran, seconds it took)."""
        self.hook_results = []
        for c in [self.container] + self.more_containers:
            hook = (c.get("lifecycle") or {}).get("preStop") or {}
            t0 = time.monotonic()
            left = int(deadline - t0)
            if left <= 0:
                break
            code = None
            if "httpGet" in hook:
                code = run("ip", "netns", "exec", self.cluster.ns, "curl", "-s", "-o", "/dev/null", "-m", str(left),
                           f"http://{self.ip}:{hook['httpGet']['port']}{hook['httpGet']['path']}", check=False,
                           timeout=left + 5).returncode
            elif "exec" in hook:
                try:
                    code = self.exec(self.argv({"command": hook["exec"]["command"]}), timeout=left,
                                     env=self.env(c)).returncode
                except subprocess.TimeoutExpired:
                    pass
            else:
                continue
            self.hook_results.append((c["name"], code, time.monotonic() - t0))

    def delete(self, grace=None) -> int:
        """Like the kubelet: the pod leaves DNS, preStop hooks run, SIGTERM to PID 1, SIGKILL when
        the grace period ends."""
        grace = self.grace if grace is None else grace
        deadline = time.monotonic() + grace
        self.mark_unready()
        if self.running():
            self._run_prestop_hooks(deadline)
            os.kill(self.pid1, signal.SIGTERM)
            try:
                return self.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.kill(self.pid1, signal.SIGKILL)
        return self.wait(10)

    def recreate(self, ready=True):
        """The same pod name (and DNS name) with a new IP, as Volcano re-creates pods."""
        if self.running():
            self.kill()
        self.cluster._drop_netns(self.ns)
        self.start(ready=ready)

    def kill(self):
        for c in self.sidecars + self.added:
            c.kill()
        if self.running():
            os.kill(self.pid1, signal.SIGKILL)  # PID 1 dies: the kernel kills the whole pod
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def exec(self, argv, timeout=60, env=None) -> subprocess.CompletedProcess:
        """Runs argv inside the pod (its network, PID and mount namespaces)."""
        return subprocess.run(["nsenter", "-t", str(self.pid1), "-n", "-p", "-m", "-u", "--", *argv],
                              env=env or self.env(), capture_output=True, text=True, timeout=timeout)

    def add_container(self, argv, env, log_path) -> "Container":
        """A second container in the pod: the pod's network, mount and UTS namespaces, and a PID
        namespace of its own (Kubernetes' default, shareProcessNamespace: false). It is killed
        with the pod (kill, Cluster.close), and counted in the cluster's leftovers until then."""
        container = Container(self, argv, env, log_path)
        self.added.append(container)
        return container

    def drop_incoming(self, port):
        """Silently drops TCP packets to port from every other pod (nftables in this pod's netns);
        the pod's own address and loopback still get through."""
        for rule in (["add", "table", "inet", "rbdrop"],
                     ["add", "chain", "inet", "rbdrop", "in", "{", "type", "filter", "hook", "input", "priority", "0",
                      ";", "}"],
                     ["add", "rule", "inet", "rbdrop", "in", "ip", "saddr", "!=", self.ip, "tcp", "dport", str(port),
                      "drop"]):
            run("ip", "netns", "exec", self.ns, "nft", *rule)

    def allow_packets(self):
        run("ip", "netns", "exec", self.ns, "nft", "delete", "table", "inet", "rbdrop", check=False)


class Host(Pod):
    """One machine of Hosts."""

    def __init__(self, job: Hosts, task: dict, index: int):
        super().__init__(job, task, index)
        self.fqdn = task["dns_name"]  # None: no DNS name
        self.hosts_lines = task["hosts"]
        self.cwd, self.shm_size = task["cwd"], task["shm_size"]
        self.keep += task["keep"] + ([self.cwd] if self.cwd else [])

    def env(self, container=None) -> dict:
        env = {k: v for k, v in super().env(container).items() if not k.startswith("KUBERNETES_")}
        env.pop("HOSTNAME")  # a VM's init gives none; the program asks the kernel (gethostname)
        return env

    def _write_files(self):
        upper = self.dir / f"etc-upper-{self.incarnation}"
        work = self.dir / f"etc-work-{self.incarnation}"
        upper.mkdir(parents=True)
        work.mkdir(parents=True)
        lines = ["127.0.0.1\tlocalhost", "::1\tlocalhost ip6-localhost ip6-loopback",
                 *(line.replace("{ip}", self.ip) for line in self.hosts_lines)]
        (upper / "hosts").write_text("".join(f"{line}\n" for line in lines))
        (upper / "resolv.conf").write_text(f"nameserver {self.cluster.bridge_ip}\n")
        return upper, work

    def mark_ready(self):
        raise AssertionError("a host outside Kubernetes has no readiness and no DNS name")


class Container:
    """Another process tree in a running pod, started with nsenter; signalled and reaped by PID."""

    def __init__(self, pod: Pod, argv, env, log_path):
        self.log_path = log_path
        self.proc = subprocess.Popen(["nsenter", "-t", str(pod.pid1), "-n", "-m", "-u", "--", "unshare", "--pid",
                                      "--fork", "--mount", "--mount-proc", "--kill-child", *argv], env=env,
                                     stdout=open(log_path, "w"), stderr=subprocess.STDOUT, start_new_session=True)
        # nsenter execs unshare, which forks the container's process as PID 1 of its namespace.
        self.pid = wait_until(self._child, 10, f"{argv[0]} to start in pod {pod.name}")

    def _child(self):
        try:
            kids = pathlib.Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text().split()
        except OSError:
            return None
        return int(kids[0]) if kids else None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def signal(self, sig):
        if self.proc.poll() is None:
            os.kill(self.pid, sig)

    def wait(self, timeout) -> int:
        return self.proc.wait(timeout=timeout)

    def kill(self):
        if self.proc.poll() is None:
            os.kill(self.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
