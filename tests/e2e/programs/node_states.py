"""Prints every node the GCS knows as `ip state death_reason` lines (run inside the head pod),
straight from GetAllNodeInfo, so tests can tell a drained node from one that died."""
import grpc
from ray.core.generated import gcs_pb2, gcs_service_pb2

channel = grpc.insecure_channel("127.0.0.1:6379")
call = channel.unary_unary("/ray.rpc.NodeInfoGcsService/GetAllNodeInfo",
                           request_serializer=gcs_service_pb2.GetAllNodeInfoRequest.SerializeToString,
                           response_deserializer=gcs_service_pb2.GetAllNodeInfoReply.FromString)
reply = call(gcs_service_pb2.GetAllNodeInfoRequest(), timeout=10)
for node in reply.node_info_list:
    state = gcs_pb2.GcsNodeInfo.GcsNodeState.Name(node.state)
    reasons = node.death_info.DESCRIPTOR.enum_types_by_name["Reason"].values_by_number
    reason = reasons[node.death_info.reason].name if node.HasField("death_info") else "-"
    print(node.node_manager_address, state, reason, "head" if node.is_head_node else "worker")
