"""Waiting against GCS stand-ins that misbehave in ways real Ray does not on demand: every one is
"not yet", the wait keeps moving on per-attempt timeouts, and the final message names the last
failure."""
import re
import socket
import struct
import threading
import time
from concurrent import futures

import grpc
import pytest


class RawPeer:
    """A TCP listener on loopback that treats every connection the same way."""

    def __init__(self, behaviour):
        self.behaviour = behaviour
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.conns = []
        self.stopped = False
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while not self.stopped:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            if self.behaviour == "reset":
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                conn.close()
            elif self.behaviour == "http1":
                threading.Thread(target=self._http1, args=(conn,), daemon=True).start()
            elif self.behaviour == "reset-mid-reply":
                threading.Thread(target=self._reset_mid_reply, args=(conn,), daemon=True).start()
            elif self.behaviour in H2_ANSWERS:
                threading.Thread(target=h2_answer, args=(conn, self.behaviour), daemon=True).start()
            # "hang": accept and never answer

    @staticmethod
    def _http1(conn):
        """Answers like an HTTP/1.1 server, then closes politely: shut down writing and read
        until the client hangs up, so that the close is a FIN, never a reset."""
        try:
            conn.settimeout(2)
            conn.recv(4096)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
            conn.shutdown(socket.SHUT_WR)
            while conn.recv(4096):
                pass
        except OSError:
            pass
        conn.close()

    @staticmethod
    def _reset_mid_reply(conn):
        """Waits for an HTTP/2 request, starts the answer (SETTINGS, then a HEADERS frame that
        declares 64 bytes and carries 5), and resets the connection. The cheap TCP probe, which
        sends nothing, just sees its connection closed."""
        try:
            conn.settimeout(3)
            data = b""
            while not (data.startswith(b"PRI * HTTP/2.0") and len(data) > 24 + 9):
                chunk = conn.recv(4096)
                if not chunk:
                    conn.close()
                    return
                data += chunk
            time.sleep(0.05)  # the request's HEADERS follow the preface and SETTINGS
            settings = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
            headers_cut = b"\x00\x00\x40\x01\x04\x00\x00\x00\x01" + b"\x88\x5f\x8b\x1d\x75"
            conn.sendall(settings + headers_cut)
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
        conn.close()

    def close(self):
        self.stopped = True
        self.sock.close()
        for c in self.conns:
            c.close()


# A hand-written HTTP/2 server side, just enough to answer one gRPC call wrongly in ways grpcio
# never would. HPACK: only the static table and literals without indexing, no Huffman.
H2_DATA, H2_HEADERS, H2_SETTINGS = 0, 1, 4
END_STREAM, END_HEADERS, ACK = 0x1, 0x4, 0x1
GRPC_HEADERS = (b"\x88"                                    # :status 200 (static index 8)
                b"\x0f\x10\x10application/grpc")         # content-type (static index 31)
GRPC_OK_TRAILERS = b"\x00\x0bgrpc-status\x010"
SERVING = b"\x00\x00\x00\x00\x02\x08\x01"               # HealthCheckResponse{status: SERVING}


def h2_frame(kind, flags, stream, payload=b""):
    return len(payload).to_bytes(3, "big") + bytes([kind, flags]) + stream.to_bytes(4, "big") + payload


def read_h2_request(conn):
    """Reads the client preface and frames until the request on stream 1 has ended."""
    buf = b""

    def need(n):
        nonlocal buf
        while len(buf) < n:
            chunk = conn.recv(65536)
            if not chunk:
                raise OSError("client went away")
            buf += chunk

    need(24)
    buf = buf[24:]
    while True:
        need(9)
        length, kind, flags = int.from_bytes(buf[:3], "big"), buf[3], buf[4]
        stream = int.from_bytes(buf[5:9], "big") & 0x7FFFFFFF
        need(9 + length)
        buf = buf[9 + length:]
        if stream == 1 and kind in (H2_HEADERS, H2_DATA) and flags & END_STREAM:
            return


def h2_answer(conn, behaviour):
    """Answers the Health/Check on stream 1 as H2_ANSWERS[behaviour] says, then waits for the
    client to hang up (so that the end is its decision, never an RST from here)."""
    try:
        conn.settimeout(10)
        read_h2_request(conn)
        conn.sendall(h2_frame(H2_SETTINGS, 0, 0) + h2_frame(H2_SETTINGS, ACK, 0)
                     + h2_frame(H2_HEADERS, END_HEADERS, 1, GRPC_HEADERS))
        H2_ANSWERS[behaviour](conn)
        while conn.recv(65536):
            pass
    except OSError:
        pass
    conn.close()


def answer_without_trailers(conn):
    """A whole SERVING message, and the stream ends on the DATA frame: no grpc-status at all."""
    conn.sendall(h2_frame(H2_DATA, END_STREAM, 1, SERVING))


def answer_huge_declared_length(conn):
    """A message prefix that declares 4 GiB - 1, eight bytes of it, and a clean grpc-status 0."""
    conn.sendall(h2_frame(H2_DATA, 0, 1, b"\x00\xff\xff\xff\xff" + b"\x08\x01" * 4)
                 + h2_frame(H2_HEADERS, END_HEADERS | END_STREAM, 1, GRPC_OK_TRAILERS))


def answer_forever(conn):
    """A message prefix that declares 4 GiB - 1, then 1 KiB of it every 5 ms, never ending.
    Slow enough to stay inside HTTP/2 flow control, fast enough to pass any sane reply cap."""
    conn.sendall(h2_frame(H2_DATA, 0, 1, b"\x00\xff\xff\xff\xff"))
    while True:
        conn.sendall(h2_frame(H2_DATA, 0, 1, b"\x08\x01" * 512))
        time.sleep(0.005)


def answer_oversized_h2_frame(conn):
    """An HTTP/2 DATA frame header declaring 16 MiB - 1, past the 16 KiB frame size the client
    allows, then bytes that never add up to it. The client answers GOAWAY (FRAME_SIZE_ERROR) and
    reads no further; this peer ignores that and stays connected, so the call ends at its own
    timeout, or, when libcurl sees the session end first (it depends on how the bytes arrive),
    as an answer without trailers or (libcurl 8) an HTTP/2 error. Never SERVING."""
    conn.sendall(b"\xff\xff\xff" + bytes([H2_DATA, 0]) + (1).to_bytes(4, "big") + b"\x00" * 4096)


H2_ANSWERS = {
    "no-trailers": answer_without_trailers,
    "huge-declared-length": answer_huge_declared_length,
    "never-ending-body": answer_forever,
    "oversized-h2-frame": answer_oversized_h2_frame,
}


@pytest.mark.parametrize("behaviour,reason", [
    ("hang", r"Health/Check: timeout"),
    # The RST can land on the cheap TCP probe (its connect sees ECONNRESET) or on Health/Check;
    # while libcurl is still finishing its connect, it reads as a failed connect.
    ("reset", r"TCP: Connection reset by peer|Health/Check: connection (reset|refused or unreachable)"),
    # libcurl 8 reads an HTTP/1 answer to its HTTP/2 preface as an HTTP/2 error (7.88: nothing).
    ("http1", r"Health/Check: not an HTTP/2 gRPC server"),
    ("reset-mid-reply", r"Health/Check: connection reset"),
    ("no-trailers", r"Health/Check: no grpc-status trailer"),
    ("huge-declared-length", r"Health/Check: reply frame declares 4294967295 bytes but holds 8$"),
    ("never-ending-body", r"Health/Check: reply too large$"),
    ("oversized-h2-frame", r"Health/Check: (timeout|no grpc-status trailer|not an HTTP/2 gRPC server \(or the stream was reset\))$"),
])
def test_misbehaving_peer_is_not_yet_and_named(run, behaviour, reason):
    peer = RawPeer(behaviour)
    try:
        r = run({"RAYBOOT_ROLE": "worker", "RAYBOOT_HEAD_ADDRESS": f"127.0.0.1:{peer.port}",
                 "RAYBOOT_WAIT_TIMEOUT": "4"})
        assert r.wait(20) == 75, r.stderr
        last = r.stderr.strip().splitlines()[-1]
        assert re.search(reason, last), last
        assert "SERVING" not in r.stderr.replace("NOT_SERVING", "")
    finally:
        peer.close()


def test_a_peer_that_never_answers_does_not_stretch_the_deadline(run):
    """Each Health/Check may take 2 s; the one running into the deadline is cut to what is left
    of it, so a 3 s wait ends at 3 s, not at 4 (two full attempts)."""
    peer = RawPeer("hang")
    try:
        started = time.monotonic()
        r = run({"RAYBOOT_ROLE": "worker", "RAYBOOT_HEAD_ADDRESS": f"127.0.0.1:{peer.port}",
                 "RAYBOOT_WAIT_TIMEOUT": "3"})
        assert r.wait(20) == 75, r.stderr
        took = time.monotonic() - started
        assert "after 3.0 s" in r.stderr.strip().splitlines()[-1], r.stderr
        assert took < 3.6, took
    finally:
        peer.close()


def test_garbage_health_reply_is_malformed(run):
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))

    class Junk(grpc.GenericRpcHandler):
        def service(self, details):
            return grpc.unary_unary_rpc_method_handler(lambda req, ctx: b"\x08")  # a varint cut short

    server.add_generic_rpc_handlers([Junk()])
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        r = run({"RAYBOOT_ROLE": "worker", "RAYBOOT_HEAD_ADDRESS": f"127.0.0.1:{port}", "RAYBOOT_WAIT_TIMEOUT": "2"})
        assert r.wait(20) == 75, r.stderr
        assert "malformed HealthCheckResponse" in r.stderr
    finally:
        server.stop(grace=None)


def test_grpc_error_status_is_named(run):
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))

    class Unavailable(grpc.GenericRpcHandler):
        def service(self, details):
            return grpc.unary_unary_rpc_method_handler(
                lambda req, ctx: ctx.abort(grpc.StatusCode.UNAVAILABLE, "warming up"))

    server.add_generic_rpc_handlers([Unavailable()])
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        r = run({"RAYBOOT_ROLE": "worker", "RAYBOOT_HEAD_ADDRESS": f"127.0.0.1:{port}", "RAYBOOT_WAIT_TIMEOUT": "2"})
        assert r.wait(20) == 75, r.stderr
        assert "grpc-status 14 (warming up)" in r.stderr
    finally:
        server.stop(grace=None)
