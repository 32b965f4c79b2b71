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
import os
import pathlib
import re
import shlex
import subprocess
import sys

import cluster
from test_shipped_manifests import SQUARES, pod_logs, vcjob_phase

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

    def run(self, commands, check=True):
        """Runs COMMANDS from the top of the repository (the pages' paths are relative to it);
        their output, or with CHECK False None when they fail."""
        script = "set -euo pipefail\n"
        for c in self.prelude + commands:
            script += c + "\n"
            if re.match(r"\s*(\w+=\S+\s+)*NS=", c):  # the page names its namespace: ours instead
                script += f"NS={self.ns}\n"
        out = subprocess.run(["bash", "-c", script], env=self.env, cwd=REPO, capture_output=True, text=True,
                             timeout=120)
        if not check and out.returncode != 0:
            return None
        assert out.returncode == 0, f"{script}\n{out.stdout}\n{out.stderr}"
        return out.stdout

    def keep(self, commands):
        """Variables later blocks rely on (REGISTRY, NS): their assignment lines are kept."""
        self.prelude += [c for c in commands if re.match(r"\s*\w+=\S+(\s+\w+=\S+)*\s*(#.*)?$", c)]


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


def job_done(node, namespace, name):
    j = node.get(f"/apis/batch/v1/namespaces/{namespace}/jobs/{name}")
    conditions = {c["type"]: c["status"] for c in j.get("status", {}).get("conditions", [])}
    if conditions.get("Failed") == "True":
        raise AssertionError(f"the Job failed: {j['status']}")
    return conditions.get("Complete") == "True"


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
                    lambda: job_done(node, restricted_namespace, "ray-indexed"), "Job ray-indexed Complete")


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
