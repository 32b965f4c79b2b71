"""A misbehaving nameserver for contract tests: UDP and TCP on port 53 of a loopback address of
its own (127.83.x.y), standard library only. It answers one name (`name`) as `mode` says and
every other name with NXDOMAIN; tests flip `mode`, `addresses` and `delay` while rayboot waits,
and read back what it was asked (`queries`: transport, name, type).

Modes: "answer" (A and AAAA records for `addresses`, each by its family; a name without one is
NODATA for that type; above 512 bytes a UDP answer is truncated, so the client asks over TCP), "nxdomain",
"servfail", "refused", "truncated" (UDP: an empty reply with the TC bit; TCP: the full answer),
"no-tcp" ("truncated" with no TCP listener behind it), and garbage: "garbage-random" (random
bytes), "garbage-short" (5 bytes), "garbage-wrong-id" (a well-formed answer with another ID),
"garbage-rdlength" (the right ID and question, an A record whose data runs past the end),
"garbage-pointer-loop" (an answer name that is a compression pointer to itself)."""
import os
import random
import select
import socket
import struct
import threading

QR, AA, TC, RD, RA = 0x8000, 0x0400, 0x0200, 0x0100, 0x0080
NOERROR, SERVFAIL, NXDOMAIN, REFUSED = 0, 2, 3, 5
TYPE_A, TYPE_AAAA, CLASS_IN = 1, 28, 1
UDP_MAX_BYTES = 512  # no EDNS: a reply above this is truncated (RFC 1035 4.2.1)


def parse_query(msg: bytes):
    """(id, flags, qname, qtype, question bytes) of a query; ValueError if it is not one."""
    if len(msg) < 12:
        raise ValueError("short")
    qid, flags, qdcount = struct.unpack("!HHH", msg[:6])
    if qdcount != 1:
        raise ValueError("qdcount")
    labels, i = [], 12
    while True:
        n = msg[i]
        i += 1
        if n == 0:
            break
        if n & 0xC0:
            raise ValueError("compressed question")
        labels.append(msg[i:i + n].decode("ascii", "replace"))
        i += n
    qtype, qclass = struct.unpack("!HH", msg[i:i + 4])
    return qid, flags, ".".join(labels).lower(), qtype, msg[12:i + 4]


def a_record(addr: str, ttl: int = 5) -> bytes:
    return struct.pack("!HHHIH", 0xC00C, TYPE_A, CLASS_IN, ttl, 4) + socket.inet_aton(addr)


def aaaa_record(addr: str, ttl: int = 5) -> bytes:
    return struct.pack("!HHHIH", 0xC00C, TYPE_AAAA, CLASS_IN, ttl, 16) + socket.inet_pton(socket.AF_INET6, addr)


def reply(qid, qflags, question, rcode=NOERROR, answers=(), flags=0) -> bytes:
    header = struct.pack("!HHHHHH", qid, QR | AA | RA | (qflags & RD) | flags | rcode, 1, len(answers), 0, 0)
    return header + question + b"".join(answers)


class FakeDns:
    def __init__(self, name: str, mode: str = "answer", addresses=("127.0.0.1",), delay: float = 0.0,
                 host: str = None):
        """host: listen there (e.g. "::1" inside a network namespace of the test's own);
        otherwise on a free 127.83.x.y."""
        self.name = name.rstrip(".").lower()
        self.mode, self.addresses, self.delay = mode, list(addresses), delay
        self.queries = []
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.udp, self.tcp = self._bind_to(host) if host else self._bind()
        self.address = self.udp.getsockname()[0]
        self.threads = [threading.Thread(target=self._serve, daemon=True)]
        self.threads[0].start()

    def _bind(self):
        """Port 53 on a free 127.83.x.y: other tests may hold some of them at the same time."""
        rng = random.Random(os.getpid() ^ id(self))
        for _ in range(200):
            addr = f"127.83.{rng.randrange(1, 255)}.{rng.randrange(1, 255)}"
            udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                udp.bind((addr, 53))
                tcp.bind((addr, 53))
                tcp.listen(16)
                return udp, tcp
            except OSError:
                udp.close()
                tcp.close()
        raise RuntimeError("no free 127.83.x.y:53")

    @staticmethod
    def _bind_to(host):
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        udp, tcp = socket.socket(family, socket.SOCK_DGRAM), socket.socket(family, socket.SOCK_STREAM)
        udp.bind((host, 53))
        tcp.bind((host, 53))
        tcp.listen(16)
        return udp, tcp

    def resolv_conf(self) -> str:
        return f"nameserver {self.address}\noptions ndots:5\n"

    def asked(self, transport=None):
        with self.lock:
            return [q for q in self.queries if transport is None or q[0] == transport]

    def stop(self):
        self.stopped.set()
        self.udp.close()
        self.tcp.close()
        for t in self.threads:
            t.join(timeout=5)

    def _serve(self):
        while not self.stopped.is_set():
            try:
                ready, _, _ = select.select([self.udp, self.tcp], [], [], 0.1)
            except (OSError, ValueError):
                return
            for sock in ready:
                try:
                    if sock is self.udp:
                        msg, peer = self.udp.recvfrom(4096)
                        self._later(lambda m=msg, p=peer: self._answer_udp(m, p))
                    else:
                        conn, _ = self.tcp.accept()
                        if self.mode == "no-tcp":
                            conn.close()  # as a server with no TCP service: the connection ends at once
                            continue
                        t = threading.Thread(target=self._serve_tcp, args=(conn,), daemon=True)
                        self.threads.append(t)
                        t.start()
                except OSError:
                    if self.stopped.is_set():
                        return

    def _later(self, fn):
        """Answers after `delay` without holding up other queries."""
        if self.delay <= 0:
            fn()
            return
        timer = threading.Timer(self.delay, fn)
        timer.daemon = True
        timer.start()

    def _answer_udp(self, msg, peer):
        out = self._respond(msg, "udp")
        if out is not None and not self.stopped.is_set():
            try:
                self.udp.sendto(out, peer)
            except OSError:
                pass

    def _serve_tcp(self, conn):
        conn.settimeout(10)
        try:
            while not self.stopped.is_set():
                head = self._recv_exact(conn, 2)
                if head is None:
                    return
                msg = self._recv_exact(conn, struct.unpack("!H", head)[0])
                if msg is None:
                    return
                out = self._respond(msg, "tcp")
                if self.delay > 0:
                    self.stopped.wait(self.delay)
                if out is not None:
                    conn.sendall(struct.pack("!H", len(out)) + out)
        except OSError:
            pass
        finally:
            conn.close()

    @staticmethod
    def _recv_exact(conn, n):
        data = b""
        while len(data) < n:
            chunk = conn.recv(n - len(data))
            if not chunk:
                return None
            data += chunk
        return data

    def _respond(self, msg: bytes, transport: str):
        try:
            qid, qflags, qname, qtype, question = parse_query(msg)
        except (ValueError, IndexError, struct.error):
            return None
        with self.lock:
            self.queries.append((transport, qname, qtype))
            mode, addresses = self.mode, list(self.addresses)
        if qname != self.name:
            return reply(qid, qflags, question, NXDOMAIN)
        if mode == "nxdomain":
            return reply(qid, qflags, question, NXDOMAIN)
        if mode == "servfail":
            return reply(qid, qflags, question, SERVFAIL)
        if mode == "refused":
            return reply(qid, qflags, question, REFUSED)
        if mode == "garbage-random":
            return random.Random(qid).randbytes(37)
        if mode == "garbage-short":
            return b"\x12\x34\x81\x80\x00"
        answers = [a_record(a) for a in addresses if ":" not in a] if qtype == TYPE_A else \
            [aaaa_record(a) for a in addresses if ":" in a] if qtype == TYPE_AAAA else []
        if mode == "garbage-wrong-id":
            return reply(qid ^ 0x5A5A, qflags, question, answers=answers)
        if mode == "garbage-rdlength":
            bad = struct.pack("!HHHIH", 0xC00C, TYPE_A, CLASS_IN, 5, 200) + b"\x7f\x00"
            return reply(qid, qflags, question, answers=[bad])
        if mode == "garbage-pointer-loop":
            at = 12 + len(question)  # the answer's name points at itself
            bad = struct.pack("!HHHIH", 0xC000 | at, TYPE_A, CLASS_IN, 5, 4) + socket.inet_aton("127.0.0.1")
            return reply(qid, qflags, question, answers=[bad])
        out = reply(qid, qflags, question, answers=answers)
        if transport == "udp" and (mode in ("truncated", "no-tcp") or len(out) > UDP_MAX_BYTES):
            return reply(qid, qflags, question, flags=TC)
        return out
