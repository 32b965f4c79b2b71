"""A stand-in head GCS for the scale benchmark: a grpcio server that answers Health/Check SERVING.
It binds only after DELAY_S seconds (until then the port is closed, as a head's is while Ray
starts), then writes the window in which it began to serve (CLOCK_REALTIME ns, as
tools/gcs_watch.py writes it): not_before is stamped before the port is bound, not_after once the
server has started.

usage: standin_gcs.py PORT DELAY_S OUTFILE
OUTFILE: one line, "<not_before_ns> <not_after_ns>"."""
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
    not_before = time.time_ns()
    server.add_insecure_port(f"0.0.0.0:{port}")
    server.start()
    not_after = time.time_ns()
    with open(out, "w") as f:
        f.write(f"{not_before} {not_after}\n")
    signal.sigwait({signal.SIGTERM, signal.SIGINT})
    server.stop(0)


if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
    main()
