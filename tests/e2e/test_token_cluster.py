"""Ray 2.60's token authentication with real Ray: a head started in token mode
(RAY_AUTH_MODE=token, RAY_AUTH_TOKEN) answers Health/Check to anyone but refuses GetAllNodeInfo,
GetClusterId, DrainNode and the KV without its token. rayboot sends the token on every GCS call
(through its sandboxed prober) and every dashboard request: a worker that has the token only in a
file named by RAY_AUTH_TOKEN_PATH, without RAY_AUTH_MODE, joins (rayboot tells its `ray start`
RAY_AUTH_MODE=token, as `ray start --head` would do for itself), the head's command runs once it
has, the sidecar beside the worker sees the node ALIVE (GetAllNodeInfo with the token), and a
SIGTERM drains the worker (the GCS records a drain, not a death). A rayboot with a wrong token
exits 2 within seconds, naming the variables, instead of waiting out its deadline; RAY_USE_TLS
without its files is refused at start-up with exit 2. Every pod has its own HOME (/tmp, private
to the pod): no ~/.ray/auth_token is written anywhere. Ray before 2.52 has no token authentication (make
e2e-oldest): RAY_AUTH_MODE=token is refused there with exit 2 before Ray starts, a token found
without it only warned about."""
import os
import pathlib
import secrets
import shutil
import subprocess
import sys
import time

import pytest

from podsim import wait_until
from rayjobs import PROGRAMS, RAY_VERSION, env, ray_job
from test_rayboot_lifecycle import node_states
from test_sidecar_drain import http, start_sidecar

MACHINE_TOKEN = pathlib.Path("/root/.ray/auth_token")


def logs(job):
    return "\n".join(f"--- {name}\n{pod.log()}" for name, pod in job.pods.items())


def token_job(token, workers=1, head_command=None, worker_env=None):
    return ray_job(workers=workers, head_command=head_command, grace=30,
                   head_env=env(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=token),
                   worker_env=worker_env if worker_env is not None else env(RAY_AUTH_MODE="token",
                                                                            RAY_AUTH_TOKEN=token))


NO_TOKENS = pytest.mark.skipif(RAY_VERSION < (2, 52), reason="Ray's token authentication came in Ray 2.52")


@NO_TOKENS
def test_token_cluster_joins_runs_and_drains(cluster, sidecar_bin, tmp_path):
    assert not MACHINE_TOKEN.exists(), "a token in /root/.ray would put every Ray on this machine in token mode"
    token = secrets.token_hex(16)
    token_file = tmp_path / "token-dir" / "token"
    token_file.parent.mkdir()
    token_file.write_text(token + "\n")
    # The worker: the token in a file only, and no RAY_AUTH_MODE at all.
    job = cluster.job(token_job(token, head_command=["python", str(PROGRAMS / "busy.py"), "/tmp/stop"],
                                worker_env=env(RAY_AUTH_TOKEN_PATH=str(token_file))))
    head, worker = job.pod("head"), job.pod("worker", 0)
    worker.keep.append(token_file.parent)
    job.start()
    wait_until(lambda: "started the command" in head.log() or not head.running(), 180, "the head's command")
    assert head.running(), logs(job)
    assert "1 of 1 workers joined" in head.log(), logs(job)
    assert "Ray token authentication: the token from RAY_AUTH_TOKEN" in head.log(), head.log()
    assert f"the token from RAY_AUTH_TOKEN_PATH={token_file}" in worker.log(), worker.log()
    # The head's tagged SERVING woke the worker: the two pods bound the key to the same cluster's
    # name (issue 40: volcano-system/ray-cluster, each read in its own pod).
    assert "woken by the head's rendezvous)" in worker.log(), worker.log()
    assert "RAY_AUTH_MODE is unset: ray start and the command get RAY_AUTH_MODE=token" in worker.log(), worker.log()
    for pod in (head, worker):
        assert token not in pod.log(), f"the token was logged by {pod.name}"
    states = {n[0]: n for n in node_states(head)}
    assert states[worker.ip][1] == "ALIVE", states
    # The sidecar beside the worker: ready means GetAllNodeInfo with the token found the node.
    sidecar = start_sidecar(worker, sidecar_bin, tmp_path)
    wait_until(lambda: http(worker, "/readyz")[0] == 200, 30, "the sidecar to be ready")
    code, body = http(worker, "/readyz")
    assert f"node {worker.ip} is ALIVE" in body, body
    assert token not in sidecar.log()
    # A SIGTERM drains the worker: DrainNode with the token, and the GCS says so. (In some runs
    # `ray start --block` does not exit on SIGTERM once its drained raylet is gone: rayboot kills
    # it 5 s after the drain, not at the end of the grace period.)
    t0 = time.monotonic()
    assert worker.delete(grace=30) == 0, logs(job)
    assert time.monotonic() - t0 < 20
    assert "drain of node" in worker.log() and "accepted" in worker.log(), worker.log()
    states = {n[0]: n for n in node_states(head)}
    assert states[worker.ip][1] == "DEAD", states
    assert states[worker.ip][2] != "UNEXPECTED_TERMINATION", f"the node died instead of draining: {states}"
    head.exec(["touch", "/tmp/stop"])
    assert head.wait(120) == 0, logs(job)
    assert "tasks done:" in head.log()
    assert not MACHINE_TOKEN.exists()


@NO_TOKENS
def test_wrong_token_exits_2_at_once(cluster, sidecar_bin, tmp_path):
    token = secrets.token_hex(16)
    job = cluster.job(token_job(token, worker_env=env(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN="not-" + token,
                                                      RAYBOOT_WAIT_TIMEOUT="300")))
    head, worker = job.pod("head"), job.pod("worker", 0)
    # Both at once: the worker waits for the head's name and GCS (a worker that exits within
    # milliseconds of its start would outrun the simulator's look at it), then finds its token
    # refused as soon as the GCS answers.
    job.start()
    wait_until(lambda: "is SERVING" in head.log() or not head.running(), 180, "the head's GCS")
    assert head.running(), head.log()
    t0 = time.monotonic()
    code = worker.wait(60)
    took = time.monotonic() - t0
    assert code == 2, logs(job)
    assert took < 30, f"a wrong token took {took:.1f} s to be found out once the head answered"
    log = worker.log()
    assert "UNAUTHENTICATED" in log and "RAY_AUTH_TOKEN" in log and "RAY_AUTH_TOKEN_PATH" in log, log
    assert "started ray" not in log, log
    assert token not in log
    # The sidecar with the wrong token (as a worker's, beside the head's node): not ready, and the
    # refusal said once in its log and in /readyz.
    sidecar_env = dict(worker.env(), RAYBOOT_ROLE="worker", RAYBOOT_POD_IP=head.ip,
                       RAYBOOT_TERMINATION_LOG=str(tmp_path / "none"))
    sidecar = head.add_container([str(sidecar_bin)], sidecar_env, tmp_path / "sidecar.log")
    wait_until(lambda: "UNAUTHENTICATED" in sidecar.log(), 20, "the sidecar to find its token refused")
    time.sleep(3)  # several more looks, each refused
    code, body = http(head, "/readyz")
    assert code == 503 and "UNAUTHENTICATED" in body and "RAY_AUTH_TOKEN" in body, (code, body)
    assert sidecar.log().count("UNAUTHENTICATED") == 1, sidecar.log()
    assert token not in sidecar.log()


def run_rayboot(rayboot_bin, tmp_path, extra):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "RAYBOOT_ROLE": "worker",
           "RAYBOOT_HEAD_ADDRESS": "127.0.0.1:9", "RAYBOOT_RAY": "/bin/true", **extra}
    return subprocess.run([str(rayboot_bin)], env=env, capture_output=True, text=True, timeout=20)


def test_tls_without_its_files_is_refused(rayboot_bin, sidecar_bin, tmp_path):
    """RAY_USE_TLS on ("1" or "true", any case, as Ray reads it) needs its CA and this pod's
    certificate: without them rayboot and the sidecar exit 2 naming the variable (Ray's TLS itself
    runs in e2e/test_tls_cluster.py)."""
    for value in ("1", "true", "TRUE"):
        out = run_rayboot(rayboot_bin, tmp_path, {"RAY_USE_TLS": value})
        assert out.returncode == 2, out.stderr
        assert "RAY_USE_TLS is on but RAY_TLS_CA_CERT is not set" in out.stderr, out.stderr
    out = run_rayboot(rayboot_bin, tmp_path, {"RAY_USE_TLS": "0", "RAYBOOT_WAIT_TIMEOUT": "1"})
    assert out.returncode == 75, out.stderr  # TLS off: it waits for the head as usual
    side = subprocess.run([str(sidecar_bin)], env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                                                   "RAYBOOT_ROLE": "worker", "RAYBOOT_POD_IP": "127.0.0.1",
                                                   "RAYBOOT_HEAD_ADDRESS": "127.0.0.1:9", "RAY_USE_TLS": "1"},
                          capture_output=True, text=True, timeout=20)
    assert side.returncode == 2 and "RAY_USE_TLS is on but RAY_TLS_CA_CERT" in side.stderr, side.stderr


def test_token_mode_without_token_refused(rayboot_bin, tmp_path):
    out = run_rayboot(rayboot_bin, tmp_path, {"RAY_AUTH_MODE": "token"})
    assert out.returncode == 2, out.stderr
    for name in ("RAY_AUTH_MODE=token", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "~/.ray/auth_token", str(tmp_path)):
        assert name in out.stderr, out.stderr
    missing = tmp_path / "missing"
    out = run_rayboot(rayboot_bin, tmp_path, {"RAY_AUTH_TOKEN_PATH": str(missing)})
    assert out.returncode == 2 and f"RAY_AUTH_TOKEN_PATH is set but gives no token: {missing}" in out.stderr, \
        out.stderr
    assert not os.path.exists(tmp_path / ".ray")


def fake_ray(tmp_path, version):
    """A venv whose ray is a copy of /bin/true (a symlink would be followed out of it) and whose
    package metadata says version."""
    venv = tmp_path / f"venv-{version}"
    meta = venv / "lib" / "python3.11" / "site-packages" / f"ray-{version}.dist-info" / "METADATA"
    meta.parent.mkdir(parents=True)
    meta.write_text(f"Metadata-Version: 2.1\nName: ray\nVersion: {version}\n")
    (venv / "bin").mkdir()
    shutil.copy("/bin/true", venv / "bin" / "ray")
    return venv / "bin" / "ray", meta


def test_token_mode_refused_on_a_ray_without_it(rayboot_bin, tmp_path):
    """RAY_AUTH_MODE=token with a Ray older than 2.52 (which ignores the variable: its GCS and
    dashboard would serve anyone) exits 2 before anything starts, naming the variable, the version
    and the file it was read from; a token found without RAY_AUTH_MODE is only warned about there;
    2.52 goes on to wait for its head (75)."""
    old, meta = fake_ray(tmp_path, "2.51.0")
    out = run_rayboot(rayboot_bin, tmp_path, {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": "t0k3n", "RAYBOOT_RAY": str(old)})
    assert out.returncode == 2, out.stderr
    assert f"RAY_AUTH_MODE=token: Ray 2.51.0 ({meta}) has no token authentication" in out.stderr, out.stderr
    assert "2.52 and later" in out.stderr and "t0k3n" not in out.stderr, out.stderr
    out = run_rayboot(rayboot_bin, tmp_path, {"RAY_AUTH_TOKEN": "t0k3n", "RAYBOOT_RAY": str(old),
                                              "RAYBOOT_WAIT_TIMEOUT": "1"})
    assert out.returncode == 75, out.stderr
    assert "a Ray token was found: Ray 2.51.0" in out.stderr and "nothing checks it" in out.stderr, out.stderr
    new, _ = fake_ray(tmp_path, "2.52.0")
    out = run_rayboot(rayboot_bin, tmp_path, {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": "t0k3n", "RAYBOOT_RAY": str(new),
                                              "RAYBOOT_WAIT_TIMEOUT": "1"})
    assert out.returncode == 75 and "has no token authentication" not in out.stderr, out.stderr


@pytest.mark.ray_oldest
@pytest.mark.skipif(RAY_VERSION >= (2, 52), reason="a Ray without token authentication (make e2e-oldest)")
def test_token_mode_on_a_real_ray_without_it(cluster, rayboot_bin, sidecar_bin, tmp_path):
    """A real Ray older than 2.52: rayboot given RAY_AUTH_MODE=token with it (head or worker) exits
    2 and never starts Ray (it would have served anyone), naming the installed package's metadata;
    a worker with only a token file warns, joins a head without a token, and the sidecar beside it
    finds its node ALIVE (its GetAllNodeInfo carries the token, which that GCS ignores, in the
    request form that Ray reads)."""
    token = secrets.token_hex(16)
    # Outside a pod: a pod that exits within milliseconds would outrun the simulator's look at it.
    ray = pathlib.Path(sys.prefix) / "bin" / "ray"
    for role in ("head", "worker"):
        out = run_rayboot(rayboot_bin, tmp_path, {"RAYBOOT_ROLE": role, "RAY_AUTH_MODE": "token",
                                                  "RAY_AUTH_TOKEN": token, "RAYBOOT_RAY": str(ray)})
        assert out.returncode == 2, out.stderr
        assert "RAY_AUTH_MODE=token: Ray " in out.stderr and "has no token authentication" in out.stderr, out.stderr
        assert "ray-" in out.stderr and ".dist-info/METADATA" in out.stderr, out.stderr
        assert "started ray" not in out.stderr and token not in out.stderr, out.stderr

    token_file = tmp_path / "token-dir" / "token"
    token_file.parent.mkdir()
    token_file.write_text(token + "\n")
    job = cluster.job(ray_job(name="tok-found", workers=1, head_command=["python", str(PROGRAMS / "busy.py"), "/tmp/stop"],
                              worker_env=env(RAY_AUTH_TOKEN_PATH=str(token_file))))
    head, worker = job.pod("head"), job.pod("worker", 0)
    worker.keep.append(token_file.parent)
    job.start()
    wait_until(lambda: "started the command" in head.log() or not head.running(), 180, "the head's command")
    assert head.running() and "1 of 1 workers joined" in head.log(), logs(job)
    assert "a Ray token was found: Ray " in worker.log() and "nothing checks it" in worker.log(), worker.log()
    start_sidecar(worker, sidecar_bin, tmp_path)
    wait_until(lambda: http(worker, "/readyz")[0] == 200, 30, "the sidecar to be ready")
    code, body = http(worker, "/readyz")
    assert f"node {worker.ip} is ALIVE" in body, body
    head.exec(["touch", "/tmp/stop"])
    assert head.wait(120) == 0, logs(job)
    assert worker.wait(30) == 0, logs(job)


@NO_TOKENS
def test_submitter_in_token_mode(cluster, rayboot_bin):
    """The submitter (k8s/volcano/ray-submitter.yaml, one worker) with the token: it waits for the
    cluster (GCS calls with the token) and submits, follows and ends with the job through the
    dashboard (every request with the token). `rayboot submit` with a wrong token, or none, is
    refused by the dashboard (403, 401) and exits 2 at once, naming the variables."""
    from test_submitter import SQUARES, manifest
    token = secrets.token_hex(16)
    spec = manifest()
    for task in spec["spec"]["tasks"]:
        if task["name"] == "worker":
            task["replicas"] = 1
        task["template"]["spec"]["containers"][0]["env"] += env(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=token)
    job = cluster.job(spec)
    job.start()
    head, submitter = job.pod("head"), job.pod("submitter")
    assert submitter.wait(240) == 0, submitter.log() + head.log()
    log = submitter.log()
    assert SQUARES in log and "nodes: 2" in log, log
    assert "Ray token authentication: the token from RAY_AUTH_TOKEN" in log, log
    assert token not in log
    for wrong, status in (("not-" + token, "HTTP 403"), (None, "HTTP 401")):
        pod_env = head.env()
        pod_env.pop("RAY_AUTH_TOKEN")
        if wrong:
            pod_env["RAY_AUTH_TOKEN"] = wrong
        else:
            pod_env["RAY_AUTH_MODE"] = "disabled"
        t0 = time.monotonic()
        out = head.exec([str(rayboot_bin), "submit", "--address=http://127.0.0.1:8265", "--", "true"], env=pod_env,
                        timeout=60)
        assert out.returncode == 2, out.stderr
        assert time.monotonic() - t0 < 20
        assert status in out.stderr and "RAY_AUTH_TOKEN" in out.stderr and "RAY_AUTH_TOKEN_PATH" in out.stderr, \
            out.stderr
