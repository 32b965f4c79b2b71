"""rayboot-sidecar under clients that try to wear it out: many slow clients from several source
addresses (127.0.0.0/8 is all loopback, so each test client binds an address of its own), each
trickling a byte now and then so that an idle timeout never fires, must not keep the kubelet's
probes from answering within 1 s; a request with a body is refused (413) and closed; the
requests waiting for a drain are bounded. The limits are sidecar/http.c's."""
import re
import socket
import threading
import time

import pytest

from sidecars import SIDECAR_NODE_IP as NODE_IP
from fake_gcs import DRAIN, Node, parse
from procs import eventually

# sidecar/http.c's bounds, as a client sees them.
PER_ADDRESS = 8
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
    # 12 a source, past the per-address limit; 96 in all, three times the old global limit.
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
    # Each source got at most PER_ADDRESS at once; every slow client was cut at the connection
    # deadline although it kept sending.
    held = [c for c in clients if c.opened]
    lasted = [c.ended - c.opened for c in held]
    assert held and max(lasted) < DEADLINE_S + 1.5, sorted(lasted)[-5:]
    cut = int(re.search(r"rayboot_sidecar_http_connections_cut_total (\d+)", s.get("/metrics")[1]).group(1))
    assert cut >= len(sources) * PER_ADDRESS, cut


def test_more_than_the_per_address_limit_from_one_source_are_refused(sidecar, worker_node):
    """One source holds at most PER_ADDRESS connections at once; another source is still served."""
    s = sidecar()
    held = []
    try:
        for _ in range(PER_ADDRESS + 4):
            c = socket.create_connection(("127.0.0.1", s.port), timeout=2, source_address=("127.0.0.7", 0))
            c.sendall(b"GET /healthz HTTP/1.1\r\n")
            held.append(c)
        time.sleep(0.3)
        closed = 0
        for c in held:
            c.settimeout(0.2)
            try:
                closed += c.recv(1) == b""
            except socket.timeout:
                pass
            except ConnectionResetError:
                closed += 1
        assert closed == 4, closed
        took, reply = timed_get(s.port, "/healthz")
        assert reply.startswith(b"HTTP/1.1 200") and took < 1.0
    finally:
        for c in held:
            c.close()


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
    """WAITERS requests may wait for a drain at once; one more is told so (503) at once, and the
    waiting ones get the drain's answer."""
    gcs.drain_removes_node = False
    s = sidecar()
    replies = []

    def wait_for_drain(source):
        with socket.create_connection(("127.0.0.1", s.drain_port), timeout=10, source_address=(source, 0)) as c:
            c.sendall(b"POST /drain?deadline=4 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
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
    assert replies[-1][1].startswith(b"HTTP/1.1 503") and b"too many clients waiting" in replies[-1][1], replies[-1]
    for t in waiting:
        t.join(timeout=10)
    drained = [r for src, r in replies if src != "127.0.0.4"]
    assert len(drained) == WAITERS and all(r.startswith(b"HTTP/1.1 200") and b'"outcome":"deadline"' in r
                                           for r in drained), drained
    assert len([parse(r) for m, r in gcs.calls if m == DRAIN]) == 1
