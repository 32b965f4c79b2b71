"""A stand-in for Ray's GCS: the handful of gRPC methods rayboot calls, answered with hand-built
protobuf bytes (the same field numbers lib/ray/gcs.c documents), over real HTTP/2 from grpcio.
Tests flip its state (serving, nodes, KV) and read back the calls it received."""
import threading
from concurrent import futures

import grpc

HEALTH = "/grpc.health.v1.Health/Check"
CLUSTER_ID = "/ray.rpc.NodeInfoGcsService/GetClusterId"
CHECK_ALIVE = "/ray.rpc.NodeInfoGcsService/CheckAlive"
ALL_NODES = "/ray.rpc.NodeInfoGcsService/GetAllNodeInfo"
DRAIN = "/ray.rpc.autoscaler.AutoscalerStateService/DrainNode"
KV_GET = "/ray.rpc.InternalKVGcsService/InternalKVGet"
KV_PUT = "/ray.rpc.InternalKVGcsService/InternalKVPut"


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def field_bytes(number: int, data: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(data)) + data


def field_varint(number: int, value: int) -> bytes:
    return varint(number << 3) + varint(value)


def read_varint(data: bytes, i: int) -> tuple[int, int]:
    """The varint at data[i:] and the index after it."""
    value, shift = 0, 0
    while True:
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, i


def parse(data: bytes) -> dict:
    """Top-level fields of a protobuf message: number -> list of int or bytes."""
    fields, i = {}, 0
    while i < len(data):
        tag, i = read_varint(data, i)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            value, i = read_varint(data, i)
        elif wire == 2:
            length, i = read_varint(data, i)
            value = data[i:i + length]
            i += length
        else:
            raise ValueError(f"wire type {wire}")
        fields.setdefault(number, []).append(value)
    return fields


class Node:
    """name: GcsNodeInfo.node_name, `ray start --node-name` (Ray's default: the node's IP)."""

    def __init__(self, ip: str, head: bool = False, node_id: bytes = None, name: str = None):
        self.ip, self.head, self.alive = ip, head, True
        # A DEAD node's NodeDeathInfo.reason (3: AUTOSCALER_DRAIN_PREEMPTED, 2: UNEXPECTED_TERMINATION)
        # and end_time_ms; None: a node that is only not ALIVE (listed nowhere).
        self.death, self.end_ms = None, 0
        # Its raylet reports DRAINING (GcsNodeInfo.state_snapshot.state = 3): a drain accepted, the
        # node not gone yet.
        self.draining = False
        self._name = name
        self.node_id = node_id or bytes(range(28))

    @property
    def name(self) -> str:
        """Follows ip (a test that moves a node moves its default name) unless given."""
        return self._name if self._name is not None else self.ip

    @name.setter
    def name(self, value: str):
        self._name = value

    def encode(self) -> bytes:
        out = field_bytes(1, self.node_id) + field_bytes(2, self.ip.encode()) + field_bytes(12, self.name.encode())
        if not self.alive:
            out += field_varint(7, 1)
        if self.death is not None:
            out += field_varint(24, self.end_ms) + field_bytes(29, field_varint(1, self.death))
        if self.head:
            out += field_varint(25, 1)
        if self.draining:
            out += field_bytes(28, field_varint(1, 3))
        return out


class FakeGcs:
    def __init__(self, host: str = "127.0.0.1", port: int = 0, tls: tuple = None):
        """host: the loopback address to listen on ("::1" for IPv6); port: 0 for any free one (a
        GCS restarted in place takes its old one); tls: (certificate, key, client CA or None), PEM
        bytes, for Ray's TLS (with a client CA, as Ray's GCS: a client without a certificate of
        that CA is refused in the handshake)."""
        self.serving = True
        self.cluster_id = b"\x01" * 28
        self.ray_version = "2.60.0"  # CheckAliveReply.ray_version; None: the method is unknown
        # The head as rayboot names it in the contract pod (HOSTNAME pod-0; its /etc/hosts line is
        # loopback, so no pod IP): a worker told RAYBOOT_POD_IP=127.0.0.1 is another node.
        self.nodes = [Node("127.0.0.1", head=True, node_id=b"\xaa" * 28, name="pod-0")]
        self.kv = {}
        self.calls = []
        self.metadata = []  # each call's metadata (its authorization among them)
        self.drain_removes_node = True
        # False: answer GetAllNodeInfo with every node whatever the request selects, as a GCS that
        # does not know node_selectors would (rayboot must still check each node's name).
        self.honour_selector = True
        # Ray's token mode: every call but Health/Check without "authorization: Bearer <token>"
        # is refused UNAUTHENTICATED. None: no token asked.
        self.token = None
        self.lock = threading.Lock()
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        self.server.add_generic_rpc_handlers([_Handler(self)])
        address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        if tls:
            cert, key, client_ca = tls
            creds = grpc.ssl_server_credentials([(key, cert)], root_certificates=client_ca,
                                                require_client_auth=client_ca is not None)
            self.port = self.server.add_secure_port(address, creds)
        else:
            self.port = self.server.add_insecure_port(address)
        # With TLS: the certificate each call's client showed (PEM bytes, or None).
        self.client_certs = []
        self.server.start()

    def stop(self):
        self.server.stop(grace=None)

    def methods(self):
        with self.lock:
            return [m for m, _ in self.calls]

    def old_ray(self) -> tuple:
        major, minor = (int(x) for x in (self.ray_version or "2.60").split(".")[:2])
        return (major, minor) < (2, 49), (major, minor) < (2, 36)

    def nodes_answered(self, request: bytes) -> list:
        """GetAllNodeInfo as the GCS of self.ray_version reads the request: 2.49+ node_selectors
        (2) {node_name (2), node_ip_address (3)} and state_filter (3); 2.36-2.48 limit (3) and
        filters (4) {state (2), node_name (3)}; older: nothing (every node, whatever was sent).
        ALIVE nodes, and for 2.49's DEAD filter the DEAD nodes given a death (by name)."""
        req = parse(request)
        if req.get(3, [0])[0] != 0 and not self.old_ray()[0]:  # state_filter: DEAD (2.49 and later)
            return [n for n in self.nodes if not n.alive and n.death is not None and any(
                parse(s).get(2, [n.name.encode()])[0] == n.name.encode() for s in req.get(2, [b""]))]
        nodes = [n for n in self.nodes if n.alive]
        before_249, before_236 = self.old_ray()
        if not self.honour_selector or before_236:
            return nodes
        if before_249:
            for f in [parse(b) for b in req.get(4, [])]:
                nodes = [n for n in nodes if f.get(2, [0])[0] == 0 and f.get(3, [n.name.encode()])[0] == n.name.encode()]
            return nodes[:req[3][0]] if 3 in req else nodes
        if req.get(3, [0])[0] != 0:
            return []
        selectors = [parse(b) for b in req.get(2, [])]
        return [n for n in nodes if not selectors or any(
            s.get(2, [n.name.encode()])[0] == n.name.encode() and s.get(3, [n.ip.encode()])[0] == n.ip.encode()
            for s in selectors)]

    def answer(self, method: str, request: bytes, context):
        with self.lock:
            self.calls.append((method, request))
            self.client_certs.append((context.auth_context().get("x509_pem_cert") or [None])[0])
            self.metadata.append(dict(context.invocation_metadata()))
            if self.token is not None and method != HEALTH and \
                    dict(context.invocation_metadata()).get("authorization") != f"Bearer {self.token}":
                context.abort(grpc.StatusCode.UNAUTHENTICATED, "token")
            if method == HEALTH:
                return field_varint(1, 1 if self.serving else 2)
            if method == CHECK_ALIVE and self.ray_version is not None:
                return field_bytes(2, self.ray_version.encode())
            if method == CLUSTER_ID:
                return field_bytes(2, self.cluster_id)
            if method == ALL_NODES:
                return b"".join(field_bytes(2, n.encode()) for n in self.nodes_answered(request))
            if method == DRAIN:
                req = parse(request)
                if self.drain_removes_node:
                    for n in self.nodes:
                        if n.node_id == req[1][0]:
                            n.alive = False
                return field_varint(1, 1)
            if method == KV_GET:
                req = parse(request)
                key = (req[2][0], req[1][0])
                return field_bytes(2, self.kv[key]) if key in self.kv else b""
            if method == KV_PUT:
                req = parse(request)
                self.kv[(req[4][0], req[1][0])] = req[2][0]
                return b""
        context.abort(grpc.StatusCode.UNIMPLEMENTED, method)


class _Handler(grpc.GenericRpcHandler):
    def __init__(self, gcs: FakeGcs):
        self.gcs = gcs

    def service(self, details):
        method = details.method
        return grpc.unary_unary_rpc_method_handler(lambda req, ctx: self.gcs.answer(method, req, ctx))
