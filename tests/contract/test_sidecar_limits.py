"""rayboot-sidecar under clients that try to wear it out: many slow clients from several source
addresses (127.0.0.0/8 is all loopback, so each test client binds an address of its own), each
trickling a byte now and then so that an idle timeout never fires, must not keep the kubelet's
probes from answering within 1 s; idle connections held from the probes' own address (the bridge
address every hostNetwork process shares with the kubelet), or 256 of them from 32 addresses, must
not either, nor keep the preStop hook's `rayboot-sidecar drain` out of the drain port; a request
with a body is refused (413) and closed; the requests waiting for a drain are bounded. The limits
are sidecar/http.c's. And a process that holds the drain port first: the sidecar keeps its
probes, and the hook, with Ray's token, takes no unproven answer and waits 2 s at most for one."""
import re
import select
import socket
import threading
import time

import pytest

from fake_gcs import DRAIN, Node, parse
from procs import eventually
from sidecars import SIDECAR_NODE_IP as NODE_IP

# sidecar/http.c's bounds, as a client sees them.
DEADLINE_S = 3.0
WAITERS = 8


@pytest.fixture
def worker_node(gcs):
    node = Node(NODE_IP, node_id=bytes([7]) * 28)
    gcs.nodes.append(node)
    return node


class Trickler(threading.Thread):
    """One slow client: a request line, then one header byte every half second until the server
    ends the connection (or `stop`). Records when it connected and when the server ended it."""

    def __init__(self, port, source, stop):
        super().__init__(daemon=True)
        self.port, self.source, self.stop = port, source, stop
        self.opened = self.ended = None

    def run(self):
        try:
            s = socket.create_connection(("127.0.0.1", self.port), timeout=2, source_address=(self.source, 0))
        except OSError:
            return
        self.opened = time.monotonic()
        try:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            s.settimeout(0.5)
            while not self.stop.is_set():
                try:
                    if s.recv(1) == b"":
                        break
                except socket.timeout:
                    s.sendall(b"a")  # a byte: libmicrohttpd's idle timer starts over
        except OSError:
            pass
        finally:
            self.ended = time.monotonic()
            s.close()


def timed_get(port, path):
    t0 = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=1) as c:
        c.settimeout(1)
        c.sendall(f"GET {path} HTTP/1.1\r\nHost: kubelet\r\n\r\n".encode())
        reply = c.recv(200)
    return time.monotonic() - t0, reply


def test_slow_clients_from_many_addresses_do_not_starve_the_probes(sidecar, worker_node):
    s = sidecar()
    eventually(lambda: s.get("/readyz")[0] == 200)
    stop = threading.Event()
    sources = [f"127.0.0.{i}" for i in range(2, 10)]
    # 12 a source; 96 in all, three times the old global limit.
    clients = [Trickler(s.port, src, stop) for src in sources for _ in range(12)]
    started = time.monotonic()
    for c in clients:
        c.start()
    worst, answers = 0.0, 0
    try:
        # 12 s of probes, four times the connection deadline, while the slow clients reconnect never
        # and trickle on: every answer within 1 s (the kubelet's default probe timeout).
        while time.monotonic() - started < 12:
            for path, status in (("/healthz", b"200"), ("/readyz", b"200")):
                took, reply = timed_get(s.port, path)
                assert reply.split(b" ")[1:2] == [status], reply
                worst, answers = max(worst, took), answers + 1
            time.sleep(0.25)
    finally:
        stop.set()
        for c in clients:
            c.join(timeout=5)
    print(f"{answers} probe answers, the slowest in {worst * 1000:.0f} ms")
    assert worst < 1.0
    # Every slow client was cut at the connection deadline although it kept sending.
    held = [c for c in clients if c.opened]
    lasted = [c.ended - c.opened for c in held]
    assert held and max(lasted) < DEADLINE_S + 1.5, sorted(lasted)[-5:]
    cut = int(re.search(r"rayboot_sidecar_http_connections_cut_total (\d+)", s.get("/metrics")[1]).group(1))
    assert cut >= len(held), cut


class Holder(threading.Thread):
    """Idle connections to PORT, COUNT from each of SOURCES, that send nothing: each one the server
    ends (its deadline, or making way for another) is opened again at once, so that COUNT stay
    open from each source for as long as the test runs, as an attacker keeps them."""

    def __init__(self, port, sources, count):
        super().__init__(daemon=True)
        self.port, self.wanted = port, [src for src in sources for _ in range(count)]
        self.stop, self.reopened = threading.Event(), 0
        self.socks = {}

    def open(self, source):
        try:
            s = socket.create_connection(("127.0.0.1", self.port), timeout=2, source_address=(source, 0))
        except OSError:
            return
        self.socks[s.fileno()] = (s, source)

    def run(self):
        for source in self.wanted:
            self.open(source)
        poller = select.poll()
        watched = set()
        while not self.stop.is_set():
            for fd in set(self.socks) - watched:
                poller.register(fd, select.POLLIN)
                watched.add(fd)
            for fd, _ in poller.poll(20):
                s, source = self.socks.pop(fd)
                poller.unregister(fd)
                watched.discard(fd)
                s.close()
                self.open(source)
                self.reopened += 1
            missing = len(self.wanted) - len(self.socks)
            for source in self.wanted[:missing]:
                self.open(source)
        for s, _ in self.socks.values():
            s.close()

    def held(self):
        return len(self.socks)

    def __enter__(self):
        self.start()
        eventually(lambda: self.held() == len(self.wanted))
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.join(timeout=10)


def probe(port, path, source, timeout):
    """One probe as the kubelet makes it, from SOURCE: the status it got, or None (refused, cut, or
    no answer within TIMEOUT)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout, source_address=(source, 0)) as c:
            c.settimeout(timeout)
            c.sendall(f"GET {path} HTTP/1.1\r\nHost: kubelet\r\nUser-Agent: kube-probe/1.31\r\n\r\n".encode())
            reply = c.recv(200)
    except OSError:
        return None
    return int(reply.split()[1]) if reply.startswith(b"HTTP/1.1 ") else None


def probes_answered(port, source, n=40, timeout=1.0, every=0.1):
    """How many of N probes (/healthz and /readyz in turn, one EVERY seconds: 4 s in all, past the
    connection deadline of the idle ones) from SOURCE were answered 200."""
    answered, worst = 0, 0.0
    for i in range(n):
        t0 = time.monotonic()
        answered += probe(port, ("/healthz", "/readyz")[i % 2], source, timeout) == 200
        worst = max(worst, time.monotonic() - t0)
        time.sleep(every)
    print(f"the slowest probe took {worst * 1000:.0f} ms")
    return answered


@pytest.mark.parametrize("sources, per_source, prober", [
    (["127.0.0.1"], 8, "127.0.0.1"),  # the probes' own address: the bridge's, shared on the node
    ([f"127.0.0.{i}" for i in range(2, 34)], 8, "127.0.0.34"),  # 32 addresses x 8: all 256
], ids=["8-from-the-probes-address", "256-from-32-addresses"])
def test_idle_connections_do_not_starve_the_probes(sidecar, worker_node, sources, per_source, prober):
    """Idle connections, opened again as soon as the sidecar ends them, from the very address the
    probes come from or filling the whole table: every probe is still answered within 1 s, the kubelet's default timeoutSeconds (the
    oldest idle connection gives way). Before, 8 from the probes' address or 256 from 32 addresses
    let none (or few) through: the per-address cap and the total refused the probe at accept."""
    s = sidecar()
    eventually(lambda: s.get("/readyz")[0] == 200)
    with Holder(s.port, sources, per_source) as held:
        answered = probes_answered(s.port, prober)
        still = held.held()
    print(f"{answered} of 40 probes answered; {held.reopened} idle connections opened again; {still} held")
    assert answered == 40
    assert still >= len(sources) * per_source - 8  # the attack was on throughout


def test_idle_connections_do_not_keep_the_prestop_drain_out(sidecar, gcs, worker_node):
    """8 idle connections to the drain port from loopback (any process of the pod can open them):
    `rayboot-sidecar drain` still gets in, DrainNode is sent and it exits 0. Before, the 9th
    connection from 127.0.0.1 was refused at accept: exit 75, no DrainNode."""
    s = sidecar()
    eventually(lambda: s.get("/readyz")[0] == 200)
    with Holder(s.drain_port, ["127.0.0.1"], 8):
        code, answer, err = s.drain("--deadline=25")  # as k8s/volcano/ray-cluster.yaml runs it
    assert code == 0 and answer["outcome"] == "left", (code, answer, err)
    assert [m for m, _ in gcs.calls if m == DRAIN]


def test_a_full_table_of_idle_connections_does_not_keep_the_prestop_drain_out(sidecar, gcs, worker_node):
    """The whole table of the drain port held idle from loopback: the preStop's connection takes
    the place of the oldest."""
    s = sidecar()
    eventually(lambda: s.get("/readyz")[0] == 200)
    with Holder(s.drain_port, [f"127.0.0.{i}" for i in range(2, 34)], 8):
        code, answer, err = s.drain()
    assert code == 0 and answer["outcome"] == "left", (code, answer, err)


@pytest.mark.parametrize("port_name", ["port", "drain_port"])
@pytest.mark.parametrize("body", [b"Content-Length: 5\r\n\r\nhello", b"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"],
                         ids=["length", "chunked"])
def test_a_request_body_is_413_and_closed(sidecar, gcs, worker_node, port_name, body):
    s = sidecar()
    port = getattr(s, port_name)
    with socket.create_connection(("127.0.0.1", port), timeout=2) as c:
        c.sendall(b"POST /drain HTTP/1.1\r\nHost: x\r\n" + body)
        reply = b""
        while chunk := c.recv(4096):  # the server closes: recv ends
            reply += chunk
    assert reply.startswith(b"HTTP/1.1 413"), reply
    assert b"Connection: close" in reply
    assert not [m for m, _ in gcs.calls if m == DRAIN]


def test_drain_waiters_are_bounded(sidecar, gcs, worker_node):
    """WAITERS requests may wait for a drain at once; one more is told so (429) at once, and the
    waiting ones get the drain's answer."""
    gcs.drain_removes_node = False
    s = sidecar({"RAYBOOT_GRACE_PERIOD": "7"})  # a drain of 4 s
    replies = []

    def wait_for_drain(source):
        with socket.create_connection(("127.0.0.1", s.drain_port), timeout=10, source_address=(source, 0)) as c:
            c.sendall(b"POST /drain HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
            reply = b""
            while chunk := c.recv(4096):
                reply += chunk
            replies.append((source, reply))

    waiting = [threading.Thread(target=wait_for_drain, args=(f"127.0.0.{2 + i % 2}",)) for i in range(WAITERS)]
    for t in waiting:
        t.start()
    eventually(lambda: [m for m, _ in gcs.calls if m == DRAIN])
    time.sleep(0.5)
    t0 = time.monotonic()
    wait_for_drain("127.0.0.4")
    assert time.monotonic() - t0 < 1.0
    assert replies[-1][1].startswith(b"HTTP/1.1 429") and b"too many clients waiting" in replies[-1][1], replies[-1]
    for t in waiting:
        t.join(timeout=10)
    drained = [r for src, r in replies if src != "127.0.0.4"]
    assert len(drained) == WAITERS and all(r.startswith(b"HTTP/1.1 200") and b'"outcome":"deadline"' in r
                                           for r in drained), drained
    assert len([parse(r) for m, r in gcs.calls if m == DRAIN]) == 1


@pytest.mark.parametrize("keyed", [False, True])
def test_callers_waiting_already_do_not_keep_the_prestop_from_waiting(sidecar, gcs, worker_node, keyed):
    """WAITERS callers of the pod's own (the same UID as the preStop hook) wait for a drain: the
    preStop's `rayboot-sidecar drain`, told 429, asks again until the drain is done, then exits 0
    with its answer, as late as they do. Before, it was told 503 at once and exited 1 while the
    drain went on. With Ray's token too: a 429 (which carries no proof) only makes it ask again."""
    gcs.drain_removes_node = False
    env = token_env(gcs) if keyed else {}
    s = sidecar({"RAYBOOT_GRACE_PERIOD": "7", **env})  # a drain of 4 s
    strays = []

    def stray(source):  # two addresses: the old per-address cap is not what this is about
        with socket.create_connection(("127.0.0.1", s.drain_port), timeout=15, source_address=(source, 0)) as c:
            c.sendall(b"POST /drain HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
            strays.append(c.recv(4096))

    waiting = [threading.Thread(target=stray, args=(f"127.0.0.{2 + i % 2}",)) for i in range(WAITERS)]
    t0 = time.monotonic()
    for w in waiting:
        w.start()
    eventually(lambda: [m for m, _ in gcs.calls if m == DRAIN])
    time.sleep(0.5)
    code, answer, err = s.drain("--deadline=25", env=env)
    took = time.monotonic() - t0
    for w in waiting:
        w.join(timeout=10)
    assert code == 0 and answer["outcome"] == "deadline", (code, answer, err)
    assert took >= 3.5, took  # it waited for the drain, not for nothing
    assert "asking again" in err, err
    assert len(strays) == WAITERS and all(r.startswith(b"HTTP/1.1 200") for r in strays), strays


# --- Another process on the drain port (a squatter) -------------------------------------------

TOKEN = "0123456789abcdef0123456789abcdef"  # Ray's token, in the sidecar and in the Ray container
FORGED = b'{"accepted":true,"node_id":"07","outcome":"left","drained_in_ms":5,"reason":"x","trigger":"preStop"}\n'


class Squatter(threading.Thread):
    """A process of the pod that took 127.0.0.1:PORT before the sidecar: it answers every request
    with a forged "drained" (answer=True; a GET /hello with HELLO when given), or takes connections
    and never answers."""

    def __init__(self, answer=True, hello=None):
        super().__init__(daemon=True)
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.answer, self.hello, self.held, self.requests = answer, hello, [], 0
        self.start()

    def run(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.requests += 1
            if not self.answer:
                self.held.append(conn)
                continue
            with conn:
                body = self.hello if conn.recv(4096).startswith(b"GET /hello") and self.hello else FORGED
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
                             b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the accept, which holds the socket otherwise
        except OSError:
            pass
        self.sock.close()
        for c in self.held:
            c.close()


@pytest.fixture
def squatter():
    made = []

    def make(answer=True, hello=None):
        made.append(Squatter(answer, hello))
        return made[-1]

    yield make
    for s in made:
        s.close()


def token_env(gcs):
    gcs.token = TOKEN
    return {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": TOKEN}


def test_a_squatter_cannot_answer_drained(sidecar_bin, sidecar, gcs, worker_node, squatter):
    """The attack: a process holds 127.0.0.1:8078 before the sidecar and answers the preStop's
    drain with "drained". With Ray's token in both containers, its answer carries no proof: the hook
    says so and exits 76, and nothing is taken for a drain; the sidecar (its port taken) still
    drains on SIGTERM. Before, the hook printed the forged answer and exited 0 with no DrainNode."""
    from sidecars import drain_hook
    sq = squatter()
    env = token_env(gcs)
    code, answer, err = drain_hook(sidecar_bin, sq.port, env=env, timeout=20)
    assert code == 76 and answer is None, (code, answer, err)
    assert "not proven by Ray's token (from RAY_AUTH_TOKEN)" in err, err
    assert not [m for m, _ in gcs.calls if m == DRAIN]
    s = sidecar({**env, "RAYBOOT_SIDECAR_DRAIN_PORT": str(sq.port)})
    assert s.terminate() == 0
    assert [m for m, _ in gcs.calls if m == DRAIN], s.stderr


@pytest.mark.parametrize("keyed", [True, False])
def test_a_squatter_that_never_answers_does_not_hold_the_hook(sidecar_bin, gcs, squatter, keyed):
    """A process holds the drain port, takes the hook's connection and never answers: the hook gives
    up after its quick hello (2 s), exit 76, with or without Ray's token. Before, it waited for the
    whole grace period (here: this test's 20 s)."""
    from sidecars import drain_hook
    sq = squatter(answer=False)
    t0 = time.monotonic()
    code, answer, err = drain_hook(sidecar_bin, sq.port, env=token_env(gcs) if keyed else None, timeout=20)
    took = time.monotonic() - t0
    assert code == 76 and answer is None and "did not answer as the sidecar within 2000 ms" in err, (code, err)
    assert took < 4, took


def test_a_squatters_hold_does_not_hold_the_hook(sidecar_bin, squatter, tmp_path):
    """The attack: without Ray's token nothing proves the sidecar, and a process holding the drain
    port says in its hello that a drain would be held an hour (join_hold_ms); where PID 1 is a
    `ray start` still waiting for its node, the hook would watch it that long before it asks. It
    believes no more than the sidecar ever holds (1.5 s, and a margin): it asks within 2 s."""
    from sidecars import drain_hook
    sq = squatter(hello=b'{"sidecar":"rayboot-sidecar","drain_wait_ms":1000,"join_hold_ms":3600000}\n')
    t0 = time.monotonic()
    code, answer, err = drain_hook(sidecar_bin, sq.port, timeout=20, pid1=tmp_path, pid1_name="ray")
    took = time.monotonic() - t0
    assert sq.requests == 2, (sq.requests, err)  # the hello, then the drain
    assert 1.5 < took < 3.5, f"the hook asked {took:.2f} s in: {err}"


def test_the_sidecar_proves_itself_to_the_hook(sidecar, gcs, worker_node):
    """With Ray's token, the real sidecar's answers carry the proof: the hook drains (exit 0). A hook
    with another token cannot check them and drains nothing (76)."""
    env = token_env(gcs)
    s = sidecar(env)
    code, answer, err = s.drain(env={**env, "RAY_AUTH_TOKEN": "f" * 32})
    assert code == 76 and "not proven" in err, (code, err)
    assert not [m for m, _ in gcs.calls if m == DRAIN]
    code, answer, err = s.drain(env=env)
    assert code == 0 and answer["outcome"] == "left", (code, answer, err)
    status, body = s.post_drain("/hello", method="GET")
    assert status == 200 and '"sidecar":"rayboot-sidecar"' in body, body


def test_a_taken_drain_port_leaves_the_probes_up(sidecar, gcs, worker_node, squatter):
    """The attack: a process binds 127.0.0.1:8078 before the sidecar. The sidecar keeps serving its
    probes and says so (log, rayboot_sidecar_drain_port_listening 0); once the port is free it takes
    it, and the preStop drains through it. Before, the sidecar exited 2: no probes, no drain."""
    sq = squatter()
    s = sidecar({"RAYBOOT_SIDECAR_DRAIN_PORT": str(sq.port)})
    assert s.get("/healthz") == (200, "ok\n")
    eventually(lambda: s.get("/readyz")[0] == 200)
    assert f"could not listen on 127.0.0.1:{sq.port}: another process holds the port" in s.stderr, s.stderr
    assert "serving the probes without it" in s.stderr
    assert "rayboot_sidecar_drain_port_listening 0" in s.get("/metrics")[1]
    sq.close()
    eventually(lambda: "listening on the drain port" in s.stderr, timeout=5)
    assert "rayboot_sidecar_drain_port_listening 1" in s.get("/metrics")[1]
    code, answer, err = s.drain(port=sq.port)
    assert code == 0 and answer["outcome"] == "left", (code, answer, err)
