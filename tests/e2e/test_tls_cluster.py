"""Ray's TLS end to end in the pod simulator, with real Ray (RAY_USE_TLS=1) and Ray's token: every
pod is given only the CA (RAY_TLS_CA_CERT) and its key (RAYBOOT_TLS_CA_KEY, the test CA of
tests/unit/data/tls), and rayboot makes each pod's certificate at start into its memory-backed
/dev/shm. The head's command runs a task pinned to every node (Ray's raylets and workers talk TLS
across pods), finds the GCS port refusing cleartext and answering TLS with the pod's own
certificate; rayboot's own calls (the wait, the join count, the version) went over TLS too (it
would not have seen the worker join otherwise)."""
import pathlib
import secrets

from podsim import wait_until
from rayjobs import PROGRAMS, env, ray_job

DATA = pathlib.Path(__file__).resolve().parent.parent / "unit" / "data" / "tls"


def tls_env(token):
    return env(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=token, RAY_USE_TLS="1", RAY_TLS_CA_CERT=DATA / "ca.crt",
               RAYBOOT_TLS_CA_KEY=DATA / "ca.key", RAYBOOT_TLS_DIR="/dev/shm")


def test_tls_cluster_runs_a_task_on_every_node(cluster):
    token = secrets.token_hex(16)
    job = cluster.job(ray_job(workers=1, head_command=["python", str(PROGRAMS / "tls_tasks.py")],
                              head_env=tls_env(token), worker_env=tls_env(token)))
    head, worker = job.pod("head"), job.pod("worker", 0)
    job.start()
    wait_until(lambda: not head.running(), 300, "the head's command")
    logs = "\n".join(f"--- {name}\n{pod.log()}" for name, pod in job.pods.items())
    assert head.wait(10) == 0, logs
    out = head.log()
    assert "1 of 1 workers joined" in out, logs
    assert f"tasks ran on: {' '.join(sorted([head.ip, worker.ip]))}" in out, logs
    assert "cleartext GCS call: refused" in out and "TLS GCS call: answered 0801" in out, logs
    for pod in (head, worker):
        log = pod.log()
        assert "Ray TLS: this pod's certificate for" in log and "in /dev/shm/tls.crt" in log, log
        assert "Ray TLS: every GCS call over mutual TLS" in log, log
        assert token not in log
