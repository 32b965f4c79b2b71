"""Ray's token is not readable through /proc by another process of the same UID (issue 28): every
container of a pod runs as UID 1000, and such a process may read /proc/PID/environ and
/proc/PID/mem of any dumpable process of that UID it can see. Real processes, all as UID 1000:
a head rayboot (its prober and rendezvous child), a worker rayboot (its prober and watch) and a
sidecar (its prober), with the token in RAY_AUTH_TOKEN or in the file RAY_AUTH_TOKEN_PATH names.
A reader of the same UID (proc_reader.py) finds the token in none of them. The user's command
and Ray (here the fake ray) hold it by design: they are exec'd, so dumpable again, and the
command is the control that the reader does read what it may. Read as root (whom non-dumpable
does not stop), each forked helper holds no environment and may write no core."""
import json
import os
import pathlib
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

from procs import eventually, free_port, rendezvous_pid

HERE = pathlib.Path(__file__).resolve().parent
UID = 1000  # the `ray` user of rayproject/ray images, as every container of the pod runs
# Switched to by setpriv, not by Popen(user=...): that makes Python fork() instead of vfork(),
# and a fork() beside the fake GCS's gRPC threads now and then dies before its exec.
AS_UID = ["setpriv", f"--reuid={UID}", f"--regid={UID}", "--clear-groups", "--"]
READER_TIMEOUT_S = 60  # it reads a few MB per process; this only turns a hang into a failure
# The system's Python: UID 1000 cannot reach the build's venv.
PY = shutil.which("python3", path="/usr/bin:/bin")


@pytest.fixture
def world_dir():
    """A directory UID 1000 can reach (pytest's tmp_path is root's alone), removed afterwards."""
    d = pathlib.Path(tempfile.mkdtemp(prefix="rayboot-secrets-", dir="/tmp"))
    d.chmod(0o755)
    (d / "root" / "etc").mkdir(parents=True)
    (d / "root" / "etc" / "hosts").write_text("127.0.0.1\tlocalhost\n127.0.0.1\tpod-0\n")
    (d / "root" / "etc" / "resolv.conf").write_text("nameserver 127.0.0.1\noptions ndots:5\n")
    shared = d / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    yield d
    shutil.rmtree(d)


@pytest.fixture
def uid_sidecar(sidecar_bin, tmp_path):
    """Starts rayboot-sidecars as UID 1000 (no PID namespace of their own: they are only killed,
    never stopped, so they never look for Ray processes); each is killed at the end."""
    started = []

    def start(env):
        log = tmp_path / f"sidecar-{time.monotonic_ns()}.err"
        proc = subprocess.Popen([*AS_UID, str(sidecar_bin)], env=env, stdout=subprocess.DEVNULL,
                                stderr=open(log, "w"), start_new_session=True)
        started.append(proc)
        eventually(lambda: "serving on port" in log.read_text() or proc.poll() is not None, 15)
        assert proc.poll() is None, log.read_text()
        return proc

    yield start
    for proc in started:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=5)


def descendants(pid: int) -> list:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            todo += [int(c) for c in pathlib.Path(f"/proc/{p}/task/{p}/children").read_text().split()]
        except OSError:
            pass
    return out


def confined(pid: int) -> bool:
    try:
        return "Seccomp:\t2" in pathlib.Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


def ours(top: int, binary) -> list:
    """top and the children forked from it that kept its program (not exec'd: Ray, the command)."""
    found = []
    for pid in descendants(top):
        try:
            if os.path.samefile(f"/proc/{pid}/exe", binary):
                found.append(pid)
        except OSError:
            pass
    return found


def read_as_uid(pids, token: str) -> dict:
    out = subprocess.run([*AS_UID, PY, str(HERE / "proc_reader.py"), *map(str, pids)], input=token.encode(),
                         capture_output=True, timeout=READER_TIMEOUT_S, check=True)
    return {int(pid): seen for pid, seen in json.loads(out.stdout).items()}


def auth_env(how: str, token: str, world: pathlib.Path) -> dict:
    if how == "RAY_AUTH_TOKEN":
        return {"RAY_AUTH_TOKEN": token}
    path = world / "auth_token"
    path.write_text(token + "\n")
    os.chown(path, UID, UID)
    path.chmod(0o600)
    return {"RAY_AUTH_TOKEN_PATH": str(path)}


@pytest.mark.parametrize("how", ["RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"])
def test_no_token_in_proc_of_our_processes(run, gcs, gcs2, sidecar_bin, rayboot_bin, uid_sidecar, world_dir, tmp_path,
                                           how):
    token = secrets.token_hex(16)
    gcs.token = gcs2.token = token
    auth = auth_env(how, token, world_dir)
    shared, rdv, done = world_dir / "shared", free_port(), world_dir / "shared" / "done"
    (tmp_path / "ray.log").symlink_to(shared / "ray.log")  # where the fixture looks for stragglers
    common = {"RAYBOOT_ROOT": str(world_dir / "root"), "FAKE_RAY_LOG": str(shared / "ray.log"),
              "RAYBOOT_RENDEZVOUS_PORT": str(rdv), **auth}
    script = f"import os, time\nprint('running', flush=True)\nwhile not os.path.exists({str(done)!r}): time.sleep(0.05)\n"
    head = run({"RAYBOOT_ROLE": "head", "RAYBOOT_PLUGIN_ARGS": f"--port={gcs.port}", **common},
               ["--", PY, "-c", script], wrap=AS_UID)
    head.wait_for_log("running", stdout=True)
    worker = run({"RAYBOOT_ROLE": "worker", "RAYBOOT_HEAD_ADDRESS": f"127.0.0.1:{gcs2.port}",
                  "RAYBOOT_POD_IP": "127.0.0.1", **common}, wrap=AS_UID)
    worker.wait_for_log("watching the head's rendezvous")
    termlog = shared / "termination-log"
    termlog.write_text("")
    termlog.chmod(0o666)
    sidecar = uid_sidecar({"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOSTNAME": "ray-job-worker-1",
                           "RAYBOOT_ROOT": str(world_dir / "root"), "RAYBOOT_ROLE": "worker",
                           "RAYBOOT_HEAD_ADDRESS": f"127.0.0.1:{gcs.port}", "RAYBOOT_POD_IP": "10.9.9.9",
                           "RAYBOOT_POD_NAMESPACE": "ml", "RAYBOOT_SIDECAR_PORT": "0",
                           "RAYBOOT_SIDECAR_DRAIN_PORT": "0", "RAYBOOT_GRACE_PERIOD": "10",
                           "RAYBOOT_TERMINATION_LOG": str(termlog), **auth})

    # Ours: each program and the helpers it forked (prober, rendezvous child, watch), once each
    # helper has shed what it sheds (it does so before its seccomp filter goes on).
    mine = {"head": ours(head.proc.pid, rayboot_bin), "worker": ours(worker.proc.pid, rayboot_bin)}
    mine["sidecar"] = eventually(lambda: len(ours(sidecar.pid, sidecar_bin)) >= 2 and ours(sidecar.pid, sidecar_bin))
    eventually(lambda: all(confined(p) for kind in mine for p in mine[kind][1:]))
    assert rendezvous_pid(head) in mine["head"] and len(mine["head"]) >= 3, mine  # + the prober
    assert len(mine["worker"]) >= 3, mine  # the watch and the prober
    command = [p for p in descendants(head.proc.pid) if p not in mine["head"]
               and str(done) in pathlib.Path(f"/proc/{p}/cmdline").read_text(errors="replace")]
    assert len(command) == 1, command
    rays = [p for top in (head.proc.pid, worker.proc.pid) for p in descendants(top)
            if p not in mine["head"] + mine["worker"] + command]

    seen = read_as_uid([*(p for kind in mine for p in mine[kind]), *command, *rays], token)
    # The control: the user's command is this UID's and dumpable, its memory readable; with the
    # token in its environment, the reader finds it there and in its memory.
    assert seen[command[0]]["mem_bytes"] > 0 and not seen[command[0]]["environ"].startswith("denied"), seen
    if how == "RAY_AUTH_TOKEN":
        assert seen[command[0]]["environ"] == seen[command[0]]["mem"] == "token", seen
    else:  # issue 40: given a path, rayboot puts the token into no environment: Ray reads the file itself
        assert all(seen[p]["environ"] != "token" for p in (*command, *rays)), seen
    leaks = {f"{kind} {pid}": seen[pid] for kind in mine for pid in mine[kind]
             if "token" in (seen[pid]["environ"], seen[pid]["mem"])}
    print(f"{how}: environ/mem as UID {UID}: ours " +
          ", ".join(f"{kind} {p} {seen[p]['environ']}/{seen[p]['mem']}" for kind in mine for p in mine[kind]) +
          "; the command and Ray, which may hold the token: " +
          ", ".join(f"{p} {seen[p]['environ']}/{seen[p]['mem']}" for p in (*command, *rays)))
    assert not leaks, f"the token is readable through /proc as UID {UID}: {leaks}"
    # The helpers, read as root (whom non-dumpable does not stop): no environment left, no core.
    for kind in mine:
        for pid in mine[kind][1:]:
            environ = pathlib.Path(f"/proc/{pid}/environ").read_bytes()
            assert environ.strip(b"\0") == b"", f"the {kind}'s helper {pid} kept its environment: {environ[:80]!r}"
            limits = pathlib.Path(f"/proc/{pid}/limits").read_text()
            assert re.search(r"^Max core file size\s+0\s+0\s", limits, re.M), f"{kind}'s helper {pid}:\n{limits}"
    done.touch()
    assert head.wait(15) == 0, head.stderr
    assert worker.wait(15) == 0, worker.stderr
