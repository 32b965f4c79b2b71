"""Runs in a pod on the node, next to the cluster it watches: polls the GCS's node table
(GetAllNodeInfo) every POLL_S and prints a stamped line for the first answer and for each node
that appears or changes, so the bench reads instants from a clock that can resolve them (this
pod's CLOCK_MONOTONIC and CLOCK_REALTIME are the machine's: containers have no time namespace).

Usage: gcs_poll.py HOST:PORT
Lines: `MONO_NS REAL_NS serving NOT_BEFORE_MONO_NS` (the reply's arrival, and the send of the
last look that was turned away: the GCS began to serve between the two) when a GCS first answers, then `MONO_NS REAL_NS node IP STATE ROLE NODE_ID DEATH_REASON`, then
`MONO_NS REAL_NS lost` when a GCS that answered stops answering (the next one is recorded too,
its whole node table again).
A failed look looks the name up again (getaddrinfo, the pod's resolv.conf) and dials the address
afresh on a channel of its own: gRPC's own DNS re-resolution is rate-limited (30 s by default)
and its reconnect backoff, kept in a subchannel pool shared between channels, grows to minutes;
either would make the first answer seem seconds late."""
import os
import socket
import sys
import time

import grpc
from ray.core.generated import gcs_pb2, gcs_service_pb2

POLL_S = 0.05
ADDRESS = sys.argv[1]
TOKEN = [("authorization", "Bearer " + os.environ["RAY_AUTH_TOKEN"])] if os.environ.get("RAY_AUTH_TOKEN") else None


HOST, PORT = ADDRESS.rsplit(":", 1)
OPTIONS = [("grpc.use_local_subchannel_pool", 1), ("grpc.initial_reconnect_backoff_ms", 20),
           ("grpc.min_reconnect_backoff_ms", 20), ("grpc.max_reconnect_backoff_ms", 50)]


def dial():
    """A channel to the address the name has now (a channel to nowhere while it has none), and
    whether the name had one."""
    try:
        ip, resolved = socket.getaddrinfo(HOST, int(PORT), socket.AF_INET, socket.SOCK_STREAM)[0][4][0], True
    except OSError:
        ip, resolved = "127.0.0.1", False  # nothing listens on this port in this pod: the look fails at once
    channel = grpc.insecure_channel(f"{ip}:{PORT}", options=OPTIONS)
    return channel, channel.unary_unary("/ray.rpc.NodeInfoGcsService/GetAllNodeInfo",
                                        request_serializer=gcs_service_pb2.GetAllNodeInfoRequest.SerializeToString,
                                        response_deserializer=gcs_service_pb2.GetAllNodeInfoReply.FromString), resolved


def proves_not_serving(error, resolved, sent):
    """A failed look says the GCS did not serve when it was sent only if it reached the address and
    was turned away at once (UNAVAILABLE: refused, reset). A name that did not resolve (a DNS answer
    that lags, or a negative one cached) or a call that ran out of time (this pod starved of CPU
    while five Rays start on two cores, the GCS perhaps serving) says nothing."""
    return resolved and error.code() == grpc.StatusCode.UNAVAILABLE and time.monotonic_ns() - sent < 500_000_000


def stamp():
    return f"{time.monotonic_ns()} {time.time_ns()}"


def main():
    channel, call, resolved = dial()
    seen, answering, not_before = {}, False, time.monotonic_ns()
    print(f"{stamp()} start {ADDRESS}", flush=True)
    while True:
        sent = time.monotonic_ns()
        try:
            reply = call(gcs_service_pb2.GetAllNodeInfoRequest(), timeout=1, metadata=TOKEN)
        except grpc.RpcError as e:
            if answering:
                print(f"{stamp()} lost", flush=True)
                answering = False
                seen.clear()  # the next GCS's table in full: a fault tolerant one lists the same nodes
            if proves_not_serving(e, resolved, sent):
                not_before = sent
            channel.close()
            channel, call, resolved = dial()
            time.sleep(POLL_S)
            continue
        now = stamp()  # the reply's arrival: the GCS served at or before it
        if not answering:
            print(f"{now} serving {not_before}", flush=True)
            answering = True
        for node in reply.node_info_list:
            state = gcs_pb2.GcsNodeInfo.GcsNodeState.Name(node.state)
            role = "head" if node.is_head_node else "worker"
            reasons = node.death_info.DESCRIPTOR.enum_types_by_name["Reason"].values_by_number
            reason = reasons[node.death_info.reason].name if node.HasField("death_info") else "-"
            line = f"{node.node_manager_address} {state} {role} {node.node_id.hex()} {reason}"
            if seen.get(node.node_id) != line:
                seen[node.node_id] = line
                print(f"{now} node {line}", flush=True)
        time.sleep(POLL_S)


if __name__ == "__main__":
    main()
