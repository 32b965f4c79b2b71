"""The Files rows of tests/FAULTS.md: the files a pod gives rayboot are unreadable, missing, of
the wrong kind (a directory, a FIFO), on a read-only root filesystem, or rayboot runs as UID 1000
as in Ray's images. Each outcome is a clear error naming the file with exit 2, or the documented
default, within a timeout: never a hang, never a crash (docs/configuration.md, "Files rayboot reads")."""
import json
import os
import pathlib
import shutil
import stat
import subprocess
import sys
import tempfile

import pytest

from fake_gcs import DRAIN, Node
from test_pid1 import ray_started

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "fixtures"))
from podgen import volcano_pod  # noqa: E402

UID = 1000  # the `ray` user of rayproject/ray images
VERSION = "..2026_11_21_10_15_42.1"  # the ConfigMap version podgen writes
KEY = f"etc/volcano/{VERSION}/worker.host"  # a key rayboot reads (through ..data)
CPU_MAX, MEMORY_MAX = "sys/fs/cgroup/cpu.max", "sys/fs/cgroup/memory.max"
NAMESPACE_FILE = "var/run/secrets/kubernetes.io/serviceaccount/namespace"
PLAN_TIMEOUT_S = 10  # a plan takes milliseconds; this only turns a hang into a failure


@pytest.fixture
def world_dir():
    """A directory UID 1000 can reach (pytest's tmp_path is root's alone), removed afterwards."""
    d = pathlib.Path(tempfile.mkdtemp(prefix="rayboot-files-", dir="/tmp"))
    d.chmod(0o755)
    yield d
    shutil.rmtree(d)  # root ignores the modes the tests set


@pytest.fixture
def pod(world_dir):
    """A Volcano worker (task worker, index 1, namespace ml) with cgroup v2 limits of 2 CPUs and
    4 GiB; returns (root, env)."""
    root = world_dir / "root"
    env = volcano_pod(root, "rc", "ml", {"head": 1, "worker": 2}, ("worker", 1), env_lists=False)
    cgroup = root / "sys/fs/cgroup"
    cgroup.mkdir(parents=True)
    (cgroup / "cpu.max").write_text("200000 100000\n")
    (cgroup / "memory.max").write_text("4294967296\n")
    return root, env


def as_uid(uid):
    return {} if uid is None else {"user": uid, "group": uid, "extra_groups": []}


def plan(rayboot, root, env, uid=None):
    """`rayboot plan --format=json`: (exit code, plan or None, stderr)."""
    try:
        r = subprocess.run([str(rayboot), "plan", "--format=json"], env=dict(env, RAYBOOT_ROOT=str(root)),
                           capture_output=True, text=True, timeout=PLAN_TIMEOUT_S, **as_uid(uid))
    except subprocess.TimeoutExpired:
        pytest.fail(f"rayboot plan hung (more than {PLAN_TIMEOUT_S} s)")
    return r.returncode, (json.loads(r.stdout) if r.returncode == 0 else None), r.stderr


def replace(path: pathlib.Path, kind: str):
    """Puts a FIFO or an empty directory where path was."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()


def test_the_pod_plans_as_root_and_as_uid_1000_alike(rayboot_bin, pod):
    # The baseline the faults below change: both resources are read, no warning.
    root, env = pod
    code, as_root, err = plan(rayboot_bin, root, env)
    assert code == 0, err
    assert "--num-cpus=2" in as_root["ray_start"] and "--memory=4294967296" in as_root["ray_start"]
    assert as_root["warnings"] == [] and (as_root["role"], as_root["index"]) == ("worker", 1)
    code, as_ray, err = plan(rayboot_bin, root, env, uid=UID)
    assert code == 0, err
    assert as_ray == as_root


# (1) Unreadable /etc/volcano: exit 2 naming the file, whoever runs rayboot.
@pytest.mark.parametrize("target,fault,uid,message", [
    ("etc/volcano", "mode-000", UID, "/etc/volcano: Permission denied"),
    (f"etc/volcano/{VERSION}", "mode-000", UID, f"/etc/volcano/{VERSION}: Permission denied"),
    (KEY, "mode-000", UID, f"/{KEY}: Permission denied"),
    (KEY, "directory", None, f"/{KEY}: not a regular file (a directory)"),
    ("etc/volcano", "file", None, "/etc/volcano: Not a directory"),
    ("etc/hosts", "directory", None, "/etc/hosts: not a regular file (a directory)"),
    ("etc/hosts", "mode-000", UID, "/etc/hosts: Permission denied"),
], ids=["volcano-dir-000", "version-dir-000", "key-000", "key-is-a-directory", "volcano-is-a-file",
        "hosts-is-a-directory", "hosts-000"])
def test_unreadable_pod_file_exits_2_naming_it(rayboot_bin, pod, target, fault, uid, message):
    root, env = pod
    path = root / target
    if fault == "mode-000":
        path.chmod(0)
    elif fault == "directory":
        replace(path, "directory")
    else:
        shutil.rmtree(path)
        path.write_text("not a directory\n")
    code, _, err = plan(rayboot_bin, root, env, uid=uid)
    assert code == 2, err
    assert f"rayboot: error: {message}" in err, err


# (2) Missing cgroup files: the documented default (Ray decides), silently.
@pytest.mark.parametrize("missing,kept,dropped", [
    ([CPU_MAX], ["--memory=4294967296"], ["--num-cpus"]),
    ([MEMORY_MAX], ["--num-cpus=2"], ["--memory"]),
    (["sys"], [], ["--num-cpus", "--memory"]),
], ids=["no-cpu.max", "no-memory.max", "no-cgroup-fs"])
def test_missing_cgroup_files_leave_the_resource_to_ray(rayboot_bin, pod, missing, kept, dropped):
    root, env = pod
    for rel in missing:
        p = root / rel
        shutil.rmtree(p) if p.is_dir() else p.unlink()
    code, p, err = plan(rayboot_bin, root, env)
    assert code == 0, err
    for arg in kept:
        assert arg in p["ray_start"], p["ray_start"]
    for flag in dropped:
        assert not any(a.split("=")[0] == flag for a in p["ray_start"]), p["ray_start"]
    assert p["warnings"] == [] and "warning" not in err, err


# ... and unreadable ones: the same default, with a warning naming the file.
@pytest.mark.parametrize("fault,uid,why", [
    ("mode-000", UID, "Permission denied"),
    ("directory", None, "not a regular file (a directory)"),
    ("fifo", None, "not a regular file (a FIFO)"),
], ids=["cpu.max-000", "cpu.max-is-a-directory", "cpu.max-is-a-fifo"])
def test_unreadable_cgroup_file_warns_and_leaves_the_resource_to_ray(rayboot_bin, pod, fault, uid, why):
    root, env = pod
    if fault == "mode-000":
        (root / CPU_MAX).chmod(0)
    else:
        replace(root / CPU_MAX, fault)
    code, p, err = plan(rayboot_bin, root, env, uid=uid)
    assert code == 0, err
    assert not any(a.startswith("--num-cpus") for a in p["ray_start"]), p["ray_start"]
    assert "--memory=4294967296" in p["ray_start"]
    assert p["warnings"] == [f"/{CPU_MAX}: {why}; leaving that resource to Ray"], p["warnings"]
    assert f"rayboot: warning: /{CPU_MAX}: {why}" in err


# (5) A FIFO where a file is expected: never a hang (open(2) of a FIFO blocks until a writer
# comes, and rayboot blocks SIGTERM early, so such a pod could only be SIGKILLed). An error
# naming the file where the file is required, the default where absence is allowed.
@pytest.mark.parametrize("target,code,message", [
    ("etc/hosts", 2, "rayboot: error: /etc/hosts: not a regular file (a FIFO)"),
    (KEY, 2, f"rayboot: error: /{KEY}: not a regular file (a FIFO)"),
    ("etc/volcano/..data", 2, "rayboot: error: /etc/volcano/..data: not a regular file (a FIFO)"),
    ("etc/resolv.conf", 0, None),
    (NAMESPACE_FILE, 0, None),
], ids=["hosts", "volcano-key", "volcano-..data", "resolv.conf", "service-account-namespace"])
def test_fifo_for_a_pod_file_never_blocks(rayboot_bin, pod, target, code, message):
    root, env = pod
    replace(root / target, "fifo")
    got, p, err = plan(rayboot_bin, root, env)
    assert got == code, err
    if message:
        assert message in err, err
    else:
        # Optional files: the plan comes from the others (the namespace and domain from the
        # pod's FQDN in /etc/hosts).
        assert (p["role"], p["namespace"], p["head"]["fqdn"]) == (
            "worker", "ml", "rc-head-0.rc.ml.svc.cluster.local"), p


def test_fifo_runtime_env_file_exits_2_naming_it(rayboot_bin, tmp_path, closed_port):
    fifo = tmp_path / "runtime_env.json"
    os.mkfifo(fifo)
    try:
        r = subprocess.run([str(rayboot_bin), "submit", "--address", f"http://127.0.0.1:{closed_port}", "--", "true"],
                           env={"PATH": "/usr/bin:/bin", "RAYBOOT_RUNTIME_ENV_FILE": str(fifo)},
                           capture_output=True, text=True, timeout=PLAN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pytest.fail("rayboot submit hung on a FIFO runtime_env file")
    assert r.returncode == 2, r.stderr
    assert f"RAYBOOT_RUNTIME_ENV_FILE: {fifo}: not a regular file (a FIFO)" in r.stderr


def test_fifo_resolv_conf_is_named_while_waiting(run, pod_root, closed_port):
    # A worker that must ask DNS for its head: the wait names the file; exit 75 at the deadline.
    replace(pod_root / "etc" / "resolv.conf", "fifo")
    r = run({"RAYBOOT_ROLE": "worker", "RAYBOOT_HEAD_ADDRESS": f"head.rayboot.test:{closed_port}",
             "RAYBOOT_WAIT_TIMEOUT": "1"})
    assert r.wait(20) == 75, r.stderr
    assert "last: DNS: /etc/resolv.conf: not a regular file (a FIFO)" in r.stderr, r.stderr


def test_fifo_at_the_real_resolv_conf_is_named_not_waited_on(run, tmp_path, closed_port):
    # c-ares (rayboot's and libcurl's) reads the host's /etc/resolv.conf whatever RAYBOOT_ROOT
    # says: a FIFO there used to hold the prober's start-up until it was killed, unnamed.
    fifo = tmp_path / "resolv.fifo"
    os.mkfifo(fifo)
    r = run({"RAYBOOT_ROLE": "worker", "RAYBOOT_HEAD_ADDRESS": f"127.0.0.1:{closed_port}"},
            wrap=[sys.executable, HERE / "bind_over.py", fifo, "/etc/resolv.conf", "--"])
    assert r.wait(20) == 70, r.stderr
    assert "/etc/resolv.conf: not a regular file (a FIFO)" in r.stderr, r.stderr
    assert "did not answer" not in r.stderr, r.stderr


def worker_env(gcs, **extra):
    gcs.nodes[0].ip = "10.0.0.1"  # the head is elsewhere; this pod's node is 127.0.0.1
    gcs.nodes.append(Node("127.0.0.1", node_id=b"\x42" * 28))
    env = {"RAYBOOT_ROLE": "worker", "RAYBOOT_HEAD_ADDRESS": f"127.0.0.1:{gcs.port}", "RAYBOOT_POD_IP": "127.0.0.1",
           "RAYBOOT_POD_NAME": "ray-worker-0"}
    env.update(extra)
    return env


def stop_gracefully(r, gcs):
    r.proc.send_signal(15)
    assert r.wait(15) == 0, r.stderr
    assert DRAIN in gcs.methods(), gcs.methods()


def test_fifo_termination_log_does_not_hang_the_pods_end(run, gcs, tmp_path):
    fifo = tmp_path / "termination-log"
    os.mkfifo(fifo)  # nobody reads it
    r = run(worker_env(gcs, RAYBOOT_TERMINATION_LOG=str(fifo)))
    r.wait_for_log("started ray")
    ray_started(tmp_path)
    stop_gracefully(r, gcs)
    assert f"cannot write the termination message to {fifo}: No such device or address" in r.stderr


# (4) UID 1000, as in Ray's images: the whole life of a worker, Ray started as the same user.
def test_worker_runs_as_uid_1000(run, gcs, tmp_path, world_dir):
    shared = world_dir / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    (tmp_path / "ray.log").symlink_to(shared / "ray.log")  # where the fixture looks for stragglers
    termlog = shared / "termination-log"
    termlog.write_text("")
    termlog.chmod(0o666)  # the kubelet's file is writable by the container's user
    root = world_dir / "root"
    (root / "etc").mkdir(parents=True)
    (root / "etc" / "hosts").write_text("127.0.0.1\tlocalhost\n127.0.0.1\tpod-0\n")
    r = run(worker_env(gcs, RAYBOOT_ROOT=str(root), FAKE_RAY_LOG=str(shared / "ray.log"),
                       RAYBOOT_TERMINATION_LOG=str(termlog)), user=UID)
    r.wait_for_log("started ray")
    started = ray_started(tmp_path)
    status = pathlib.Path(f"/proc/{started['pid']}/status").read_text()
    assert f"Uid:\t{UID}\t{UID}\t{UID}\t{UID}" in status, status
    stop_gracefully(r, gcs)
    assert termlog.read_text().startswith("rayboot: "), termlog.read_text()
    # No warning but the open-files one, which a hard limit below 65536 brings to any user.
    warnings = [ln for ln in r.stderr.splitlines() if "warning" in ln and "open files: the hard limit" not in ln]
    assert not warnings, r.stderr


# (3) A read-only root filesystem: rayboot writes nothing but the termination message, so a
# worker's whole life works; a termination log it cannot write is a warning, not a failure.
def test_worker_runs_on_a_read_only_root_filesystem(run, gcs, tmp_path, pod_root):
    writable = tmp_path / "emptydir"
    writable.mkdir()
    (tmp_path / "ray.log").symlink_to(writable / "ray.log")
    termlog = tmp_path / "termination-log"  # on the read-only root
    termlog.write_text("")
    r = run(worker_env(gcs, FAKE_RAY_LOG=str(writable / "ray.log"), RAYBOOT_TERMINATION_LOG=str(termlog)),
            wrap=[sys.executable, HERE / "readonly_root.py", writable, "--"])
    r.wait_for_log("started ray")
    ray_started(tmp_path)
    stop_gracefully(r, gcs)
    assert f"cannot write the termination message to {termlog}: Read-only file system" in r.stderr, r.stderr
    assert termlog.read_text() == ""
    assert stat.S_ISREG(os.stat(pod_root / "etc" / "hosts").st_mode)
