"""A stand-in head GCS for the scale benchmark: a grpcio server that answers Health/Check SERVING.
It binds only after DELAY_S seconds (until then the port is closed, as a head's is while Ray
starts), then writes the CLOCK_REALTIME instant (ns) it began serving to a file.

usage: standin_gcs.py PORT DELAY_S OUTFILE"""
import signal
import sys
import time
from concurrent import futures

import grpc

SERVING = b"\x08\x01"


def check(request, context):
    return SERVING


def main():
    port, delay, out = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
    handler = grpc.method_handlers_generic_handler(
        "grpc.health.v1.Health", {"Check": grpc.unary_unary_rpc_method_handler(check)})
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8), handlers=[handler],
                         options=[("grpc.so_reuseport", 0)], maximum_concurrent_rpcs=None)
    time.sleep(delay)
    server.add_insecure_port(f"0.0.0.0:{port}")
    server.start()
    with open(out, "w") as f:
        f.write(f"{time.time_ns()}\n")
    signal.sigwait({signal.SIGTERM, signal.SIGINT})
    server.stop(0)


if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
    main()
