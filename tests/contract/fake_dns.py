"""A tiny authoritative nameserver for tests: A and AAAA answers from a dict, over UDP and TCP.
With truncate=True every UDP answer is empty with the TC bit set, so resolvers must retry over
TCP (RFC 1035 4.2.2 framing: a two-byte length, then the message). Unknown names are NXDOMAIN."""
import socket
import struct
import threading

A, AAAA = 1, 28
FLAG_QR_AA_RD_RA = 0x8580
FLAG_TC = 0x0200
RCODE_NXDOMAIN = 3


def _question(msg: bytes):
    """(name, qtype, end of the question) of a query."""
    labels, i = [], 12
    while msg[i]:
        labels.append(msg[i + 1:i + 1 + msg[i]].decode("ascii", "replace").lower())
        i += 1 + msg[i]
    qtype = struct.unpack(">H", msg[i + 1:i + 3])[0]
    return ".".join(labels), qtype, i + 5


class FakeDns:
    def __init__(self, records: dict, host: str = "127.0.0.1", port: int = 53, truncate: bool = False):
        """records: name (no trailing dot) -> list of addresses; the family picks A or AAAA."""
        self.records = {k.rstrip(".").lower(): v for k, v in records.items()}
        self.truncate = truncate
        self.queries = []  # (transport, name, qtype)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.udp = socket.socket(family, socket.SOCK_DGRAM)
        self.udp.bind((host, port))
        self.tcp = socket.socket(family, socket.SOCK_STREAM)
        self.tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.tcp.bind((host, port))
        self.tcp.listen(16)
        self.port = self.udp.getsockname()[1]
        self._stop = False
        self._threads = [threading.Thread(target=self._serve_udp, daemon=True),
                         threading.Thread(target=self._serve_tcp, daemon=True)]
        for t in self._threads:
            t.start()

    def answer(self, query: bytes, transport: str) -> bytes:
        name, qtype, end = _question(query)
        self.queries.append((transport, name, qtype))
        (qid,) = struct.unpack(">H", query[:2])
        if transport == "udp" and self.truncate:
            return struct.pack(">HHHHHH", qid, FLAG_QR_AA_RD_RA | FLAG_TC, 1, 0, 0, 0) + query[12:end]
        if name not in self.records:
            return struct.pack(">HHHHHH", qid, FLAG_QR_AA_RD_RA | RCODE_NXDOMAIN, 1, 0, 0, 0) + query[12:end]
        rdatas = []
        for addr in self.records[name]:
            family = socket.AF_INET6 if ":" in addr else socket.AF_INET
            if (family == socket.AF_INET6) == (qtype == AAAA) and qtype in (A, AAAA):
                rdatas.append(socket.inet_pton(family, addr))
        out = struct.pack(">HHHHHH", qid, FLAG_QR_AA_RD_RA, 1, len(rdatas), 0, 0) + query[12:end]
        for rdata in rdatas:
            out += struct.pack(">HHHIH", 0xC00C, qtype, 1, 5, len(rdata)) + rdata
        return out

    def _serve_udp(self):
        while not self._stop:
            try:
                query, peer = self.udp.recvfrom(4096)
                self.udp.sendto(self.answer(query, "udp"), peer)
            except OSError:
                return
            except (IndexError, struct.error):
                continue

    def _serve_tcp(self):
        while not self._stop:
            try:
                conn, _ = self.tcp.accept()
            except OSError:
                return
            threading.Thread(target=self._serve_tcp_conn, args=(conn,), daemon=True).start()

    def _serve_tcp_conn(self, conn):
        with conn:
            buf = b""
            while True:
                try:
                    data = conn.recv(4096)
                except OSError:
                    return
                if not data:
                    return
                buf += data
                while len(buf) >= 2 and len(buf) >= 2 + struct.unpack(">H", buf[:2])[0]:
                    n = struct.unpack(">H", buf[:2])[0]
                    query, buf = buf[2:2 + n], buf[2 + n:]
                    try:
                        reply = self.answer(query, "tcp")
                    except (IndexError, struct.error):
                        return
                    conn.sendall(struct.pack(">H", len(reply)) + reply)

    def stop(self):
        self._stop = True
        for s in (self.udp, self.tcp):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()
