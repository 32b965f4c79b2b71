"""A real NetworkPolicy enforcer on the test node, for test_network_policy.py: kube-router's
firewall (v2.1.0, built by build.sh from the Go module proxy), which turns each NetworkPolicy into
iptables rules and ipsets in the node's network namespace. Test-only: never shipped (the module
proxy lists security reports against this version, harmless inside the node's namespaces).

Why kube-router: the node's CNI (the bridge plugin) enforces no policy, and
sigs.k8s.io/kube-network-policies needs nftables' `queue`, which this kernel lacks
(../shared/facts/kuberay-operator.md); kube-router's firewall needs iptables and ipset only.

What differs from its DaemonSet (daemonset/kube-router-firewall-daemonset.yaml in the module):
- a node process, as the other components (the node has no image of it), with a client
  certificate of its own bound to the ClusterRole its kubeadm manifest grants, trimmed to what
  the firewall reads;
- its router and service proxy are off, as in that DaemonSet: kube-proxy serves Services here;
- the node's bridge must hand bridged frames to iptables (`bridge-nf-call-iptables`), which
  kube-router's router would set and its firewall alone does not: set here, in the node's
  network namespace only;
- at the end its chains, the rules that jump to them and its ipsets are removed, so that the
  tests after these run on the unenforced bridge as before (its `--cleanup-config` leaves the
  chains behind, empty)."""
import time

import cluster

KUBE_ROUTER = cluster.BIN / "kube-router"
USER = "kube-router"                 # the CN of its client certificate (cluster.make_pki)
HEALTH_PORT = 20244
_bridge_nf_before = None   # the node's bridge-nf-call-iptables before start()
ROLE = {
    "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "kube-router-test"},
    "rules": [
        {"apiGroups": [""], "resources": ["namespaces", "pods", "nodes", "services", "endpoints"],
         "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["networking.k8s.io"], "resources": ["networkpolicies"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["get", "list", "watch"]},
    ]}


TABLES = ("filter", "mangle", "nat", "raw")
CHAIN_PREFIXES = ("KUBE-ROUTER-", "KUBE-NWPLCY-", "KUBE-POD-FW-")


def iptables_rules(table="filter"):
    """A table of the node's network namespace, as iptables-save prints it."""
    return cluster.node_run(["iptables-save", "-t", table], check=False).stdout


def _ours(line):
    return any(p in line for p in CHAIN_PREFIXES)


def start(kube):
    """Starts kube-router's firewall on the node; returns once it is healthy and its chains are in
    the node's filter table."""
    pid = cluster.init_pid()
    if pid is None:
        raise RuntimeError("the node is not up")
    if not KUBE_ROUTER.exists():
        raise RuntimeError(f"{KUBE_ROUTER} is missing: run `make node` (tests/node/build.sh)")
    t0 = time.monotonic()
    kube.grant_cluster_role(ROLE, USER)
    global _bridge_nf_before
    _bridge_nf_before = cluster.node_run(["cat", "/proc/sys/net/bridge/bridge-nf-call-iptables"]).stdout.strip()
    cluster.node_run(["sysctl", "-qw", "net.bridge.bridge-nf-call-iptables=1"])
    cluster.spawn(pid, "kube-router", [
        KUBE_ROUTER, f"--kubeconfig={cluster.CONF / 'kube-router.kubeconfig'}",
        f"--hostname-override={cluster.NODE_NAME}", "--run-firewall=true", "--run-router=false",
        "--run-service-proxy=false", f"--health-port={HEALTH_PORT}", "--metrics-port=0"])

    def healthy():
        return cluster.node_run(["curl", "-sf", "-m", "2", f"http://127.0.0.1:{HEALTH_PORT}/healthz"],
                                check=False).returncode == 0 and "KUBE-ROUTER-FORWARD" in iptables_rules()
    kube.wait(f"kube-router's firewall (see {cluster.LOGS / 'kube-router.log'})", healthy, 120, interval=1)
    cluster.say(f"kube-router's firewall running ({time.monotonic() - t0:.1f} s)")


def stop():
    """Stops kube-router and removes its chains, the rules that use them and its ipsets from the
    node, restoring the bridge's setting."""
    cluster.node_run(["pkill", "-TERM", "-x", "kube-router"], check=False)
    deadline = time.monotonic() + 30
    while cluster.node_run(["pgrep", "-x", "kube-router"], check=False).returncode == 0:
        if time.monotonic() > deadline:
            cluster.node_run(["pkill", "-KILL", "-x", "kube-router"], check=False)
            break
        time.sleep(0.2)
    for table in TABLES:
        rules = iptables_rules(table)
        if _ours(rules):
            kept = "".join(line + "\n" for line in rules.splitlines() if not _ours(line))
            cluster.node_run(["iptables-restore", "-T", table], input=kept, check=True)
    # Only kube-router makes ipsets in the node (kube-proxy's iptables mode uses none).
    cluster.node_run(["ipset", "destroy"], check=False)
    cluster.node_run(["sysctl", "-qw", f"net.bridge.bridge-nf-call-iptables={_bridge_nf_before or '0'}"],
                     check=False)
    left = [f"{t}: {line}" for t in TABLES for line in iptables_rules(t).splitlines() if _ours(line)]
    sets = cluster.node_run(["ipset", "list", "-n"], check=False).stdout.split()
    if left or sets:
        raise RuntimeError(f"kube-router left rules {left[:3]} and ipsets {sets[:3]} in the node")


def pod_enforced(namespace, pod):
    """Whether kube-router has put POD behind a firewall chain that rejects what no policy allows."""
    return f"rule to REJECT traffic destined for POD name:{pod} namespace: {namespace}" in iptables_rules()
