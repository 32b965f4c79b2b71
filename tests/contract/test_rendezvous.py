"""The rendezvous (issue 20 §2): a head rayboot holds its waiting workers' connections and wakes
them the moment its GCS serves; a worker holding one barely touches the GCS; a worker whose head
offers none polls as before; the head's listening child is confined by its own seccomp filter.
Real processes: two rayboots (head and worker) and fake GCSes that turn SERVING when told."""
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import time

import pytest

from fake_gcs import HEALTH
from fake_rdv import FakeRendezvous
from procs import eventually, free_port, log_ts, rendezvous_pid

MESSAGE = b"RAYBOOT-RDV/1 SERVING\n"


def head_env(gcs, rdv_port, **extra):
    env = {"RAYBOOT_ROLE": "head", "RAYBOOT_PLUGIN_ARGS": f"--port={gcs.port}",
           "RAYBOOT_RENDEZVOUS_PORT": str(rdv_port)}
    env.update(extra)
    return env


def worker_env(gcs_port, rdv_port, **extra):
    env = {"RAYBOOT_ROLE": "worker", "RAYBOOT_HEAD_ADDRESS": f"127.0.0.1:{gcs_port}",
           "RAYBOOT_POD_IP": "127.0.0.1", "RAYBOOT_RENDEZVOUS_PORT": str(rdv_port)}
    env.update(extra)
    return env


def health_calls(gcs) -> int:
    return sum(1 for m in gcs.methods() if m == HEALTH)


@pytest.mark.parametrize("token", [None, "right"], ids=["no-token", "token"])
def test_worker_is_woken_by_the_head_and_barely_polls(run, gcs, gcs2, token):
    """The worker holds the head's rendezvous: while it waits it makes no Health/Check at all
    (the safety net is every 5 s); when the head's GCS serves, the head writes and the worker
    starts Ray within milliseconds of the head's SERVING line: confirmed by one Health/Check of its
    own without a token, taken at once with one (the head's tag over the worker's nonce)."""
    rdv = free_port()
    gcs.serving = False   # the head's own GCS
    gcs2.serving = False  # the one the worker confirms with (counted apart from the head's polls)
    auth = {"RAY_AUTH_TOKEN": token} if token else {}
    gcs.token = gcs2.token = token
    head = run(head_env(gcs, rdv, **auth), ["--log-format=json"])
    rendezvous_pid(head)
    worker = run(worker_env(gcs2.port, rdv, **auth), ["--log-format=json"])
    worker.wait_for_log("holding the head's rendezvous")
    before = health_calls(gcs2)
    time.sleep(2.0)
    waiting_calls = health_calls(gcs2) - before
    assert waiting_calls == 0, f"the worker probed the GCS {waiting_calls} times in 2 s while holding"
    gcs2.serving = True
    gcs.serving = True
    worker.wait_for_log("started ray")
    head.wait_for_log("is SERVING")
    assert ("woken by the head's rendezvous)" if token else "woken by the head's rendezvous, confirmed") \
        in worker.stderr, worker.stderr
    woke = log_ts(worker.stderr, "is SERVING") - log_ts(head.stderr, "is SERVING")
    print(f"worker SERVING {woke * 1000:.0f} ms after the head's; Health/Check calls while holding: {waiting_calls}")
    assert -0.002 <= woke < 0.1, f"the worker saw SERVING {woke * 1000:.0f} ms after the head"
    assert health_calls(gcs2) - before <= 2, gcs2.methods()  # the confirmation (and at most one safety probe)


def test_the_heads_tagged_word_starts_ray_without_a_call(run, gcs):
    """With Ray's token a woken worker starts Ray with no Health/Check in between: the head's
    SERVING carries its HMAC over the worker's own nonce (the head wrote it after its own
    Health/Check saw SERVING). The fake rendezvous is written from the wire format alone, so this
    also checks rayboot's tags against Python's hmac."""
    rdv = FakeRendezvous(token="right")
    gcs.token = "right"
    gcs.serving = False
    try:
        worker = run(worker_env(gcs.port, rdv.port, RAY_AUTH_TOKEN="right"), ["--log-format=json"])
        worker.wait_for_log("holding the head's rendezvous")
        before = gcs.methods()
        gcs.serving = True
        rdv.speak()
        worker.wait_for_log("started ray")
        assert "woken by the head's rendezvous)" in worker.stderr, worker.stderr
        after = gcs.methods()[len(before):]
        assert HEALTH not in after, after
    finally:
        rdv.close()


def test_without_a_token_the_heads_word_is_confirmed(run, gcs):
    """Without a token nothing tells the head's SERVING from a stranger's: one Health/Check of the
    worker's own confirms it before Ray starts (and the Ray version read, CheckAlive, comes after
    `ray start`, as before)."""
    rdv = FakeRendezvous()
    gcs.serving = False
    try:
        worker = run(worker_env(gcs.port, rdv.port), ["--log-format=json"])
        worker.wait_for_log("holding the head's rendezvous")
        before = gcs.methods()
        gcs.serving = True
        rdv.speak()
        worker.wait_for_log("the GCS at 127.0.0.1 runs Ray")
        assert "woken by the head's rendezvous, confirmed" in worker.stderr, worker.stderr
        after = gcs.methods()[len(before):]
        assert after.count(HEALTH) == 1, after
        assert log_ts(worker.stderr, "started ray") <= log_ts(worker.stderr, "runs Ray 2.60.0"), worker.stderr
    finally:
        rdv.close()


@pytest.mark.parametrize("token", [None, "right"], ids=["no-token", "token"])
def test_a_strangers_serving_is_not_taken(run, gcs, tmp_path, token):
    """Issue 28: a process on the head's rendezvous port (it bound it first, or the head's name
    resolves to it) wrote SERVING, and a worker started Ray although its GCS did not serve. Now:
    without a token the worker's own Health/Check says NOT_SERVING and the word is not taken; with
    one the stranger cannot tag its answer for the worker's nonce (it tags with another token) and
    is no rendezvous. Either way the worker polls and joins when the GCS really serves. On the old
    code the worker started Ray at once (the line below never came)."""
    rdv = FakeRendezvous(speak=True, token="stolen" if token else None)
    gcs.serving = False
    auth = {"RAY_AUTH_TOKEN": token} if token else {}
    try:
        worker = run(worker_env(gcs.port, rdv.port, **auth))
        if token:
            worker.wait_for_log("other than rayboot's rendezvous message with the head's tag")
        else:
            worker.wait_for_log("said SERVING and the GCS does not")
        assert rdv.told >= 1
        assert "started ray" not in worker.stderr and not (tmp_path / "ray.log").exists(), worker.stderr
        gcs.serving = True
        worker.wait_for_log("started ray")
        assert "woken by the head's rendezvous" not in worker.stderr, worker.stderr
    finally:
        rdv.close()


def indexed_job(name: str, index: int) -> dict:
    """A pod of the Indexed Job `name` in namespace ml: its cluster's name is "ml/<name>"."""
    return {"HOSTNAME": f"{name}-{index}", "JOB_COMPLETION_INDEX": str(index), "RAYBOOT_POD_NAMESPACE": "ml"}


def test_another_clusters_head_with_the_same_token_cannot_vouch(run, gcs, gcs2, tmp_path):
    """Issue 40: a keyed SERVING was an HMAC of the token over the worker's nonce alone, so the
    head of another cluster with the same token (one Secret per namespace) vouched for any nonce:
    the worker of ml/ray-a whose name led to the head of ml/ray-b started Ray while its own GCS
    said NOT_SERVING. Now the key is bound to the cluster's name, which each pod reads in its own
    pod: the real head of ml/ray-b is no rendezvous to the worker of ml/ray-a, which polls its GCS
    and joins when that serves. On the old code the worker started Ray at once."""
    rdv = free_port()
    gcs.token = gcs2.token = "shared"
    gcs.serving = True    # ml/ray-b's head: serving
    gcs2.serving = False  # the GCS the worker of ml/ray-a probes
    head = run(head_env(gcs, rdv, RAY_AUTH_TOKEN="shared", **indexed_job("ray-b", 0)))
    head.wait_for_log("is SERVING")
    worker = run(worker_env(gcs2.port, rdv, RAY_AUTH_TOKEN="shared", **indexed_job("ray-a", 1)))
    worker.wait_for_log("other than rayboot's rendezvous message with the head's tag")
    time.sleep(0.5)
    assert "started ray" not in worker.stderr, worker.stderr
    gcs2.serving = True
    worker.wait_for_log("started ray")
    assert "woken by the head's rendezvous" not in worker.stderr, worker.stderr


@pytest.mark.parametrize("name", ["ray-a", "ray-b"])
def test_the_tag_names_the_cluster_from_the_wire_format(run, gcs, name):
    """The key's binding to the cluster's name, checked against Python's hmac: a fake head that
    tags for ml/ray-a wakes the worker of ml/ray-a at once, one that tags for ml/ray-b (the same
    token) is refused and the worker waits for its GCS."""
    rdv = FakeRendezvous(token="shared", cluster_name=f"ml/{name}")
    gcs.token = "shared"
    try:
        worker = woken(run, gcs, rdv, worker_env(gcs.port, rdv.port, RAY_AUTH_TOKEN="shared",
                                                 **indexed_job("ray-a", 1)))
        worker.wait_for_log("started ray")
        if name == "ray-a":
            assert "woken by the head's rendezvous)" in worker.stderr, worker.stderr
        else:
            assert "other than rayboot's rendezvous message with the head's tag" in worker.stderr, worker.stderr
            assert "woken by the head's rendezvous" not in worker.stderr, worker.stderr
    finally:
        rdv.close()


def woken(run, gcs, rdv, env, args=()):
    """A worker that holds rdv while gcs does not serve, then is woken by it."""
    gcs.serving = False
    worker = run(env, list(args))
    worker.wait_for_log("holding the head's rendezvous")
    gcs.serving = True
    rdv.speak()
    return worker


def test_a_wrong_token_is_refused_before_ray_starts(run, gcs, tmp_path):
    """Token mode (RAY_AUTH_TOKEN set): the Ray version read, CheckAlive, is the token's check and
    comes before `ray start`: a woken worker with a wrong token exits 2 naming the variables, and
    Ray never starts."""
    gcs.token = "right"
    rdv = FakeRendezvous(token="wrong")  # the pod's token, wrong for the cluster: its rendezvous agrees
    try:
        worker = woken(run, gcs, rdv, worker_env(gcs.port, rdv.port, RAY_AUTH_TOKEN="wrong"))
        assert worker.wait(10) == 2, worker.stderr
        assert "RAY_AUTH_TOKEN" in worker.stderr and "RAY_AUTH_TOKEN_PATH" in worker.stderr, worker.stderr
        assert "woken by the head's rendezvous" in worker.stderr, worker.stderr
        assert "started ray" not in worker.stderr and not (tmp_path / "ray.log").exists(), worker.stderr
    finally:
        rdv.close()


def test_the_right_token_is_checked_before_ray_starts(run, gcs):
    rdv = FakeRendezvous(token="right")
    gcs.token = "right"
    try:
        worker = woken(run, gcs, rdv, worker_env(gcs.port, rdv.port, RAY_AUTH_TOKEN="right"), ["--log-format=json"])
        worker.wait_for_log("started ray")
        assert "woken by the head's rendezvous" in worker.stderr, worker.stderr
        assert log_ts(worker.stderr, "runs Ray 2.60.0") <= log_ts(worker.stderr, "started ray"), worker.stderr
        assert worker.stderr.index("runs Ray 2.60.0") < worker.stderr.index("started ray"), worker.stderr
    finally:
        rdv.close()


def test_no_token_for_a_token_gcs_exits_2_and_stops_ray(run, gcs, tmp_path):
    """Without a token the version read comes right after `ray start`: a GCS in token mode refuses
    it, and the pod exits 2 naming the variables and stops the Ray it started."""
    gcs.token = "right"
    rdv = FakeRendezvous()
    try:
        worker = woken(run, gcs, rdv, worker_env(gcs.port, rdv.port))
        assert worker.wait(15) == 2, worker.stderr
        assert "RAY_AUTH_TOKEN" in worker.stderr and "RAY_AUTH_TOKEN_PATH" in worker.stderr, worker.stderr
        assert "woken by the head's rendezvous" in worker.stderr, worker.stderr
        assert worker.stderr.count("started ray") == 1, worker.stderr
        assert worker.stderr.index("started ray") < worker.stderr.index("RAY_AUTH_TOKEN"), worker.stderr
    finally:
        rdv.close()


def test_no_rendezvous_falls_back_to_polling(run, gcs, closed_port):
    """A head that offers no rendezvous (nothing listens): the worker says so once and polls the
    GCS as before, so it still joins within tens of milliseconds of SERVING."""
    gcs.serving = False
    worker = run(worker_env(gcs.port, closed_port))
    worker.wait_for_log("no rendezvous at 127.0.0.1 port")
    before = health_calls(gcs)
    time.sleep(1.0)
    polled = health_calls(gcs) - before
    assert polled >= 10, f"only {polled} Health/Check calls in 1 s of fallback polling"
    t0 = time.monotonic()
    gcs.serving = True
    worker.wait_for_log("started ray")
    assert time.monotonic() - t0 < 1.0
    assert worker.stderr.count("no rendezvous at") == 1, worker.stderr  # retries are not logged


def test_off_means_no_port_and_no_connection(run, gcs):
    """RAYBOOT_RENDEZVOUS_PORT=0: the head listens on nothing, the worker connects to nothing."""
    head = run(head_env(gcs, 0))
    head.wait_for_log("is SERVING")
    assert "rendezvous on port" not in head.stderr, head.stderr
    worker = run(worker_env(gcs.port, 0))
    worker.wait_for_log("started ray")
    assert "rendezvous at" not in worker.stderr, worker.stderr


@pytest.mark.parametrize("value", ["x", "65536", "-1", "80a"])
def test_a_bad_port_exits_2_naming_it(run, gcs, value):
    r = run(head_env(gcs, value))
    assert r.wait(10) == 2, r.stderr
    assert "RAYBOOT_RENDEZVOUS_PORT" in r.stderr


def test_late_worker_is_told_at_once_and_the_child_reads_nothing(run, gcs):
    """After SERVING, a new connection gets the message at once and is held (until the job ends:
    test_rendezvous_finished.py); a peer that writes bytes while the GCS is not yet serving is only
    hung up on (the child reads nothing)."""
    rdv = free_port()
    gcs.serving = False
    head = run(head_env(gcs, rdv))
    rendezvous_pid(head)
    chatty = socket.create_connection(("127.0.0.1", rdv), timeout=5)
    chatty.sendall(b"GET / HTTP/1.1\r\n\r\n" * 100)
    # Hung up on before SERVING is sent: checked before the GCS turns, or the child could meet the
    # control byte first and tell the chatty peer too (seen once in CI under load).
    chatty.settimeout(5)
    try:
        got = chatty.recv(100)
    except ConnectionResetError:
        got = b""
    assert got == b"", f"a peer that wrote bytes got {got!r}"
    held = socket.create_connection(("127.0.0.1", rdv), timeout=5)
    gcs.serving = True
    head.wait_for_log("is SERVING")
    assert held.recv(100) == MESSAGE
    late = socket.create_connection(("127.0.0.1", rdv), timeout=5)
    assert late.recv(100) == MESSAGE
    for s in (held, late):
        s.settimeout(0.3)
        with pytest.raises(TimeoutError):
            s.recv(100)  # held open: nothing more until the head's command ends
    for s in (chatty, held, late):
        s.close()


def test_a_finished_head_ends_at_once_with_its_rendezvous(run, gcs):
    """The rendezvous child is rayboot's own: once the command and Ray are done it is stopped, and
    the head's pod ends then, not when the grace period's SIGKILL takes what is left."""
    port = free_port()
    r = run(head_env(gcs, port, RAYBOOT_GRACE_PERIOD="30"), ["--", sys.executable, "-c", "pass"])
    r.wait_for_log("rendezvous on port")
    t0 = time.monotonic()
    assert r.wait(40) == 0, r.stderr
    assert time.monotonic() - t0 < 12, r.stderr
    assert "deadline passed" not in r.stderr and "the rendezvous (pid" not in r.stderr, r.stderr


def confined_status(pid: int):
    """/proc/PID/status once its seccomp filter is on, else None."""
    status = open(f"/proc/{pid}/status").read()
    return status if re.search(r"^Seccomp:\s+2$", status, re.M) else None


def test_rendezvous_child_is_confined(run, gcs):
    """The live child has its seccomp filter (Seccomp: 2) and no_new_privs, holds nothing but its
    sockets, and the calls it makes are all allowed: it is still alive after serving."""
    rdv = free_port()
    gcs.serving = False
    head = run(head_env(gcs, rdv))
    pid = rendezvous_pid(head)
    # Logged at its fork: it sheds what it inherited and confines itself right after.
    status = eventually(lambda: confined_status(pid), timeout=10)
    assert re.search(r"^NoNewPrivs:\s+1$", status, re.M), status
    fds = {int(fd): os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
    assert all(t.startswith("socket:") for fd, t in fds.items() if fd > 2), fds
    held = socket.create_connection(("127.0.0.1", rdv), timeout=5)
    gcs.serving = True
    assert held.recv(100) == MESSAGE
    held.close()
    time.sleep(0.2)
    assert open(f"/proc/{pid}/status").read().count("State:") == 1
    assert "SIGSYS" not in head.stderr and "rendezvous:" not in head.stderr, head.stderr
    with open(f"/proc/{pid}/stat") as f:
        assert f.read().rsplit(")", 1)[1].split()[0] != "Z"
    head.proc.send_signal(signal.SIGTERM)
    head.wait(15)
    assert not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] == "Z"


def cpu_share(pid: int, seconds: float = 3.0) -> float:
    """The share of one CPU pid used over the next `seconds` (utime + stime from /proc/PID/stat)."""
    def ticks():
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # stat's 14th and 15th fields
    t0, c0 = time.monotonic(), ticks()
    time.sleep(seconds)
    return (ticks() - c0) / os.sysconf("SC_CLK_TCK") / (time.monotonic() - t0)


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


@pytest.fixture
def many_fds():
    """This test process may hold a few thousand sockets."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 4096
    if hard != resource.RLIM_INFINITY and hard < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, want))  # root
    elif soft == resource.RLIM_INFINITY or soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def flood(port: int, n: int) -> list:
    return [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(n)]


@pytest.mark.parametrize("how", ["rayboot-started-at-1024", "limit-lowered-to-64-under-it"])
def test_out_of_descriptors_the_listener_does_not_spin(run, gcs, many_fds, how):
    """Issue 28: ~1,100 idle connections took every descriptor of the rendezvous child; accept4
    failed with EMFILE, the listener stayed readable and the child polled it again at once, at
    90-94% of a CPU. Now a full house evicts its oldest connection (the slots are as many as
    RLIMIT_NOFILE leaves room for), and an accept4 that fails all the same (here: the child's limit
    lowered under it, after it counted its slots) leaves the listener alone for 200 ms. The child
    stays under 10% of a CPU over 3 s (it was ~90%), and once the flood is gone a new worker is
    told SERVING as before."""
    rdv = free_port()
    gcs.serving = False
    if how == "rayboot-started-at-1024":
        head = run(head_env(gcs, rdv), wrap=("prlimit", "--nofile=1024:4096", "--"))
        pid = rendezvous_pid(head)
        conns = flood(rdv, 1100)
        eventually(lambda: open_fds(pid) >= 1000, timeout=30)
    else:
        head = run(head_env(gcs, rdv))
        pid = rendezvous_pid(head)
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (64, 4096))
        conns = flood(rdv, 200)
        eventually(lambda: open_fds(pid) >= 60, timeout=30)
    share = cpu_share(pid)
    print(f"{how}: the rendezvous child used {share * 100:.1f}% of a CPU over 3 s holding "
          f"{open_fds(pid)} descriptors, with {len(conns)} connections open")
    assert share < 0.10, f"the rendezvous child spun at {share * 100:.0f}% of a CPU"
    if how == "rayboot-started-at-1024":
        # The oldest gave way (the head closed it); the newest is held.
        conns[0].settimeout(5)
        assert conns[0].recv(100) == b"", "the oldest connection was not evicted"
    for c in conns:
        c.close()
    gcs.serving = True
    head.wait_for_log("is SERVING")
    fresh = socket.create_connection(("127.0.0.1", rdv), timeout=10)
    fresh.settimeout(10)
    assert fresh.recv(100) == MESSAGE
    fresh.close()
    assert "SIGSYS" not in head.stderr and "the rendezvous (pid" not in head.stderr, head.stderr


@pytest.mark.parametrize("addr", ["127.0.0.1", "::1"])
def test_a_taken_port_ends_the_head_with_exit_2(run, gcs, tmp_path, addr):
    """Issue 28: whatever listens on the head's rendezvous port would be its workers' rendezvous
    (a worker takes its SERVING and FINISHED). The head only warned and went on; from [::1] it even
    listened on IPv4 alone beside the stranger. Now it exits 2 before Ray starts, naming the port
    and RAYBOOT_RENDEZVOUS_PORT."""
    rdv = free_port()
    family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    stranger = socket.socket(family, socket.SOCK_STREAM)
    if family == socket.AF_INET6:
        stranger.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    try:
        stranger.bind((addr, rdv))
        stranger.listen()
        head = run(head_env(gcs, rdv))
        try:
            code = head.wait(15)
        except subprocess.TimeoutExpired:
            code = None
        assert code == 2, head.stderr
        assert f"RAYBOOT_RENDEZVOUS_PORT={rdv}" in head.stderr and "Address in use" in head.stderr, head.stderr
        assert not (tmp_path / "ray.log").exists(), head.stderr
    finally:
        stranger.close()
