"""A real single-node Kubernetes on this machine, for rayboot's tests: etcd (Debian), the
Kubernetes control plane, kubelet and kube-proxy (built by build.sh from the Go module proxy),
containerd + runc + the CNI bridge plugin (Debian), CoreDNS (built by build.sh) and the images
images.sh builds from our Dockerfiles. Nothing is faked: Pods are scheduled by kube-scheduler,
run by the kubelet, get addresses from CNI, names from CoreDNS, Services from kube-proxy.

Isolation, so that `down` (or a run that dies half-way) leaves nothing behind:
- the node has its own network namespace (NETNS) reached from the machine over one veth pair
  (HOST_IP <-> NODE_IP); pod and Service addresses exist only inside it, and it has no route
  anywhere else;
- every node process runs in one PID namespace whose init is nodeinit.py: ending it makes the
  kernel kill all of them (shims and containers included);
- the node's mounts live in that init's mount namespace and vanish with it;
- the host sysctls the kubelet insists on setting are recorded at `up` and restored at `down`,
  and the cgroups runc made are removed.
Persisted between runs (data, not state): certificates, containerd's image store, build outputs.

Usage: python3 tests/node/cluster.py up|down|status|env
  env prints the variables for a kubectl-style tool (KUBECONFIG)."""
import ipaddress
import json
import os
import pathlib
import resource
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tarfile
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
from kube import Kube  # noqa: E402

BUILD = pathlib.Path(os.environ.get("RAYBOOT_NODE_BUILD", REPO / "build" / "node"))
BIN = BUILD / "bin"
IMAGES = BUILD / "images"

NODE_NAME = "rbnode"
NETNS = "rbnode"
HOST_IF = "rbnode0"
HOST_IP = "10.250.0.1"
NODE_IP = "10.250.0.2"
LINK_PREFIX = 30
POD_CIDR = "10.244.0.0/24"
SERVICE_CIDR = "10.96.0.0/12"
API_SERVICE_IP = "10.96.0.1"
DNS_SERVICE_IP = "10.96.0.10"
CLUSTER_DOMAIN = "cluster.local"
CONTAINER_NOFILE_SOFT = 1024      # what containerd 2.x leaves containers (write_base_spec)
API_PORT = 6443
SERVER = f"https://{NODE_IP}:{API_PORT}"

STATE = pathlib.Path("/var/lib/rbnode")        # persisted: pki, containerd's images, logs
RUN = pathlib.Path("/run/rbnode")               # tmpfs inside the node; on the host: pid files
PKI = STATE / "pki"
CONF = STATE / "conf"
LOGS = STATE / "log"
POD_LOGS = STATE / "pods-log"
KUBELET_ROOT = STATE / "kubelet"
CONTAINERD_ROOT = STATE / "containerd"
CONTAINERD_SOCK = RUN / "containerd" / "containerd.sock"
ETCD_DIR = STATE / "etcd"
HOST_RUN = pathlib.Path("/run/rbnode-host")     # the machine's view: init pid, recorded sysctls
INIT_PID_FILE = HOST_RUN / "init.pid"
SYSCTL_FILE = HOST_RUN / "sysctls.json"
ADMIN_KUBECONFIG = CONF / "admin.kubeconfig"

# Global (not per-namespace) sysctls the kubelet sets at start-up (pkg/kubelet/cm's
# setupKernelTunables); they are put back at `down`.
KUBELET_SYSCTLS = ("vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
                   "kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes")

PINS = dict(line.split("=", 1) for line in (HERE / "pins.env").read_text().splitlines()
            if line and not line.startswith("#"))
IMAGE_NAMES = {"pause": PINS["IMAGE_PAUSE"], "debian": PINS["IMAGE_DEBIAN"], "rayboot": PINS["IMAGE_RAYBOOT"],
               "ray-stock": PINS["IMAGE_RAY_STOCK"], "ray": PINS["IMAGE_RAY"], "redis": PINS["IMAGE_REDIS"]}

UP_TIMEOUT_S = 180


def say(msg):
    print(f"node: {msg}", file=sys.stderr, flush=True)


def run(*argv, check=True, timeout=120, **kw):
    r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, argv))}: exit {r.returncode}: {r.stderr.strip()[-2000:]}")
    return r


# ---------------------------------------------------------------------------------------------
# Certificates and configuration files

def _cert(name, subject, usages, sans=()):
    """A key and a certificate signed by the node's CA (openssl), unless already made."""
    key, crt = PKI / f"{name}.key", PKI / f"{name}.crt"
    if crt.exists() and key.exists():
        return
    ext = PKI / f"{name}.ext"
    lines = ["basicConstraints=critical,CA:FALSE", "keyUsage=critical,digitalSignature,keyEncipherment",
             f"extendedKeyUsage={','.join(usages)}"]
    if sans:
        lines.append("subjectAltName=" + ",".join(sans))
    ext.write_text("\n".join(lines) + "\n")
    run("openssl", "genrsa", "-out", key, "2048")
    csr = PKI / f"{name}.csr"
    run("openssl", "req", "-new", "-key", key, "-subj", subject, "-out", csr)
    run("openssl", "x509", "-req", "-in", csr, "-CA", PKI / "ca.crt", "-CAkey", PKI / "ca.key",
        "-CAcreateserial", "-days", "365", "-sha256", "-extfile", ext, "-out", crt)
    csr.unlink()
    ext.unlink()


def make_pki():
    PKI.mkdir(parents=True, exist_ok=True)
    os.chmod(PKI, 0o700)
    if not (PKI / "ca.crt").exists():
        run("openssl", "genrsa", "-out", PKI / "ca.key", "2048")
        run("openssl", "req", "-x509", "-new", "-key", PKI / "ca.key", "-subj", "/CN=rbnode-ca",
            "-days", "3650", "-sha256", "-out", PKI / "ca.crt")
    if not (PKI / "sa.key").exists():
        run("openssl", "genrsa", "-out", PKI / "sa.key", "2048")
        run("openssl", "rsa", "-in", PKI / "sa.key", "-pubout", "-out", PKI / "sa.pub")
    api_sans = ["DNS:kubernetes", "DNS:kubernetes.default", "DNS:kubernetes.default.svc",
                f"DNS:kubernetes.default.svc.{CLUSTER_DOMAIN}", "DNS:localhost",
                f"IP:{API_SERVICE_IP}", f"IP:{NODE_IP}", "IP:127.0.0.1"]
    _cert("apiserver", "/CN=kube-apiserver", ["serverAuth"], api_sans)
    # Clients: the user name is the CN, the groups the O's (what RBAC and the Node authorizer see).
    _cert("admin", "/O=system:masters/CN=rbnode-admin", ["clientAuth"])
    _cert("apiserver-kubelet-client", "/O=system:masters/CN=kube-apiserver-kubelet-client", ["clientAuth"])
    _cert("controller-manager", "/CN=system:kube-controller-manager", ["clientAuth"])
    _cert("scheduler", "/CN=system:kube-scheduler", ["clientAuth"])
    _cert("kubelet-client", f"/O=system:nodes/CN=system:node:{NODE_NAME}", ["clientAuth"])
    _cert("kubelet", f"/CN={NODE_NAME}", ["serverAuth"], [f"DNS:{NODE_NAME}", f"IP:{NODE_IP}"])
    _cert("kube-proxy", "/CN=system:kube-proxy", ["clientAuth"])
    _cert("coredns", "/CN=system:coredns", ["clientAuth"])
    _cert("kuberay-operator", "/CN=kuberay-operator", ["clientAuth"])
    _cert("kube-router", "/CN=kube-router", ["clientAuth"])
    _cert("lws-controller", "/CN=lws-controller", ["clientAuth"])
    _cert("jobset-controller", "/CN=jobset-controller", ["clientAuth"])
    _cert("kueue-controller", "/CN=kueue-controller", ["clientAuth"])


def _kubeconfig(path, cert):
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "rbnode", "cluster": {"server": SERVER, "certificate-authority": str(PKI / "ca.crt")}}],
        "users": [{"name": cert, "user": {"client-certificate": str(PKI / f"{cert}.crt"),
                                           "client-key": str(PKI / f"{cert}.key")}}],
        "contexts": [{"name": "rbnode", "context": {"cluster": "rbnode", "user": cert}}],
        "current-context": "rbnode"}, indent=1) + "\n")
    os.chmod(path, 0o600)


def write_base_spec():
    """The OCI spec every container starts from: containerd's own default (`ctr oci spec`) made
    as its CRI makes it (no /run mount, no AppArmor or seccomp of its own: the pod's apply), but
    with a soft open files limit of 1,024 and the machine's hard limit, as containerd 2.x leaves
    its containers. containerd 1.6 gives them its own raised soft limit instead (20,000 on these
    machines), which would hide a Ray pod that does not raise its own (test_ray_pod_on_node.py)."""
    spec = json.loads(run("ctr", "oci", "spec").stdout)
    spec["mounts"] = [m for m in spec["mounts"] if m["destination"] != "/run"]
    spec["process"].pop("apparmorProfile", None)
    spec.get("linux", {}).pop("seccomp", None)
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    spec["process"]["rlimits"] = [{"type": "RLIMIT_NOFILE", "hard": hard, "soft": min(CONTAINER_NOFILE_SOFT, hard)}]
    (CONF / "base-spec.json").write_text(json.dumps(spec, indent=1) + "\n")


def write_configs():
    CONF.mkdir(parents=True, exist_ok=True)
    for name in ("admin", "controller-manager", "scheduler", "kubelet-client", "kube-proxy", "coredns",
                 "kuberay-operator", "kube-router", "lws-controller", "jobset-controller",
                 "kueue-controller"):
        _kubeconfig(CONF / f"{name}.kubeconfig", name)

    (CONF / "cni").mkdir(exist_ok=True)
    (CONF / "cni" / "10-rbnode.conflist").write_text(json.dumps({
        "cniVersion": "1.0.0", "name": "rbnode",
        "plugins": [
            {"type": "bridge", "bridge": "cni0", "isGateway": True, "ipMasq": False, "hairpinMode": True,
             "ipam": {"type": "host-local", "ranges": [[{"subnet": POD_CIDR}]],
                      "routes": [{"dst": "0.0.0.0/0"}], "dataDir": str(RUN / "cni-ipam")}},
            {"type": "portmap", "capabilities": {"portMappings": True}},
        ]}, indent=1) + "\n")

    write_base_spec()
    (CONF / "containerd.toml").write_text(f"""\
# containerd for the test node (tests/node/cluster.py): its own root, state and socket.
version = 2
root = "{CONTAINERD_ROOT}"
state = "{RUN / 'containerd'}"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
                    "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper",
                    "io.containerd.internal.v1.opt", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "{CONTAINERD_SOCK}"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{IMAGE_NAMES['pause']}"
  # Without CAP_SYS_RESOURCE runc cannot lower the sandbox's oom_score_adj (facts/k8s-node.md).
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      base_runtime_spec = "{CONF / 'base-spec.json'}"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "{CONF / 'cni'}"
""")

    (CONF / "kubelet.json").write_text(json.dumps({
        "apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
        "containerRuntimeEndpoint": f"unix://{CONTAINERD_SOCK}",
        "authentication": {"x509": {"clientCAFile": str(PKI / "ca.crt")},
                           "webhook": {"enabled": True}, "anonymous": {"enabled": False}},
        "authorization": {"mode": "Webhook"},
        "tlsCertFile": str(PKI / "kubelet.crt"), "tlsPrivateKeyFile": str(PKI / "kubelet.key"),
        "clusterDNS": [DNS_SERVICE_IP], "clusterDomain": CLUSTER_DOMAIN,
        "resolvConf": str(CONF / "resolv.conf"),
        "podLogsDir": str(POD_LOGS),
        # This machine: cgroup v1, no CAP_SYS_RESOURCE, swap allowed (facts/k8s-node.md).
        "cgroupDriver": "cgroupfs", "failCgroupV1": False, "cgroupsPerQOS": False,
        "enforceNodeAllocatable": [], "failSwapOn": False,
        # Kubernetes v1.33.4's kubelet panics, and the node with it, when it decides to resize a
        # pod in place with cgroupsPerQOS false: doPodResizeAction dereferences the pod cgroup
        # config that GetPodCgroupConfig returns nil without pod cgroups (kubernetes#137993). It
        # did, mid-bench, for a Volcano pod re-made under the same name ("Missing actuated
        # resource record"). Nothing here resizes a pod: the feature is off.
        "featureGates": {"InPlacePodVerticalScaling": False},
        # The node's disk is shared with the build: no image or disk-pressure evictions mid-test.
        "evictionHard": {"memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%"},
        "imageGCHighThresholdPercent": 100, "imageGCLowThresholdPercent": 99,
        "serializeImagePulls": False, "staticPodPath": "", "readOnlyPort": 0,
        "healthzBindAddress": "127.0.0.1", "healthzPort": 10248,
        "syncFrequency": "10s", "fileCheckFrequency": "10s",
    }, indent=1) + "\n")
    # Pods with dnsPolicy Default get the node's resolv.conf: the node has no upstream DNS.
    (CONF / "resolv.conf").write_text(f"nameserver {DNS_SERVICE_IP}\n")

    (CONF / "kube-proxy.json").write_text(json.dumps({
        "apiVersion": "kubeproxy.config.k8s.io/v1alpha1", "kind": "KubeProxyConfiguration",
        "clientConnection": {"kubeconfig": str(CONF / "kube-proxy.kubeconfig")},
        "mode": "iptables", "clusterCIDR": POD_CIDR, "hostnameOverride": NODE_NAME,
        "healthzBindAddress": "127.0.0.1:10256", "metricsBindAddress": "127.0.0.1:10249",
        # nf_conntrack_max is global, not the node namespace's: leave it alone.
        "conntrack": {"maxPerCore": 0, "min": 0},
    }, indent=1) + "\n")

    # kubeadm's Corefile (cmd/kubeadm/app/phases/addons/dns), less what has no use here (no
    # upstream to forward to, no metrics scraper): cluster.local answers are never cached.
    (CONF / "Corefile").write_text(f"""\
.:53 {{
    errors
    health 127.0.0.1:8080 {{
       lameduck 5s
    }}
    ready 127.0.0.1:8181
    kubernetes {CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {{
       kubeconfig {CONF / 'coredns.kubeconfig'} rbnode
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }}
    cache 30 {{
       disable success {CLUSTER_DOMAIN}
       disable denial {CLUSTER_DOMAIN}
    }}
}}
""")


# ---------------------------------------------------------------------------------------------
# Namespaces and processes

def init_pid():
    """The host PID of the node's init, or None when the node is down."""
    try:
        pid = int(INIT_PID_FILE.read_text())
    except (OSError, ValueError):
        return None
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            if b"nodeinit.py" not in f.read():
                return None
    except OSError:
        return None
    return pid


def node_exec_argv(pid, argv):
    """argv run inside the node: its network, PID and mount namespaces."""
    return ["nsenter", f"--target={pid}", "--net", "--pid", "--mount", "--", *map(str, argv)]


def node_run(argv, **kw):
    pid = init_pid()
    if pid is None:
        raise RuntimeError("the node is not up")
    return run(*node_exec_argv(pid, argv), **kw)


def _component_env():
    return {"PATH": f"{BIN}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root",
            "LANG": "C.UTF-8"}


def spawn(pid, name, argv):
    """Starts one node component in the background, its output in LOGS/NAME.log."""
    log = open(LOGS / f"{name}.log", "ab")
    try:
        subprocess.Popen(node_exec_argv(pid, argv), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                         start_new_session=True, env=_component_env())
    finally:
        log.close()


def make_network():
    run("ip", "netns", "add", NETNS)
    run("ip", "-n", NETNS, "link", "set", "lo", "up")
    run("ip", "link", "add", HOST_IF, "type", "veth", "peer", "name", "eth0", "netns", NETNS)
    run("ip", "addr", "add", f"{HOST_IP}/{LINK_PREFIX}", "dev", HOST_IF)
    run("ip", "link", "set", HOST_IF, "up")
    run("ip", "-n", NETNS, "addr", "add", f"{NODE_IP}/{LINK_PREFIX}", "dev", "eth0")
    run("ip", "-n", NETNS, "link", "set", "eth0", "up")
    # The node's own processes reach Services as a node's do: a route for the Service range, whose
    # addresses kube-proxy's OUTPUT rules rewrite to an endpoint (the API server calls admission
    # webhooks at their Service's cluster IP: tests/node/controllers.py). Nothing answers there
    # otherwise: the node still has no route off the machine.
    run("ip", "-n", NETNS, "route", "add", SERVICE_CIDR, "dev", "eth0", "src", NODE_IP)


def _die_with_parent():
    """In the child before exec: SIGKILL when the process that started the node dies, so a test
    run that is killed (not just failed) takes its node with it. The kernel keeps this across
    nsenter's exec of unshare, whose --kill-child passes it on to the node's init."""
    import ctypes
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def start_init(tie_to_caller):
    HOST_RUN.mkdir(parents=True, exist_ok=True)
    ready = HOST_RUN / "init.ready"
    ready.unlink(missing_ok=True)
    log = open(LOGS / "nodeinit.log", "ab")
    p = subprocess.Popen(
        ["nsenter", f"--net=/run/netns/{NETNS}", "--",
         "unshare", "--pid", "--fork", "--kill-child", "--mount", "--propagation", "private", "--mount-proc", "--",
         sys.executable, str(HERE / "nodeinit.py"), str(RUN), str(ETCD_DIR), str(ready)],
        stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
        preexec_fn=_die_with_parent if tie_to_caller else None)
    log.close()
    deadline = time.monotonic() + 20
    while not ready.exists():
        if p.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the node's init did not start (see {LOGS / 'nodeinit.log'})")
        time.sleep(0.05)
    # unshare --fork runs init as its child; nsenter execs unshare, so p.pid is unshare.
    children = pathlib.Path(f"/proc/{p.pid}/task/{p.pid}/children").read_text().split()
    INIT_PID_FILE.write_text(children[0])
    return int(children[0])


def record_sysctls():
    HOST_RUN.mkdir(parents=True, exist_ok=True)
    if SYSCTL_FILE.exists():
        return  # a node that was not taken down: keep the first record, the machine's own values
    values = {}
    for key in KUBELET_SYSCTLS:
        try:
            values[key] = pathlib.Path(f"/proc/sys/{key}").read_text().strip()
        except OSError:
            pass
    SYSCTL_FILE.write_text(json.dumps(values))


def restore_sysctls():
    try:
        values = json.loads(SYSCTL_FILE.read_text())
    except (OSError, ValueError):
        return
    for key, value in values.items():
        try:
            pathlib.Path(f"/proc/sys/{key}").write_text(value + "\n")
        except OSError as e:
            say(f"could not restore /proc/sys/{key}={value}: {e}")
    SYSCTL_FILE.unlink()


def node_cgroups():
    """Cgroup directories the node's runc made: under each v1 controller, the paths the CRI
    gives containers when the kubelet runs with cgroupsPerQOS false ("/k8s.io/<id>")."""
    found = []
    root = pathlib.Path("/sys/fs/cgroup")
    for ctrl in sorted(root.iterdir()) if root.exists() else []:
        d = ctrl / "k8s.io"
        if d.is_dir():
            found.append(d)
    return found


def remove_cgroups():
    for top in node_cgroups():
        for d in sorted((p for p in top.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
            try:
                d.rmdir()
            except OSError as e:
                say(f"could not remove cgroup {d}: {e}")
        try:
            top.rmdir()
        except OSError as e:
            say(f"could not remove cgroup {top}: {e}")


# ---------------------------------------------------------------------------------------------
# up, down, status

def admin():
    return Kube(SERVER, PKI / "ca.crt", PKI / "admin.crt", PKI / "admin.key")


def _wait(what, check, timeout, log=None):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            got = check()
            if got:
                return got
        except Exception as e:  # noqa: BLE001 - any failure means "not yet"
            last = e
        time.sleep(0.25)
    hint = f"; see {LOGS / log}" if log else ""
    raise RuntimeError(f"{what} not within {timeout} s (last: {last!r}){hint}")


def _import_images(pid):
    """Imports each image archive into containerd's k8s.io namespace, once, under its one name,
    unless that name already points at the archive's manifest."""
    have = {}
    out = node_run(["ctr", "-a", CONTAINERD_SOCK, "-n", "k8s.io", "images", "ls"]).stdout.splitlines()
    for line in out[1:]:
        parts = line.split()
        if len(parts) >= 3:
            have[parts[0]] = parts[2]
    for key, name in IMAGE_NAMES.items():
        archive = IMAGES / f"{key}.tar"
        if not archive.exists():
            raise RuntimeError(f"{archive} is missing: run tests/node/images.sh first")
        with tarfile.open(archive) as t:
            index = json.load(t.extractfile("index.json"))
        digest = index["manifests"][0]["digest"]
        if have.get(name) == digest:
            continue
        say(f"importing {name}")
        node_run(["ctr", "-a", CONTAINERD_SOCK, "-n", "k8s.io", "images", "import", archive], timeout=600)
    # `ctr import` may add other names for the same image; the kubelet must only see ours.
    out = node_run(["ctr", "-a", CONTAINERD_SOCK, "-n", "k8s.io", "images", "ls", "-q"]).stdout.split()
    for name in out:
        if name not in IMAGE_NAMES.values() and not name.startswith("sha256:"):
            node_run(["ctr", "-a", CONTAINERD_SOCK, "-n", "k8s.io", "images", "rm", name])


def _clear_stale_containers():
    """Containers a node that died left in containerd's metadata (their processes are gone)."""
    for ns in ("k8s.io",):
        ids = node_run(["ctr", "-a", CONTAINERD_SOCK, "-n", ns, "containers", "ls", "-q"]).stdout.split()
        for cid in ids:
            node_run(["ctr", "-a", CONTAINERD_SOCK, "-n", ns, "containers", "rm", cid], check=False)


def _bootstrap_objects(kube):
    """What a cluster's add-ons would install: CoreDNS's RBAC, and the kube-dns Service whose
    endpoint is CoreDNS on the node (it runs as a node process, not a pod)."""
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    kube.post(f"{rbac}/clusterroles", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "system:coredns"},
        "rules": [{"apiGroups": [""], "resources": ["endpoints", "services", "pods", "namespaces"],
                   "verbs": ["list", "watch"]},
                  {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["list", "watch"]}]})
    kube.post(f"{rbac}/clusterrolebindings", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "system:coredns"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:coredns"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "system:coredns"}]})
    ports = [{"name": "dns", "port": 53, "protocol": "UDP"}, {"name": "dns-tcp", "port": 53, "protocol": "TCP"}]
    kube.post("/api/v1/namespaces/kube-system/services", {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "kube-dns", "namespace": "kube-system", "labels": {"k8s-app": "kube-dns"}},
        "spec": {"clusterIP": DNS_SERVICE_IP, "ports": [dict(p, targetPort=53) for p in ports]}})
    kube.post("/apis/discovery.k8s.io/v1/namespaces/kube-system/endpointslices", {
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": "kube-dns-node", "namespace": "kube-system",
                     "labels": {"kubernetes.io/service-name": "kube-dns",
                                "endpointslice.kubernetes.io/managed-by": "rbnode"}},
        "addressType": "IPv4",
        "endpoints": [{"addresses": [NODE_IP], "conditions": {"ready": True}}],
        "ports": ports})


def dns_query(name, server=NODE_IP, qtype=1, timeout=2.0):
    """One DNS query over UDP; returns (rcode, [addresses]) for A records."""
    qid = os.getpid() & 0xFFFF
    q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    q += b"".join(bytes([len(p)]) + p.encode() for p in name.rstrip(".").split(".")) + b"\0"
    q += struct.pack(">HH", qtype, 1)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(timeout)
        s.sendto(q, (server, 53))
        reply, _ = s.recvfrom(4096)
    rcode = reply[3] & 0x0F
    ancount = struct.unpack(">H", reply[6:8])[0]
    pos = len(q)
    addrs = []
    for _ in range(ancount):
        while reply[pos] != 0:  # the answer's name: a pointer (2 bytes) or labels
            if reply[pos] & 0xC0 == 0xC0:
                pos += 1
                break
            pos += reply[pos] + 1
        pos += 1
        rtype, _, _, rdlen = struct.unpack(">HHIH", reply[pos:pos + 10])
        pos += 10
        if rtype == 1 and rdlen == 4:
            addrs.append(str(ipaddress.IPv4Address(reply[pos:pos + 4])))
        pos += rdlen
    return rcode, addrs


def start_kube_proxy(pid):
    """Starts kube-proxy and waits for its Service rules in the node's nat table: without them no
    pod resolves a name (the kube-dns Service), and a kube-proxy that exits at start-up would
    otherwise show only as DNS timeouts in every pod."""
    spawn(pid, "kube-proxy", ["kube-proxy", f"--config={CONF / 'kube-proxy.json'}"])

    def programmed():
        if node_run(["pgrep", "-x", "kube-proxy"], check=False).returncode != 0:
            raise RuntimeError(f"kube-proxy exited; see {LOGS / 'kube-proxy.log'}")
        return "KUBE-SERVICES" in node_run(["iptables-save", "-t", "nat"], check=False).stdout
    _wait("kube-proxy's Service rules", programmed, 60, "kube-proxy.log")


def up(tie_to_caller=False):
    """Brings the node up (taking down any leftover first); returns once the node is Ready, the
    default ServiceAccount exists, CoreDNS answers and every image is loaded. TIE_TO_CALLER:
    the node dies with the calling process (tests); otherwise it runs until `down`."""
    if os.geteuid() != 0:
        raise RuntimeError("the test node needs root (namespaces, containerd, iptables)")
    for tool in ("etcd", "containerd", "runc", "ctr", "iptables", "nsenter", "unshare", "openssl", "ip"):
        if not shutil.which(tool, path=_component_env()["PATH"]):
            raise RuntimeError(f"{tool} is missing: run scripts/k8s-node.sh up (it installs the node's packages)")
    for b in ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy", "coredns"):
        if not (BIN / b).exists():
            raise RuntimeError(f"{BIN / b} is missing: run tests/node/build.sh first")
    down(quiet=True)
    t0 = time.monotonic()
    LOGS.mkdir(parents=True, exist_ok=True)
    for f in LOGS.glob("*.log"):
        f.unlink()
    for d in (KUBELET_ROOT, POD_LOGS):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
    make_pki()
    write_configs()
    record_sysctls()
    make_network()
    pid = start_init(tie_to_caller)

    spawn(pid, "etcd", [
        "etcd", "--name=rbnode", f"--data-dir={ETCD_DIR}",
        "--listen-client-urls=http://127.0.0.1:2379", "--advertise-client-urls=http://127.0.0.1:2379",
        "--listen-peer-urls=http://127.0.0.1:2380", "--initial-advertise-peer-urls=http://127.0.0.1:2380",
        "--initial-cluster=rbnode=http://127.0.0.1:2380", "--listen-metrics-urls=http://127.0.0.1:2381"])
    spawn(pid, "containerd", ["containerd", f"--config={CONF / 'containerd.toml'}"])
    spawn(pid, "kube-apiserver", [
        "kube-apiserver", f"--advertise-address={NODE_IP}", "--bind-address=0.0.0.0", f"--secure-port={API_PORT}",
        "--etcd-servers=http://127.0.0.1:2379",
        "--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction",
        f"--client-ca-file={PKI / 'ca.crt'}",
        f"--tls-cert-file={PKI / 'apiserver.crt'}", f"--tls-private-key-file={PKI / 'apiserver.key'}",
        f"--kubelet-client-certificate={PKI / 'apiserver-kubelet-client.crt'}",
        f"--kubelet-client-key={PKI / 'apiserver-kubelet-client.key'}",
        f"--kubelet-certificate-authority={PKI / 'ca.crt'}", "--kubelet-preferred-address-types=InternalIP",
        f"--service-account-issuer=https://kubernetes.default.svc.{CLUSTER_DOMAIN}",
        f"--service-account-key-file={PKI / 'sa.pub'}", f"--service-account-signing-key-file={PKI / 'sa.key'}",
        f"--service-cluster-ip-range={SERVICE_CIDR}", "--profiling=false"])

    kube = admin()
    _wait("the API server", lambda: kube.request("GET", "/readyz", raw=True) == "ok", 90, "kube-apiserver.log")
    say(f"API server ready at {SERVER} ({time.monotonic() - t0:.1f} s)")
    _wait("containerd", lambda: node_run(["ctr", "-a", CONTAINERD_SOCK, "version"], check=False).returncode == 0,
          30, "containerd.log")
    _clear_stale_containers()

    kcm_auth = [f"--authentication-kubeconfig={CONF / 'controller-manager.kubeconfig'}",
                f"--authorization-kubeconfig={CONF / 'controller-manager.kubeconfig'}"]
    spawn(pid, "kube-controller-manager", [
        "kube-controller-manager", f"--kubeconfig={CONF / 'controller-manager.kubeconfig'}", *kcm_auth,
        "--bind-address=127.0.0.1", "--leader-elect=false", "--use-service-account-credentials=true",
        f"--service-account-private-key-file={PKI / 'sa.key'}", f"--root-ca-file={PKI / 'ca.crt'}",
        f"--cluster-signing-cert-file={PKI / 'ca.crt'}", f"--cluster-signing-key-file={PKI / 'ca.key'}",
        "--controllers=*", "--allocate-node-cidrs=false", "--profiling=false"])
    spawn(pid, "kube-scheduler", [
        "kube-scheduler", f"--kubeconfig={CONF / 'scheduler.kubeconfig'}",
        f"--authentication-kubeconfig={CONF / 'scheduler.kubeconfig'}",
        f"--authorization-kubeconfig={CONF / 'scheduler.kubeconfig'}",
        "--bind-address=127.0.0.1", "--leader-elect=false", "--profiling=false"])
    _bootstrap_objects(kube)
    spawn(pid, "coredns", ["coredns", "-conf", CONF / "Corefile"])
    _import_images(pid)
    say(f"images loaded ({time.monotonic() - t0:.1f} s)")
    spawn(pid, "kubelet", [
        "kubelet", f"--config={CONF / 'kubelet.json'}", f"--kubeconfig={CONF / 'kubelet-client.kubeconfig'}",
        f"--root-dir={KUBELET_ROOT}", f"--hostname-override={NODE_NAME}", f"--node-ip={NODE_IP}",
        # RAYBOOT_NODE_KUBELET_V=3: the kubelet logs each hook's start and end, for a look by hand.
        f"--v={os.environ.get('RAYBOOT_NODE_KUBELET_V', '0')}"])
    start_kube_proxy(pid)

    def node_ready():
        n = kube.get(f"/api/v1/nodes/{NODE_NAME}")
        conds = {c["type"]: c["status"] for c in n["status"].get("conditions", [])}
        taints = [t["key"] for t in n["spec"].get("taints", [])]
        return conds.get("Ready") == "True" and not taints
    _wait("the node Ready and untainted", node_ready, UP_TIMEOUT_S, "kubelet.log")
    _wait("the default ServiceAccount", lambda: kube.exists("/api/v1/namespaces/default/serviceaccounts/default"),
          60, "kube-controller-manager.log")
    _wait("CoreDNS", lambda: dns_query(f"kubernetes.default.svc.{CLUSTER_DOMAIN}")[1] == [API_SERVICE_IP],
          60, "coredns.log")
    say(f"node {NODE_NAME} Ready in {time.monotonic() - t0:.1f} s; KUBECONFIG={ADMIN_KUBECONFIG}")


def down(quiet=False):
    """Stops everything `up` started and removes what it made on the machine."""
    pid = init_pid()
    if pid is not None:
        # The kubelet first, so that it does not restart what is being stopped; then the whole
        # PID namespace goes with its init.
        node_run(["pkill", "-TERM", "-x", "kubelet"], check=False)
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 15
        while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
            time.sleep(0.1)
        if os.path.exists(f"/proc/{pid}"):
            os.kill(pid, signal.SIGKILL)
        # The namespace's other processes are killed by the kernel as its init ends; wait for
        # the last of them (containers in their own nested PID namespaces included).
        deadline = time.monotonic() + 15
        while _node_processes() and time.monotonic() < deadline:
            time.sleep(0.1)
        if not quiet:
            say("node processes stopped")
    INIT_PID_FILE.unlink(missing_ok=True)
    if run("ip", "netns", "pids", NETNS, check=False).returncode == 0 or \
            pathlib.Path(f"/run/netns/{NETNS}").exists():
        run("ip", "netns", "del", NETNS, check=False)
    if run("ip", "link", "show", HOST_IF, check=False).returncode == 0:
        run("ip", "link", "del", HOST_IF, check=False)
    remove_cgroups()
    restore_sysctls()


def _node_processes():
    """PIDs of processes still in the node's network namespace or its pods' (none after down)."""
    try:
        node_ns = os.stat(f"/run/netns/{NETNS}").st_ino
    except OSError:
        return []
    pids = []
    for p in pathlib.Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                if os.stat(p / "ns" / "net").st_ino == node_ns:
                    pids.append(int(p.name))
            except OSError:
                pass
    return pids


def pod_sandboxes():
    """{pod IP: the host PID of its sandbox's pause process}, for every pod on the node: the pod's
    network namespace is that process's (nsenter --target=PID --net)."""
    found = {}
    for p in pathlib.Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            if not (p / "cmdline").read_bytes().startswith(b"/pause"):
                continue
        except OSError:
            continue
        out = run("nsenter", f"--target={p.name}", "--net", "ip", "-4", "-o", "addr", "show", "eth0",
                  check=False, timeout=10).stdout
        for word in out.split():
            if "/" in word and word[0].isdigit():
                found[word.split("/")[0]] = int(p.name)
    return found


def processes_in_netns(pid):
    """{PID: argv} of every process in the network namespace of PID (a pod's, with pod_sandboxes)."""
    want = os.stat(f"/proc/{pid}/ns/net").st_ino
    found = {}
    for p in pathlib.Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                if os.stat(p / "ns" / "net").st_ino == want:
                    found[int(p.name)] = (p / "cmdline").read_bytes().split(b"\0")
            except OSError:
                pass
    return found


def leftovers():
    """What of the node is still on the machine: for tests that `down` leaves nothing."""
    found = []
    if init_pid() is not None:
        found.append("the node's init")
    for p in pathlib.Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            exe = os.readlink(p / "exe")
        except OSError:
            continue
        if exe.startswith(str(BIN)) or exe.endswith(("/containerd", "/containerd-shim-runc-v2", "/etcd",
                                                     "nodeinit.py")):
            found.append(f"process {p.name} ({exe})")
    if pathlib.Path(f"/run/netns/{NETNS}").exists():
        found.append(f"network namespace {NETNS}")
    if run("ip", "link", "show", HOST_IF, check=False).returncode == 0:
        found.append(f"link {HOST_IF}")
    for line in pathlib.Path("/proc/self/mountinfo").read_text().splitlines():
        mnt = line.split()[4]
        if mnt.startswith((str(STATE), str(RUN))) or "/run/netns/cni-" in mnt:
            found.append(f"mount {mnt}")
    for d in node_cgroups():
        found.append(f"cgroup {d}")
    rules = run("iptables-save", check=False).stdout
    if "KUBE-" in rules:
        found.append("iptables rules KUBE-* in the machine's namespace")
    return found


def status():
    pid = init_pid()
    if pid is None:
        print("down")
        return 1
    try:
        n = admin().get(f"/api/v1/nodes/{NODE_NAME}")
        conds = {c["type"]: c["status"] for c in n["status"].get("conditions", [])}
        print(f"up: node {NODE_NAME} Ready={conds.get('Ready')}, API {SERVER}, KUBECONFIG={ADMIN_KUBECONFIG}")
        return 0
    except Exception as e:  # noqa: BLE001
        print(f"init running (pid {pid}) but the API server does not answer: {e}")
        return 1


def main(argv):
    cmd = argv[1] if len(argv) > 1 else ""
    if cmd == "up":
        try:
            up()
        except Exception as e:
            say(f"up failed: {e}")
            down(quiet=True)
            return 1
        return 0
    if cmd == "down":
        down()
        left = leftovers()
        for thing in left:
            say(f"left behind: {thing}")
        return 1 if left else 0
    if cmd == "status":
        return status()
    if cmd == "env":
        print(f"export KUBECONFIG={ADMIN_KUBECONFIG}")
        return 0
    print("usage: cluster.py up|down|status|env", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
