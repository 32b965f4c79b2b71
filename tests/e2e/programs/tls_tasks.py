"""The Ray TLS job (tests/e2e/test_tls_cluster.py), run as the head's command under rayboot: one
task pinned to each ALIVE node (so a task crosses to every worker over Ray's TLS), then a look at
the GCS port itself: a cleartext gRPC call must fail (the port speaks only TLS), a TLS one with the
pod's own certificate (RAY_TLS_SERVER_CERT, which rayboot made) must answer."""
import os

import grpc
import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

ray.init()


@ray.remote(num_cpus=0)
def where():
    return ray.util.get_node_ip_address()


nodes = [n for n in ray.nodes() if n["Alive"]]
ips = ray.get([where.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)).remote()
               for n in nodes])
print("tasks ran on:", " ".join(sorted(ips)), flush=True)

gcs = ray.get_runtime_context().gcs_address
health = "/grpc.health.v1.Health/Check"
try:
    grpc.insecure_channel(gcs).unary_unary(health)(b"", timeout=5)
    print("cleartext GCS call: answered", flush=True)
except grpc.RpcError as e:
    print("cleartext GCS call: refused", e.code().name, flush=True)


def read(var):
    with open(os.environ[var], "rb") as f:
        return f.read()


creds = grpc.ssl_channel_credentials(read("RAY_TLS_CA_CERT"), read("RAY_TLS_SERVER_KEY"), read("RAY_TLS_SERVER_CERT"))
reply = grpc.secure_channel(gcs, creds).unary_unary(health)(b"", timeout=10)
print("TLS GCS call: answered", reply.hex(), flush=True)
