"""GCS fault tolerance with real Ray (issue 29 item 5): a worker whose raylet died under its head
starts Ray again and rejoins; with Debian's redis-server as the external store, a head killed and
re-created comes back as the same cluster and the worker's raylet is never restarted: same PID,
same node id ALIVE, a detached actor on it still counting."""
import os
import secrets
import shutil
import signal
import subprocess
import time
import uuid

import pytest

from podsim import wait_until
from rayjobs import LIGHT, PROGRAMS, env, ray_job
from test_rayboot_lifecycle import alive_count, logs, node_states

REDIS_PORT = 6390  # in the cluster's own network namespace, where nothing else listens


def test_a_workers_killed_raylet_is_started_again_and_rejoins(cluster):
    """SIGKILL of the worker's raylet while the head is up: rayboot starts Ray again in the same
    pod and the worker is back in the cluster as a new node. Before, the worker's pod ended."""
    job = cluster.job(ray_job(workers=1))
    job.start()
    head, worker = job.pod("head"), job.pod("worker", 0)
    wait_until(lambda: alive_count(head) == 2, 180, "2 ALIVE nodes")
    pid1 = worker.pid1
    [raylet] = worker.processes("raylet")
    os.kill(raylet, signal.SIGKILL)
    wait_until(lambda: "starting Ray again to join the head" in worker.log() or not worker.running(), 60,
               "the worker to start Ray again")
    wait_until(lambda: len(worker.processes("raylet")) == 1 and alive_count(head) == 2, 120,
               "the worker's new node ALIVE", interval=1)
    assert worker.running() and worker.pid1 == pid1, logs(job)
    assert worker.processes("raylet") != [raylet]
    assert "Ray exited (1) while its head is up (same cluster): starting it again in 1 s" in worker.log(), \
        worker.log()


@pytest.fixture
def redis(cluster, tmp_path):
    """Debian's redis-server in the cluster's network namespace, on the bridge's address, with a
    password; killed by PID at the end."""
    exe = shutil.which("redis-server")
    if not exe:
        pytest.fail("no redis-server: scripts/bootstrap.sh installs it")
    password = secrets.token_hex(16)
    conf = tmp_path / "redis.conf"
    conf.write_text(f"bind {cluster.bridge_ip}\nport {REDIS_PORT}\nrequirepass {password}\nsave \"\"\n"
                    f"appendonly no\ndaemonize no\ndir {tmp_path}\nlogfile {tmp_path / 'redis.log'}\n")
    conf.chmod(0o600)
    proc = subprocess.Popen(["ip", "netns", "exec", cluster.ns, exe, str(conf)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: "Ready to accept connections" in (tmp_path / "redis.log").read_text()
                   if (tmp_path / "redis.log").exists() else proc.poll() is not None, 20, "redis-server")
        assert proc.poll() is None, (tmp_path / "redis.log").read_text()
        yield f"{cluster.bridge_ip}:{REDIS_PORT}", password
    finally:
        proc.kill()  # `ip netns exec` execs redis-server: this PID is the server's
        proc.wait(timeout=10)


def redis_keys(cluster, address, password, namespace):
    host, port = address.split(":")
    out = subprocess.run(["ip", "netns", "exec", cluster.ns, "redis-cli", "--no-auth-warning", "-h", host, "-p", port,
                          "--scan", "--pattern", f"RAY{namespace}@*"], capture_output=True, text=True, timeout=30,
                         env={"REDISCLI_AUTH": password, "PATH": os.environ["PATH"]})
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def ft_job(address, password, namespace, head_command=None):
    """head x1 with the external Redis, worker x1; the password reaches `ray start` as KubeRay's
    does (its --redis-password), and the cleanup as REDIS_PASSWORD."""
    job = ray_job(workers=1, head_command=head_command, head_env=env(
        RAY_REDIS_ADDRESS=address, REDIS_PASSWORD=password, RAY_external_storage_namespace=namespace))
    head_env = job["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["env"]
    for item in head_env:
        if item["name"] == "RAYBOOT_RAY_START_ARGS":
            item["value"] = f"{LIGHT} --redis-password={password}"
    return job


def keeper(pod, *args):
    return pod.exec(["python", str(PROGRAMS / "keeper.py"), *args], timeout=120)


def test_a_head_killed_and_recreated_keeps_the_workers_ray(cluster, redis):
    address, password = redis
    namespace = str(uuid.uuid4())
    job = cluster.job(ft_job(address, password, namespace))
    job.start()
    head, worker = job.pod("head"), job.pod("worker", 0)
    wait_until(lambda: alive_count(head) == 2, 180, "2 ALIVE nodes")
    made = keeper(head, "create", worker.ip)
    assert made.returncode == 0 and made.stdout.startswith("count 3 "), made.stdout + made.stderr
    node_id = made.stdout.split()[2]
    [raylet] = worker.processes("raylet")
    assert redis_keys(cluster, address, password, namespace), "the GCS wrote nothing to Redis"

    head.kill()  # its node failed: nothing drained, nothing stopped
    head.recreate()
    wait_until(lambda: "is SERVING" in head.log() or not head.running(), 120, "the new head's GCS")
    serving = time.monotonic()
    answer = wait_until(lambda: (lambda r: r if r.returncode == 0 else None)(keeper(head, "ask")), 120,
                        "the detached actor to answer", interval=0.2)
    whole = time.monotonic() - serving
    print(f"the detached actor answered {whole:.2f} s after the new head's GCS served")
    assert answer.stdout.split()[:3] == ["count", "4", node_id], answer.stdout
    states = {n[4]: n for n in node_states(head)}
    assert states[node_id][1] == "ALIVE", states
    assert worker.processes("raylet") == [raylet], "the worker's raylet was restarted"
    assert worker.running() and "joining the head again" not in worker.log(), worker.log()
    assert "as the same cluster: Ray keeps running" in worker.log() or "lost the head" not in worker.log(), \
        worker.log()
