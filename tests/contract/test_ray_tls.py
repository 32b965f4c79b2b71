"""Ray's TLS (RAY_USE_TLS) between rayboot, the sidecar and a GCS: the token leaves the pod only
for a GCS whose certificate the cluster's CA signed for the address called, and then with this
pod's own certificate (Ray's gRPC servers ask for one).

Issue 40's attack: "the token goes to whoever the head's name resolves to" (a fake head got the
Bearer token in the worker's first Health/Check). Here the fake head speaks TLS with a certificate
of another CA, or of the cluster's CA for another address, and asks for no client certificate
(an attacker takes anyone): it must receive no call at all, so no token, while rayboot keeps
waiting. Before issue 40 rayboot refused RAY_USE_TLS (exit 2) and these tests fail there; without
TLS the fake got the token (docs/security.md says what the token is exposed to without it).

The certificates are made by openssl (argv, no shell) from tests/unit/data/tls's test CAs."""
import json
import pathlib
import subprocess
import time

import pytest

from fake_gcs import HEALTH, FakeGcs, Node
from sidecars import SIDECAR_NODE_IP

REPO = pathlib.Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "unit" / "data" / "tls"
CA, CA_KEY = DATA / "ca.crt", DATA / "ca.key"
OTHER_CA, OTHER_CA_KEY = DATA / "other-ca.crt", DATA / "other-ca.key"
TOKEN = "right-token-for-tls"


def issue(out: pathlib.Path, name: str, ca: pathlib.Path, ca_key: pathlib.Path, san: str) -> tuple:
    """A P-256 key and a certificate for SAN signed by CA: (certificate path, key path)."""
    key, csr, crt, ext = (out / f"{name}.{x}" for x in ("key", "csr", "crt", "ext"))
    ext.write_text(f"subjectAltName={san}\nextendedKeyUsage=serverAuth,clientAuth\n")
    subprocess.run(["openssl", "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", key, "-out", csr, "-subj", f"/CN={name}"], check=True, capture_output=True)
    subprocess.run(["openssl", "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-set_serial",
                    str(time.monotonic_ns()), "-days", "2", "-extfile", ext, "-out", crt],
                   check=True, capture_output=True)
    return crt, key


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    out = tmp_path_factory.mktemp("tls")
    return {
        "head": issue(out, "head", CA, CA_KEY, "IP:127.0.0.1,DNS:localhost"),
        "stranger": issue(out, "stranger", OTHER_CA, OTHER_CA_KEY, "IP:127.0.0.1,DNS:localhost"),
        "elsewhere": issue(out, "elsewhere", CA, CA_KEY, "IP:10.1.2.3,DNS:head.elsewhere"),
        "worker": issue(out, "worker", CA, CA_KEY, "DNS:pod-1"),
    }


@pytest.fixture
def gcs(request, certs):
    """The GCS the pod calls (overrides conftest's, so the sidecar fixture calls it too): "head", a
    GCS like Ray's (the cluster's CA, asks for this CA's client certificate), or an attacker's
    ("stranger": another CA; "elsewhere": the cluster's CA for another address) that asks for
    nothing. Every one is in token mode."""
    which = request.param
    crt, key = certs[which]
    client_ca = CA.read_bytes() if which == "head" else None
    server = FakeGcs(tls=(crt.read_bytes(), key.read_bytes(), client_ca))
    server.token = TOKEN
    yield server
    server.stop()


@pytest.fixture
def worker_node(gcs):
    """The sidecar's own Ray node, ALIVE in the GCS."""
    node = Node(SIDECAR_NODE_IP, node_id=bytes([9]) * 28)
    gcs.nodes.append(node)
    return node


def worker_env(gcs, certs, **extra):
    crt, key = certs["worker"]
    env = {"RAYBOOT_ROLE": "worker", "RAYBOOT_HEAD_ADDRESS": f"127.0.0.1:{gcs.port}", "RAY_AUTH_TOKEN": TOKEN,
           "RAY_USE_TLS": "1", "RAY_TLS_CA_CERT": str(CA), "RAY_TLS_SERVER_CERT": str(crt),
           "RAY_TLS_SERVER_KEY": str(key), "RAYBOOT_RENDEZVOUS_PORT": "0"}
    env.update(extra)
    return env


def wait_for_attempts(proc, needle, n, timeout=20):
    """Until NEEDLE is in rayboot's log N times (each failed attempt logs a progress line at first,
    then fewer: the log says how many attempts)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.stderr.count(needle) >= n or f"attempt {n}," in proc.stderr and needle in proc.stderr:
            return
        assert proc.proc.poll() is None, proc.stderr
        time.sleep(0.05)
    raise AssertionError(f"no {n} attempts failing with {needle!r}:\n{proc.stderr}")


@pytest.mark.parametrize("gcs", ["stranger", "elsewhere"], indirect=True)
def test_tls_the_token_goes_to_no_unproven_head(run, gcs, certs):
    """The attack with TLS on: the fake head answers the TLS handshake with its own certificate;
    rayboot's first Health/Check never gets past it, so the fake receives no call, no token, and
    rayboot keeps waiting (it starts no Ray)."""
    worker = run(worker_env(gcs, certs))
    wait_for_attempts(worker, "TLS: the peer's certificate is not signed by the CA given", 3)
    time.sleep(1)
    assert gcs.calls == [] and gcs.metadata == [], gcs.metadata
    assert worker.proc.poll() is None, worker.stderr
    assert "started ray" not in worker.stderr, worker.stderr
    assert "Ray TLS: every GCS call over mutual TLS" in worker.stderr, worker.stderr


@pytest.mark.parametrize("gcs", ["head"], indirect=True)
def test_tls_a_proven_head_gets_the_calls_and_this_pods_certificate(run, gcs, certs):
    """The same worker against a GCS of the cluster's CA: it joins (Ray started), and every call
    carried the token and showed the worker's own certificate (the GCS asked for one of the CA)."""
    worker = run(worker_env(gcs, certs))
    worker.wait_for_log("started ray")
    assert gcs.methods()[0] == HEALTH, gcs.methods()
    assert all(m.get("authorization") == f"Bearer {TOKEN}" for m in gcs.metadata), gcs.metadata
    shown = certs["worker"][0].read_bytes()
    assert gcs.client_certs and all(c == shown for c in gcs.client_certs), gcs.client_certs[:1]
    assert "this pod shows RAY_TLS_SERVER_CERT=" in worker.stderr, worker.stderr


@pytest.mark.parametrize("gcs", ["head"], indirect=True)
def test_tls_a_worker_without_a_certificate_is_told_what_is_missing(run, gcs, certs):
    """RAY_USE_TLS on with neither certificate files nor the CA's key: exit 2 naming the variables,
    before any call."""
    env = worker_env(gcs, certs)
    del env["RAY_TLS_SERVER_CERT"], env["RAY_TLS_SERVER_KEY"]
    worker = run(env)
    assert worker.wait(timeout=10) == 2, worker.stderr
    assert "RAY_USE_TLS is on but RAY_TLS_SERVER_CERT is not set" in worker.stderr, worker.stderr
    assert gcs.calls == []


@pytest.mark.parametrize("gcs", ["stranger"], indirect=True)
def test_tls_the_sidecar_calls_no_unproven_head(sidecar, gcs):
    """The sidecar's readiness calls (CheckAlive, the node lookups) carried the token too: with TLS
    they never reach a GCS of another CA, and the sidecar says it is not ready."""
    s = sidecar({"RAY_USE_TLS": "1", "RAY_TLS_CA_CERT": str(CA), "RAYBOOT_TLS_CA_KEY": str(CA_KEY),
                 "RAY_AUTH_TOKEN": TOKEN})
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and "TLS: the peer's certificate" not in s.get("/readyz")[1]:
        time.sleep(0.2)
    status, body = s.get("/readyz")
    assert status == 503 and "TLS: the peer's certificate is not signed by the CA given" in body, (status, body)
    assert gcs.calls == [] and gcs.metadata == [], gcs.metadata


@pytest.mark.parametrize("gcs", ["head"], indirect=True)
def test_tls_the_sidecar_shows_a_certificate_it_made_from_the_ca(sidecar, gcs, worker_node):
    """Given only the CA's key (RAYBOOT_TLS_CA_KEY), the sidecar makes its own certificate in memory
    (no file): a GCS that requires one of the CA answers, and the sidecar is ready."""
    s = sidecar({"RAY_USE_TLS": "1", "RAY_TLS_CA_CERT": str(CA), "RAYBOOT_TLS_CA_KEY": str(CA_KEY),
                 "RAY_AUTH_TOKEN": TOKEN})
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and s.get("/readyz")[0] != 200:
        time.sleep(0.2)
    assert s.get("/readyz")[0] == 200, (s.get("/readyz"), s.stderr)
    assert gcs.client_certs and all(c and b"BEGIN CERTIFICATE" in c for c in gcs.client_certs)
    assert all(m.get("authorization") == f"Bearer {TOKEN}" for m in gcs.metadata)
    assert "made from RAYBOOT_TLS_CA_KEY=" in s.stderr, s.stderr


def test_tls_submit_refuses_to_send_the_token_to_the_dashboard(run, tmp_path):
    """The dashboard's Jobs API is HTTP: Ray's TLS does not cover it, so `rayboot submit` refuses
    RAY_USE_TLS instead of sending the token there unproven (exit 2, before any request)."""
    sub = run({"RAY_USE_TLS": "1", "RAY_AUTH_TOKEN": TOKEN},
              ["submit", "--address", "http://127.0.0.1:9", "--", "python", "job.py"])
    assert sub.wait(timeout=10) == 2, sub.stderr
    assert "RAY_USE_TLS=1: rayboot submit talks to the dashboard's Jobs API" in sub.stderr, sub.stderr


@pytest.mark.parametrize("gcs", ["head"], indirect=True)
def test_tls_the_pods_key_goes_only_to_a_memory_backed_directory(run, gcs, certs, tmp_path):
    """With the CA's key, rayboot makes the pod's certificate for Ray: into RAYBOOT_TLS_DIR only if
    it is tmpfs (here /dev/shm), the key 0600, both named for Ray; a directory on disk (tmp_path)
    is refused with exit 2 and nothing is written there."""
    env = worker_env(gcs, certs, RAYBOOT_TLS_CA_KEY=str(CA_KEY), RAYBOOT_TLS_DIR=str(tmp_path))
    del env["RAY_TLS_SERVER_CERT"], env["RAY_TLS_SERVER_KEY"]
    worker = run(env)
    assert worker.wait(timeout=10) == 2, worker.stderr
    assert f"RAYBOOT_TLS_DIR={tmp_path} is not memory-backed" in worker.stderr, worker.stderr
    assert not (tmp_path / "tls.key").exists() and gcs.calls == []

    shm = pathlib.Path("/dev/shm") / f"rayboot-tls-test-{time.monotonic_ns()}"
    shm.mkdir()
    try:
        worker = run(dict(env, RAYBOOT_TLS_DIR=str(shm)))
        worker.wait_for_log("started ray")
        assert (shm / "tls.key").stat().st_mode & 0o777 == 0o600
        assert b"BEGIN EC PRIVATE KEY" in (shm / "tls.key").read_bytes()
        log = tmp_path / "ray.log"
        deadline = time.monotonic() + 10
        while not (log.exists() and log.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)  # the fake ray writes its line once it runs
        ray_env = json.loads(log.read_text().splitlines()[0])["env"]
        assert ray_env["RAY_TLS_SERVER_CERT"] == str(shm / "tls.crt"), ray_env
        assert ray_env["RAY_TLS_SERVER_KEY"] == str(shm / "tls.key"), ray_env
        assert "Ray TLS: this pod's certificate for" in worker.stderr, worker.stderr
        # The prober's own certificate, made in memory, is another: the GCS saw a client certificate.
        assert gcs.client_certs and all(gcs.client_certs)
    finally:
        for f in shm.iterdir():
            f.unlink()
        shm.rmdir()


@pytest.mark.parametrize("rule", ["tls-getrandom", "tls-getpid"])
@pytest.mark.parametrize("gcs", ["head"], indirect=True)
def test_tls_prober_rule_is_needed(run, gcs, certs, rule):
    """The two rules TLS adds to the prober's seccomp filter (lib/ray/prober_child.c), each proven
    needed: a test build without it (build/knockout/RULE/rayboot, as test_seccomp_minimal.py makes
    them) has its prober killed by SIGSYS in its first TLS call, named in rayboot's log, while the
    release build joins (test_tls_a_proven_head_gets_the_calls_and_this_pods_certificate)."""
    binary = REPO / "build" / "knockout" / rule / "rayboot"
    subprocess.run(["make", "-s", str(binary.relative_to(REPO))], cwd=REPO, check=True, capture_output=True)
    worker = run(worker_env(gcs, certs), binary=binary)
    worker.wait_for_log("was killed by SIGSYS: it made a system call outside its seccomp allowlist", timeout=20)
    assert "started ray" not in worker.stderr, worker.stderr
