"""The independent clock for join latency: asks a GCS's grpc.health.v1.Health/Check about every
millisecond and writes the window in which it began to serve, then exits.

No single instant can be stamped honestly: an answer says what the GCS was at some moment between
the ask and the reply. So every look is timed on both sides (CLOCK_REALTIME, the clock the
workers' `ray` stand-in stamps with), and the file gets two instants:
  not_before  the send time of the last look that proved the GCS was not serving (its port
              refused the connect, or it answered a status other than SERVING): it began to
              serve after this. A look that timed out or broke off proves nothing, moves nothing;
  not_after   the reply time of the first look that saw SERVING: it was serving by then.
A worker that joins before not_before joined before its head could answer: the measurement, not
the worker, is wrong, and the benchmark fails the run.

Each look is one TCP connection carrying one HTTP/2 request written here by hand (the preface,
SETTINGS, HEADERS, one DATA frame), so that it costs one round trip and nothing stands between the
port opening and the first look that can see it. The gRPC library's channel cannot do that: after
a refused connect it waits out a reconnect backoff, and every call in between fails without asking
the GCS anything. With it this window was 14-43 ms wide on a busy machine; a worker once seemed to
join 400 ms before SERVING when the instant was stamped after such a call.

usage: gcs_watch.py HOST:PORT OUTFILE DEADLINE_S
OUTFILE: one line, "<not_before_ns> <not_after_ns> <looks>"."""
import errno
import socket
import struct
import sys
import time

LOOK_TIMEOUT_S = 0.05
LOOK_INTERVAL_S = 0.001
REPLY_MAX_BYTES = 16384

SERVING, NOT_PROVEN = 1, None
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, GOAWAY = 0, 1, 3, 4, 7
END_STREAM, END_HEADERS, ACK = 0x1, 0x4, 0x1


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def literal(name_index, value):
    """An HPACK header field without indexing, its name from the static table, its value plain."""
    return bytes([name_index]) + bytes([len(value)]) + value


def request(authority):
    fields = (b"\x83"  # :method POST
              + b"\x86"  # :scheme http
              + literal(4, b"/grpc.health.v1.Health/Check")  # :path
              + literal(1, authority)  # :authority
              + b"\x0f\x10" + bytes([16]) + b"application/grpc"  # content-type (static index 31)
              + b"\x00\x02te\x08trailers")  # a name not in the static table
    empty_message = b"\x00\x00\x00\x00\x00"  # gRPC frame of an empty HealthCheckRequest
    return (PREFACE + frame(SETTINGS, 0, 0) + frame(HEADERS, END_HEADERS, 1, fields)
            + frame(DATA, END_STREAM, 1, empty_message))


def health_status(message):
    """The status field (1) of a HealthCheckResponse, or 0 (UNKNOWN) when absent."""
    return message[1] if len(message) >= 2 and message[0] == 0x08 else 0


def look(host, port, ask):
    """One look: SERVING, another status (int), errno.ECONNREFUSED, or NOT_PROVEN."""
    with socket.socket() as s:
        s.settimeout(LOOK_TIMEOUT_S)
        err = s.connect_ex((host, port))
        if err:
            return err if err == errno.ECONNREFUSED else NOT_PROVEN
        try:
            s.sendall(ask)
            return read_status(s)
        except OSError:
            return NOT_PROVEN


def read_status(s):
    buf, body = b"", b""
    while len(buf) < REPLY_MAX_BYTES:
        chunk = s.recv(4096)
        if not chunk:
            return NOT_PROVEN
        buf += chunk
        while len(buf) >= 9:
            length = int.from_bytes(buf[:3], "big")
            if len(buf) < 9 + length:
                break
            kind, flags, stream = buf[3], buf[4], int.from_bytes(buf[5:9], "big") & 0x7FFFFFFF
            payload, buf = buf[9:9 + length], buf[9 + length:]
            if kind == SETTINGS and not flags & ACK:
                s.sendall(frame(SETTINGS, ACK, 0))
            elif kind in (RST_STREAM, GOAWAY):
                return NOT_PROVEN
            elif kind == DATA and stream == 1:
                body += payload
                if len(body) >= 5 and len(body) >= 5 + int.from_bytes(body[1:5], "big"):
                    return health_status(body[5:5 + int.from_bytes(body[1:5], "big")])
    return NOT_PROVEN


def main():
    address, out, deadline = sys.argv[1], sys.argv[2], time.monotonic() + float(sys.argv[3])
    host, port = address.rsplit(":", 1)
    ask = request(address.encode())
    not_before = time.time_ns()  # nothing was serving before the watch began to look
    looks = 0
    print("watching", flush=True)
    while time.monotonic() < deadline:
        sent = time.time_ns()
        looks += 1
        got = look(host, int(port), ask)
        answered = time.time_ns()
        if got == SERVING:
            with open(out, "w") as f:
                f.write(f"{not_before} {answered} {looks}\n")
            return 0
        if got is not NOT_PROVEN:
            not_before = sent
        time.sleep(LOOK_INTERVAL_S)
    return 1


if __name__ == "__main__":
    sys.exit(main())
