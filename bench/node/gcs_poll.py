"""Runs in a pod on the node, next to the cluster it watches: polls the GCS's node table
(GetAllNodeInfo) every POLL_S and prints a stamped line for the first answer and for each node
that appears or changes, so the bench reads instants from a clock that can resolve them (this
pod's CLOCK_MONOTONIC and CLOCK_REALTIME are the machine's: containers have no time namespace).

Usage: gcs_poll.py HOST:PORT
Lines: `MONO_NS REAL_NS serving` once, then `MONO_NS REAL_NS node IP STATE ROLE NODE_ID DEATH_REASON`, then
`MONO_NS REAL_NS lost` when a GCS that answered stops answering (the next one is recorded too).
A failed look dials afresh: gRPC's own reconnect backoff grows to minutes."""
import os
import sys
import time

import grpc
from ray.core.generated import gcs_pb2, gcs_service_pb2

POLL_S = 0.05
ADDRESS = sys.argv[1]
TOKEN = [("authorization", "Bearer " + os.environ["RAY_AUTH_TOKEN"])] if os.environ.get("RAY_AUTH_TOKEN") else None


def dial():
    channel = grpc.insecure_channel(ADDRESS)
    return channel, channel.unary_unary("/ray.rpc.NodeInfoGcsService/GetAllNodeInfo",
                                        request_serializer=gcs_service_pb2.GetAllNodeInfoRequest.SerializeToString,
                                        response_deserializer=gcs_service_pb2.GetAllNodeInfoReply.FromString)


def stamp():
    return f"{time.monotonic_ns()} {time.time_ns()}"


def main():
    channel, call = dial()
    seen, answering = {}, False
    print(f"{stamp()} start {ADDRESS}", flush=True)
    while True:
        try:
            reply = call(gcs_service_pb2.GetAllNodeInfoRequest(), timeout=2, metadata=TOKEN)
        except grpc.RpcError:
            if answering:
                print(f"{stamp()} lost", flush=True)
                answering = False
            channel.close()
            channel, call = dial()
            time.sleep(POLL_S)
            continue
        now = stamp()  # the reply's arrival: the GCS served at or before it
        if not answering:
            print(f"{now} serving", flush=True)
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
