"""The independent clock for join latency: polls a GCS's grpc.health.v1.Health/Check every ~1 ms
and writes the CLOCK_REALTIME instant (ns) of the first SERVING reply to a file, then exits.
Started before the head, so its imports are done when the GCS comes up.

usage: gcs_watch.py HOST:PORT OUTFILE DEADLINE_S"""
import socket
import sys
import time

import grpc

SERVING = b"\x08\x01"  # HealthCheckResponse{status: SERVING}


def port_open(host, port):
    with socket.socket() as s:
        s.settimeout(0.05)
        return s.connect_ex((host, port)) == 0


def main():
    address, out, deadline = sys.argv[1], sys.argv[2], time.monotonic() + float(sys.argv[3])
    host, port = address.rsplit(":", 1)
    print("watching", flush=True)
    # A gRPC channel backs off between connection attempts (up to a second): the watcher polls
    # the port with plain connects, then asks on a fresh channel each time, which connects at once.
    while time.monotonic() < deadline:
        if not port_open(host, int(port)):
            time.sleep(0.001)
            continue
        with grpc.insecure_channel(address) as channel:
            try:
                reply = channel.unary_unary("/grpc.health.v1.Health/Check")(b"", timeout=0.1)
            except grpc.RpcError:
                reply = None
        if reply == SERVING:
            with open(out, "w") as f:
                f.write(f"{time.time_ns()}\n")
            return 0
        time.sleep(0.001)
    return 1


if __name__ == "__main__":
    sys.exit(main())
