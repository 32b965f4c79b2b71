"""The quickstarts as a newcomer runs them: the shell commands of README.md's Quickstart and of
docs/quickstart.md's sections, read from the pages' own ```sh blocks (never retyped here), run by
bash with the kubectl `make node` builds, on the real node; then the page's own `kubectl logs`
line must show the example program's result.

What is not run as written, and why:
- `kubectl create namespace $NS`: the test's namespace already exists (made by the fixture, under
  Pod Security "restricted", deleted afterwards); NS is set to it after the page's own line.
- `kubectl ... -w` (a watch, for a person to look at): the test waits for the same state itself.
- The `kubectl logs` line runs once the workload is done, and its output is what is checked.
- kubectl is a thin wrapper that cuts the CPU requests of what `apply -f -` reads, as every
  shipped-manifest test does (test_shipped_manifests.for_this_node: 3 pods of 2 CPUs cannot share
  a 2-core node). REGISTRY stays the page's placeholder: the node's images carry those names."""
import json
import os
import pathlib
import re
import shlex
import subprocess
import sys

import pytest

import cluster
from test_shipped_manifests import SQUARES, example_program, job_complete, pod_logs, vcjob_phase

REPO = pathlib.Path(__file__).resolve().parents[2]
HERE = pathlib.Path(__file__).resolve().parent
# kubectl, as the user's, but with the CPU requests of `apply -f -` cut for this 2-core node.
KUBECTL_WRAPPER = """import os, subprocess, sys
sys.path.insert(0, {here!r})
import yaml
from test_shipped_manifests import for_this_node
real, args = os.environ["QUICKSTART_KUBECTL"], sys.argv[1:]
if "apply" in args and "-" in args:
    docs = [for_this_node(d, os.environ["QUICKSTART_NS"]) for d in yaml.safe_load_all(sys.stdin.read()) if d]
    sys.exit(subprocess.run([real, *args], input=yaml.safe_dump_all(docs), text=True).returncode)
os.execv(real, [real, *args])
"""


def sh_blocks(page):
    """{heading: [commands of each ```sh block under it]}, a command's continuation lines joined."""
    blocks, heading, block = {}, None, None
    for line in (REPO / page).read_text().splitlines():
        if block is not None:
            if line.startswith("```"):
                blocks.setdefault(heading, []).append(join_continuations(block))
                block = None
            else:
                block.append(line)
        elif line.startswith("#"):
            heading = line.lstrip("#").strip()
        elif line.strip() == "```sh":
            block = []
    return blocks


def join_continuations(lines):
    out = []
    for line in lines:
        if out and out[-1].endswith("\\"):
            out[-1] = out[-1][:-1] + " " + line.strip()
        elif line.strip():
            out.append(line)
    return out


def section(page, number_or_title):
    """The sh blocks of the section whose heading starts with NUMBER_OR_TITLE ("2." or "Quickstart")."""
    (found,) = [b for h, b in sh_blocks(page).items() if h.startswith(number_or_title)]
    return found


def split(commands):
    """(to run, the logs line): watches and the namespace's creation left out (the module's
    docstring says why)."""
    run, logs = [], None
    for c in commands:
        words = shlex.split(c, comments=True)
        if words[:3] == ["kubectl", "create", "namespace"] or "-w" in words:
            continue
        if words[:1] == ["kubectl"] and "logs" in words:
            logs = c
            continue
        run.append(c)
    return run, logs


class Shell:
    """bash with the page's variables, our namespace, and the wrapped kubectl on PATH."""

    def __init__(self, namespace, tmp_path):
        bindir = tmp_path / "bin"
        bindir.mkdir()
        wrapper = bindir / "kubectl"
        wrapper.write_text(f"#!{sys.executable}\n" + KUBECTL_WRAPPER.format(here=str(HERE)))
        wrapper.chmod(0o755)
        self.ns = namespace
        self.env = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}", KUBECONFIG=str(cluster.ADMIN_KUBECONFIG),
                        QUICKSTART_KUBECTL=str(cluster.BIN / "kubectl"), QUICKSTART_NS=namespace)
        self.prelude = []

    def run(self, commands, check=True, timeout=120):
        """Runs COMMANDS from the top of the repository (the pages' paths are relative to it);
        their output, or with CHECK False None when they fail."""
        script = "set -euo pipefail\n"
        for c in self.prelude + commands:
            script += c + "\n"
            if re.match(r"\s*(\w+=\S+\s+)*NS=", c):  # the page names its namespace: ours instead
                script += f"NS={self.ns}\n"
        out = subprocess.run(["bash", "-c", script], env=self.env, cwd=REPO, capture_output=True, text=True,
                             timeout=timeout)
        if not check and out.returncode != 0:
            return None
        assert out.returncode == 0, f"{script}\n{out.stdout}\n{out.stderr}"
        return out.stdout

    def keep(self, commands):
        """Variables later blocks rely on (REGISTRY, NS): their assignment lines are kept."""
        self.prelude += [c for c in commands if re.match(r"\s*\w+=\S+(\s+\w+=\S+)*\s*(#.*)?$", c)]


def around_watch(commands):
    """(before, after): the commands before and after the section's watch (`kubectl ... -w`, for a
    person to look at: the test waits for the same state itself), the namespace's creation left
    out (the module's docstring says why)."""
    (watch,) = [i for i, c in enumerate(commands) if "-w" in shlex.split(c, comments=True)]
    keep = [c for c in commands if shlex.split(c, comments=True)[:3] != ["kubectl", "create", "namespace"]]
    return keep[:keep.index(commands[watch])], keep[keep.index(commands[watch]) + 1:]


def before_any(shell):
    """docs/quickstart.md's "Before any of them": the token's Secret and the sidecar's RBAC."""
    for commands in section("docs/quickstart.md", "Before any of them"):
        to_run, _ = split(commands)
        if any("port-forward" in c or "get secret" in c for c in to_run):
            continue  # the dashboard's block: for a person, while a head runs
        shell.run(to_run)
        shell.keep(to_run)


def wait_for_result(node, namespace, shell, logs, done, what, timeout=420):
    try:
        node.wait(what, done, timeout, interval=2)
        out = node.wait("the result in the page's logs command", lambda: has_result(shell.run([logs], check=False)),
                        timeout, interval=2)
    except TimeoutError as e:
        raise AssertionError(f"{e}\n{pod_logs(node, namespace)}") from None
    return out


def has_result(log):
    return log if log and SQUARES in log and "nodes: 3" in log else None


def test_readme_quickstart_volcano(node, restricted_namespace, volcano, tmp_path):
    """README.md's Quickstart, whole (its own Secret and RBAC lines): the Volcano Job completes and
    the head's log, as the README's logs line shows it, has the squares from 3 nodes."""
    shell = Shell(restricted_namespace, tmp_path)
    (commands,) = section("README.md", "Quickstart")
    to_run, logs = split(commands)
    shell.run(to_run)
    shell.keep(to_run)
    wait_for_result(node, restricted_namespace, shell, logs,
                    lambda: vcjob_phase(node, restricted_namespace, "ray-cluster") == "Completed", "vcjob Completed")


def test_quickstart_indexed_job(node, restricted_namespace, tmp_path):
    shell = Shell(restricted_namespace, tmp_path)
    before_any(shell)
    to_run, logs = split(section("docs/quickstart.md", "2.")[0])
    shell.run(to_run)
    wait_for_result(node, restricted_namespace, shell, logs,
                    lambda: job_complete(node, restricted_namespace, "ray-indexed"), "Job ray-indexed Complete")


def test_quickstart_lws(node, restricted_namespace, lws, tmp_path):
    shell = Shell(restricted_namespace, tmp_path)
    before_any(shell)
    to_run, logs = split(section("docs/quickstart.md", "3.")[0])
    shell.run(to_run)
    wait_for_result(node, restricted_namespace, shell, logs,
                    lambda: node.exists(f"/api/v1/namespaces/{restricted_namespace}/pods/ray-lws-0"), "the leader")


def test_quickstart_jobset(node, restricted_namespace, jobset, tmp_path):
    shell = Shell(restricted_namespace, tmp_path)
    before_any(shell)
    to_run, logs = split(section("docs/quickstart.md", "4.")[0])
    shell.run(to_run)

    def completed():
        js = node.get(f"/apis/jobset.x-k8s.io/v1alpha2/namespaces/{restricted_namespace}/jobsets/ray-jobset")
        return js.get("status", {}).get("terminalState") == "Completed"
    wait_for_result(node, restricted_namespace, shell, logs, completed, "JobSet Completed")


def test_quickstart_kuberay(node, restricted_namespace, kuberay, tmp_path):
    """docs/quickstart.md's section 5 on the real KubeRay v1.6.2 operator: the page's apply, then
    the RayCluster ready (what the page's watch shows), then the rest of the page's block as
    written: its `kubectl wait` for every pod Ready, and its `ray job submit` through
    `kubectl exec` in the head, whose output must be the example's result from 3 nodes."""
    shell = Shell(restricted_namespace, tmp_path)
    before_any(shell)
    before, after = around_watch(section("docs/quickstart.md", "5.")[0])
    shell.run(before)
    shell.keep(before)
    path = f"/apis/ray.io/v1/namespaces/{restricted_namespace}/rayclusters/raycluster-rayboot"
    try:
        node.wait("RayCluster raycluster-rayboot ready",
                  lambda: node.get(path).get("status", {}).get("state") == "ready", 420, interval=2)
    except TimeoutError as e:
        raise AssertionError(f"{e}\n{pod_logs(node, restricted_namespace)}") from None
    out = shell.run(after, timeout=600)
    assert has_result(out), f"{out}\n{pod_logs(node, restricted_namespace)}"
    assert "succeeded" in out, out


# docs/vm.md, without Kubernetes and without Docker ----------------------------------------------
# The page's ```sh blocks run in bash as written, with `docker` (and for the VM block `rayboot`)
# a recorder on PATH: the shell does its own expansions ($TOKEN, $(openssl ...), $PWD, quotes) and
# the recorder keeps each call's arguments and variables. Each `docker run` or `rayboot` line then
# runs on a machine of the pod simulator (tests/e2e/podsim.py's Hosts: a network namespace, its
# own PID 1, hostname, /etc/hosts and /dev/shm), with the real rayboot and the real Ray of
# build/venv. What is emulated, not run:
# - Docker itself: the image is the host's files (rayboot from build/bin, Ray from build/venv, not
#   rayproject/ray and not as UID 1000); its entrypoint is read from images/Dockerfile; a
#   container's hostname is a random id with its own address on an /etc/hosts line, as Docker
#   writes it; the network's DNS (the names of the running containers) is the simulator's
#   dnsmasq; `docker network create` makes nothing (the simulator's network is there);
#   `-v SRC:DST` is no mount: DST in the command is replaced by SRC; `-d`, `--rm` are ignored.
# - The VM block's machines get the page's addresses (10.0.0.5 for the head, 10.0.0.6 for a
#   worker, on a network 10.0.0.0/24 of the test's own); the second worker, for which the page's
#   "on each worker" line is meant too, gets 10.0.0.7 as its RAYBOOT_POD_IP. head.example.com is
#   a name in the simulator's DNS.
# - `docker stop -t` is not run: the page's claim (Docker's default 10 s against rayboot's 30 s)
#   is test_vm_page_stop_advice_matches_rayboots_grace's.
sys.path.insert(0, str(REPO / "tests" / "e2e"))
import podsim  # noqa: E402

RECORDER = """import json, os, sys
with open(os.environ["QUICKSTART_RECORD"], "a") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "env": dict(os.environ)}) + "\\n")
"""
SHELL_VARIABLES = {"_", "SHLVL", "PWD", "OLDPWD", "QUICKSTART_RECORD"}


def recorded(commands, program, workdir):
    """COMMANDS run by bash in WORKDIR with PROGRAM a recorder: [(its arguments, the variables the
    line set for it)] in the order called."""
    bindir, record = workdir / "recorder-bin", workdir / f"{program}.calls"
    bindir.mkdir(exist_ok=True)
    (bindir / program).write_text(f"#!{sys.executable}\n" + RECORDER)
    (bindir / program).chmod(0o755)
    env = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}", QUICKSTART_RECORD=str(record))
    out = subprocess.run(["bash", "-c", "set -euo pipefail\n" + "\n".join(commands)], env=env, cwd=workdir,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, f"{commands}\n{out.stderr}"
    calls = [json.loads(line) for line in record.read_text().splitlines()]
    return [(c["argv"], {k: v for k, v in c["env"].items() if env.get(k) != v and k not in SHELL_VARIABLES})
            for c in calls]


def entrypoint():
    """The Ray image's ENTRYPOINT (images/Dockerfile, exec form)."""
    (line,) = [x for x in (REPO / "images" / "Dockerfile").read_text().splitlines() if x.startswith("ENTRYPOINT ")]
    return json.loads(line.split(" ", 1)[1])


def docker_run(argv):
    """A `docker run` call's options, image and command, for the options the page uses; any other
    fails the test (it would not be emulated)."""
    assert argv[0] == "run", argv
    opts, args = {"env": {}, "volumes": {}, "name": None, "shm_size": None}, argv[1:]
    while args[0].startswith("-"):
        flag = args.pop(0)
        if flag in ("-d", "--rm"):
            continue
        if flag.startswith("--shm-size="):
            opts["shm_size"] = flag.split("=", 1)[1]
        elif flag in ("--name", "--network", "-e", "-v"):
            value = args.pop(0)
            if flag == "-e":
                opts["env"].update([value.split("=", 1)])
            elif flag == "-v":
                src, dst = value.split(":")[:2]
                opts["volumes"][dst] = src
            else:
                opts[flag[2:]] = value
        else:
            raise AssertionError(f"docker run {flag}: not emulated by this test")
    return opts, args[0], args[1:]


@pytest.fixture
def hosts_cluster(tmp_path, rayboot_bin, sidecar_bin, request):
    """A pod-simulator network for machines outside Kubernetes; request.param: its (a, b) of
    10.a.b.0/24, or None."""
    venv = pathlib.Path(sys.prefix)
    if not (venv / "bin" / "ray").exists():
        pytest.fail(f"no ray in {venv}: run the tests with build/venv/bin/python (make test does)")
    c = podsim.Cluster(tmp_path / "cluster", venv, {"rayboot": rayboot_bin, "rayboot-sidecar": sidecar_bin,
                                                    "ray": venv / "bin" / "ray", "python": venv / "bin" / "python"},
                       net=getattr(request, "param", None))
    try:
        yield c
    finally:
        c.close()
        assert not c.leftovers(), c.leftovers()


def host_logs(hosts):
    return "\n".join(f"--- {name}\n{h.log()[-4000:]}" for name, h in hosts.pods.items())


def run_to_result(hosts, head, workers):
    """Starts the machines, then: the head's command ends 0 with the example's result from 3
    nodes, and the workers leave by themselves, exit 0."""
    hosts.start()
    try:
        code = head.wait(420)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"the head did not finish\n{host_logs(hosts)}") from None
    assert code == 0 and has_result(head.log()), host_logs(hosts)
    for w in workers:
        try:
            assert w.wait(120) == 0, host_logs(hosts)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{w.name} did not leave after the head\n{host_logs(hosts)}") from None


def test_vm_page_docker_run(hosts_cluster, tmp_path):
    """docs/vm.md's `docker run` block: two workers and a head started as the page starts them,
    Ray's token on, the names found through the network's DNS; the head prints the example's
    result from 3 nodes and exits 0, and the workers leave by themselves, exit 0."""
    (block,) = section("docs/vm.md", "`docker run`")
    work = tmp_path / "work"
    work.mkdir()
    (work / "job.py").write_text(example_program())  # "job.py is yours": the quickstarts' example
    runs = [argv for argv, _ in recorded(block, "docker", work) if argv[0] == "run"]
    assert len(runs) == 3, runs
    machines, names = {}, []
    for argv in runs:
        opts, image, command = docker_run(argv)
        assert image.endswith("/ray:2.60.0-rayboot0.1.0") and image in (REPO / "docs" / "install.md").read_text()
        command = [opts["volumes"].get(a, a) for a in entrypoint() + command]
        cid = os.urandom(6).hex()  # Docker's hostname: the container's id, on its own /etc/hosts line
        machines[cid] = {"command": command, "env": opts["env"], "hosts": [f"{{ip}}\t{cid}"],
                         "dns_name": opts["name"], "shm_size": opts["shm_size"],
                         "keep": [os.path.dirname(src) for src in opts["volumes"].values()]}
        names.append(cid)
    hosts = hosts_cluster.hosts(machines)
    pods = [hosts.pod(n) for n in names]
    (head,) = [p for p in pods if p.fqdn == "ray-head"]
    assert head.env()["RAY_AUTH_MODE"] == "token" and len(head.env()["RAY_AUTH_TOKEN"]) == 64
    run_to_result(hosts, head, [p for p in pods if p is not head])
    assert "token" in head.log(), head.log()


@pytest.mark.parametrize("hosts_cluster", [(0, 0)], indirect=True)
def test_vm_page_vm_or_bare_metal(hosts_cluster, tmp_path):
    """docs/vm.md's VM block: the head's line on a machine at 10.0.0.5 named head.example.com, the
    workers' line on two machines (the module's notes say what differs); the head runs
    `python job.py` in its working directory once both workers joined."""
    (block,) = section("docs/vm.md", "A VM or bare metal")
    work = tmp_path / "work"
    work.mkdir()
    (work / "job.py").write_text(example_program())
    (head_call, head_env), (worker_call, worker_env) = recorded(block, "rayboot", work)
    assert head_env["RAYBOOT_ROLE"] == "head" and worker_env["RAYBOOT_ROLE"] == "worker"
    hosts_cluster.next_host = 5  # the page's head, 10.0.0.5, then its worker, 10.0.0.6
    machines = {"head": {"command": ["rayboot", *head_call], "env": head_env, "cwd": str(work),
                         "dns_name": worker_env["RAYBOOT_HEAD_ADDRESS"].rsplit(":", 1)[0]},
                "worker-1": {"command": ["rayboot", *worker_call], "env": worker_env},
                "worker-2": {"command": ["rayboot", *worker_call], "env": dict(worker_env, RAYBOOT_POD_IP="10.0.0.7")}}
    hosts = hosts_cluster.hosts(machines)
    head = hosts.pod("head")
    run_to_result(hosts, head, [hosts.pod("worker-1"), hosts.pod("worker-2")])
    assert head.ip == head_env["RAYBOOT_POD_IP"] and hosts.pod("worker-1").ip == worker_env["RAYBOOT_POD_IP"]


def test_vm_page_stop_advice_matches_rayboots_grace():
    """What docs/vm.md says of stopping, which no test here can run (there is no Docker): rayboot
    plans inside RAYBOOT_GRACE_PERIOD, whose default the page gives as docs/configuration.md does
    (lib/plan/settings.c's GRACE_PERIOD_DEFAULT_MS), and every stop time it tells Docker (whose
    `docker stop` waits 10 s by default), Compose and systemd to use is longer than that."""
    (row,) = [x for x in (REPO / "docs" / "configuration.md").read_text().splitlines()
              if x.startswith("| `RAYBOOT_GRACE_PERIOD` |")]
    grace = int(row.strip("| ").rsplit("|", 1)[1])
    text = (REPO / "docs" / "vm.md").read_text()
    assert f"`RAYBOOT_GRACE_PERIOD` ({grace} s by default" in text
    advice = re.findall(r"docker stop -t (\d+)|stop_grace_period: (\d+)s|TimeoutStopSec=(\d+)", text)
    assert len(advice) == 3, advice
    for found in advice:
        (seconds,) = [int(s) for s in found if s]
        assert seconds > grace, found
    assert "`docker stop` kills after 10 s" in text
