"""Prints every node the GCS knows as `ip state death_reason role node_id node_name` lines, straight from
GetAllNodeInfo, so tests can tell a drained node from one that died.

Usage: node_states.py [GCS_ADDRESS [--watch | --follow]]   (default 127.0.0.1:6379, run inside
the head pod)
With --watch it polls every 50 ms and prints each node's line when it first appears or changes,
until the GCS stops answering: a record of the node table that outlives the head. --follow goes
on across heads: when the GCS stops answering it dials the address again (a new connection, so
the name is looked up again) until the next head's GCS answers, and records that one too; it
ends only when killed. A node id is new with each node, so the lines of each cluster tell apart."""
import os
import sys
import time

import grpc
from ray.core.generated import gcs_pb2, gcs_service_pb2

address = sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:6379"
follow = "--follow" in sys.argv[2:]
watch = follow or "--watch" in sys.argv[2:]
# A call to a head whose pod is gone is never answered (its address answers nothing, not even a
# reset) and lasts its whole deadline: following, a short one lets the next head be found at once.
CALL_TIMEOUT_S = 2 if follow else 10
# A whole cluster deleted at once drains and ends within a few hundred milliseconds, its head's GCS
# up only a quarter of a second after the last drain: the record must look more often than that.
POLL_S = 0.05


def dial():
    channel = grpc.insecure_channel(address)
    return channel, channel.unary_unary("/ray.rpc.NodeInfoGcsService/GetAllNodeInfo",
                                        request_serializer=gcs_service_pb2.GetAllNodeInfoRequest.SerializeToString,
                                        response_deserializer=gcs_service_pb2.GetAllNodeInfoReply.FromString)


channel, call = dial()


# A head in Ray's token mode answers only calls that carry its token (tests/e2e/test_token_cluster.py).
TOKEN = [("authorization", "Bearer " + os.environ["RAY_AUTH_TOKEN"])] if os.environ.get("RAY_AUTH_TOKEN") else None


def lines():
    reply = call(gcs_service_pb2.GetAllNodeInfoRequest(), timeout=CALL_TIMEOUT_S, metadata=TOKEN)
    for node in reply.node_info_list:
        state = gcs_pb2.GcsNodeInfo.GcsNodeState.Name(node.state)
        reasons = node.death_info.DESCRIPTOR.enum_types_by_name["Reason"].values_by_number
        reason = reasons[node.death_info.reason].name if node.HasField("death_info") else "-"
        role = "head" if node.is_head_node else "worker"
        yield node.node_id.hex(), (f"{node.node_manager_address} {state} {reason} {role} {node.node_id.hex()} "
                                   f"{node.node_name or '-'}")


if not watch:
    for _, line in lines():
        print(line)
    sys.exit(0)
seen = {}
while True:
    try:
        for node_id, line in lines():
            if seen.get(node_id) != line:
                seen[node_id] = line
                print(line, flush=True)
    except grpc.RpcError:
        if seen and not follow:
            break  # the GCS is gone (its head ended): the record is complete
        if follow:  # gRPC's own reconnection backs off for up to 2 minutes: dial afresh
            channel.close()
            channel, call = dial()
    time.sleep(POLL_S)
