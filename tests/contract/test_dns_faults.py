"""The DNS rows of tests/FAULTS.md: a worker waits for its head by name while the pod's only
nameserver (tests/contract/fake_dns.py) fails in each way it can. Every failure is "not yet":
the wait goes on, its progress line and the final exit 75 name what the nameserver really did,
and once the name resolves the worker joins the head (tests/contract/fake_gcs.py)."""
import re

import pytest

from fake_dns import FakeDns
from test_pid1 import ray_started

HEAD = "head.rayboot.test"
# c-ares' per-attempt budget in lib/net/dns.c: 400 ms, then 800 ms for the second try.
ATTEMPT_S = 1.2


@pytest.fixture
def dns(pod_root):
    servers = []

    def start(mode="answer", addresses=("127.0.0.1",), delay=0.0, resolv_conf=True):
        server = FakeDns(HEAD, mode, addresses, delay)
        servers.append(server)
        if resolv_conf:
            (pod_root / "etc" / "resolv.conf").write_text(server.resolv_conf())
        return server

    yield start
    for s in servers:
        s.stop()


def worker_env(port, **extra):
    env = {"RAYBOOT_ROLE": "worker", "RAYBOOT_HEAD_ADDRESS": f"{HEAD}:{port}", "RAYBOOT_POD_IP": "127.0.0.1"}
    env.update(extra)
    return env


def gave_up_line(stderr):
    lines = [ln for ln in stderr.splitlines() if "gave up waiting for GCS" in ln]
    assert len(lines) == 1, stderr
    return lines[0]


FAILURES = [
    ("servfail", 0.0, r"SERVFAIL \(the nameserver failed to resolve the name\)"),
    ("refused", 0.0, r"REFUSED \(the nameserver will not answer this pod\)"),
    ("garbage-random", 0.0, r"malformed DNS reply \(the nameserver sent bytes that are not a DNS reply\)"),
    ("garbage-short", 0.0, r"malformed DNS reply \(the nameserver sent bytes that are not a DNS reply\)"),
    ("garbage-wrong-id", 0.0, r"malformed DNS reply \(its ID or question does not match the query\)"),
    ("garbage-rdlength", 0.0, r"malformed DNS reply \(c-ares could not parse it\)"),
    ("garbage-pointer-loop", 0.0, r"malformed DNS reply \(c-ares could not parse it\)"),
    ("no-tcp", 0.0, r"truncated DNS reply, and no answer over TCP"),
    ("answer", 2.5, r"DNS timeout \(no answer: nameserver slow, down or unreachable\)"),
]


@pytest.mark.parametrize("mode,delay,reason", FAILURES, ids=[f[0] if not f[1] else "slower-than-an-attempt" for f in FAILURES])
def test_dns_failure_is_named_and_the_deadline_exits_75(run, dns, closed_port, mode, delay, reason):
    server = dns(mode, delay=delay)
    r = run(worker_env(closed_port, RAYBOOT_WAIT_TIMEOUT="3"))
    assert r.wait(30) == 75, r.stderr
    waiting = [ln for ln in r.stderr.splitlines() if "waiting for GCS" in ln]
    assert waiting and re.search(rf"DNS: {reason} \(attempt 1,", waiting[0]), r.stderr
    last = gave_up_line(r.stderr)
    assert re.search(rf"and (\d+) attempts; last: DNS: {reason}$", last), last
    attempts = int(re.search(r"and (\d+) attempts", last).group(1))
    assert attempts >= 2, f"the wait did not go on after the first failure: {last}"
    assert server.asked("udp"), "rayboot never asked the fake nameserver"
    assert "prober" not in r.stderr and "SIGSYS" not in r.stderr, r.stderr


@pytest.mark.parametrize("mode,delay,reason", [
    ("servfail", 0.0, "SERVFAIL"),
    ("garbage-random", 0.0, "malformed DNS reply"),
    ("nxdomain", 0.0, "NXDOMAIN"),
    ("answer", 2.5, "DNS timeout"),
], ids=["servfail", "garbage", "nxdomain", "slower-than-an-attempt"])
def test_worker_joins_once_the_name_resolves(run, gcs, dns, tmp_path, mode, delay, reason):
    server = dns(mode, delay=delay)
    r = run(worker_env(gcs.port))
    r.wait_for_log(f"DNS: {reason}")
    assert r.proc.poll() is None, r.stderr
    server.mode, server.delay = "answer", 0.0
    r.wait_for_log("started ray", timeout=20)
    started = ray_started(tmp_path)
    assert f"--address={HEAD}:{gcs.port}" in started["argv"], started["argv"]  # Ray resolves the name itself
    assert "SERVING at 127.0.0.1" in r.stderr


def test_many_records_go_over_tcp_and_the_first_is_joined(run, gcs, dns, tmp_path):
    # 200 A records do not fit in 512 bytes: the UDP reply carries the TC bit, and c-ares asks
    # again over TCP (inside the prober's seccomp filter). The first record is the head.
    others = [f"10.255.{i // 250}.{i % 250 + 1}" for i in range(199)]
    server = dns("answer", addresses=["127.0.0.1", *others])
    r = run(worker_env(gcs.port))
    r.wait_for_log("started ray", timeout=20)
    ray_started(tmp_path)
    assert server.asked("udp") and server.asked("tcp"), server.asked()
    assert "SERVING at 127.0.0.1" in r.stderr


@pytest.mark.parametrize("delay", [0.2, 0.6], ids=["within-the-first-try", "within-the-second-try"])
def test_slow_answers_within_an_attempt_join(run, gcs, dns, tmp_path, delay):
    assert delay < ATTEMPT_S
    server = dns("answer", delay=delay)
    r = run(worker_env(gcs.port))
    r.wait_for_log("started ray", timeout=20)
    ray_started(tmp_path)
    assert "DNS" not in r.stderr, r.stderr
    assert server.asked("udp")


def test_servfail_from_one_of_two_nameservers_is_skipped(run, gcs, dns, pod_root, tmp_path):
    bad = dns("servfail", resolv_conf=False)
    good = dns("answer", resolv_conf=False)
    (pod_root / "etc" / "resolv.conf").write_text(f"nameserver {bad.address}\nnameserver {good.address}\n")
    r = run(worker_env(gcs.port))
    r.wait_for_log("started ray", timeout=20)
    ray_started(tmp_path)
    assert bad.asked("udp") and good.asked("udp")


def test_servfail_from_every_nameserver_is_named(run, dns, pod_root, closed_port):
    # With two nameservers c-ares skips a SERVFAIL and reports only "refused" when all did;
    # rayboot names the SERVFAIL it saw.
    first = dns("servfail", resolv_conf=False)
    second = dns("servfail", resolv_conf=False)
    (pod_root / "etc" / "resolv.conf").write_text(f"nameserver {first.address}\nnameserver {second.address}\n")
    r = run(worker_env(closed_port, RAYBOOT_WAIT_TIMEOUT="2"))
    assert r.wait(30) == 75, r.stderr
    assert gave_up_line(r.stderr).endswith("last: DNS: SERVFAIL (the nameserver failed to resolve the name)"), r.stderr
    assert first.asked("udp") and second.asked("udp")


def test_a_single_label_head_goes_through_the_search_path(run, gcs, dns, pod_root, tmp_path):
    """RAYBOOT_HEAD_ADDRESS=ray-head:6379, a Service of the pod's own namespace as users write it:
    the name is asked under each search domain in order, as the C library does (the kubelet's
    first is NS.svc.<domain>), and joined at the first that answers. Before, it was asked only as
    an absolute single label ("head."), which no cluster DNS answers (on the real node: SERVFAIL,
    for good). A name with a dot is still asked as it is, once."""
    server = dns("answer", resolv_conf=False)
    (pod_root / "etc" / "resolv.conf").write_text(
        f"nameserver {server.address}\nsearch ns.svc.cluster.local rayboot.test\noptions ndots:5\n")
    r = run(worker_env(gcs.port, RAYBOOT_HEAD_ADDRESS=f"head:{gcs.port}"))
    r.wait_for_log("started ray", timeout=20)
    asked = [q[1] for q in server.asked()]
    assert asked[:2] == ["head.ns.svc.cluster.local", "head.rayboot.test"], asked
    assert f"--address=head:{gcs.port}" in ray_started(tmp_path)["argv"]  # Ray's resolver searches too


def test_a_single_label_head_nowhere_is_named_under_its_first_domain(run, dns, pod_root, closed_port):
    server = dns("nxdomain", resolv_conf=False)
    (pod_root / "etc" / "resolv.conf").write_text(
        f"nameserver {server.address}\nsearch ns.svc.cluster.local rayboot.test\noptions ndots:5\n")
    r = run(worker_env(closed_port, RAYBOOT_HEAD_ADDRESS=f"nohead:{closed_port}", RAYBOOT_WAIT_TIMEOUT="2"))
    assert r.wait(10) == 75, r.stderr
    assert "NXDOMAIN" in r.stderr and "for nohead.ns.svc.cluster.local" in r.stderr, r.stderr
    asked = {q[1] for q in server.asked()}
    assert {"nohead.ns.svc.cluster.local", "nohead.rayboot.test", "nohead"} <= asked, asked
