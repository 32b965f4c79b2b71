#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (fuzz/corpus/<name>/) from the test fixtures
(tests/fixtures/pods, tests/unit/data) and from replies built here the way Ray's GCS encodes
them. Run from the repository root after a fixture changes: python3 fuzz/seeds.py"""
import os
import struct

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PODS = os.path.join(ROOT, "tests", "fixtures", "pods")
OUT = os.path.join(ROOT, "fuzz", "corpus")


def write(target, name, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def read(*parts):
    with open(os.path.join(*parts), "rb") as f:
        return f.read()


def env_of(case):
    env = {}
    for line in read(PODS, case, "env").decode().splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            env[k] = v
    return env


# ---- protobuf, as the GCS writes it -------------------------------------------------------------
def varint(v):
    out = b""
    while True:
        b = v & 0x7F
        v >>= 7
        out += bytes([b | (0x80 if v else 0)])
        if not v:
            return out


def field_varint(n, v):
    return varint(n << 3) + varint(v)


def field_bytes(n, data):
    if isinstance(data, str):
        data = data.encode()
    return varint(n << 3 | 2) + varint(len(data)) + data


def node(fill, ip, state=0, head=False, id_len=28, name=None):
    """A GcsNodeInfo; node_name (12) is the IP unless named, as Ray's default."""
    return (field_bytes(1, bytes([fill]) * id_len) + field_bytes(2, ip) + field_varint(7, state)
            + field_bytes(12, name or ip) + (field_varint(25, 1) if head else b""))


def frame(msg):
    return b"\x00" + struct.pack(">I", len(msg)) + msg


HEALTH_SERVING = field_varint(1, 1)
HEALTH_NOT_SERVING = field_varint(1, 2)
NODES = (field_bytes(1, field_varint(1, 0)) + field_bytes(2, node(0xAA, "10.0.0.1", head=True))
         + field_bytes(2, node(0xBB, "10.0.0.2")) + field_bytes(2, node(0xCC, "10.0.0.3", state=1))
         + field_bytes(2, node(0xDD, "10.0.0.4", id_len=27))
         + field_bytes(2, node(0xEE, "10.0.0.5", name="vm-head")))
DRAIN_ACCEPTED = field_varint(1, 1)
DRAIN_REJECTED = field_varint(1, 0) + field_bytes(2, "node is busy")
CLUSTER_ID = field_bytes(1, field_varint(1, 0)) + field_bytes(2, bytes(range(28)))
KV_GET = field_bytes(1, field_varint(1, 0)) + field_bytes(2, "0123456789abcdef")
KV_PUT_FAILED = field_bytes(1, field_varint(1, 14) + field_bytes(2, "unavailable")) + field_varint(2, 1)
FIXED = b"\x09" + b"\x01" * 8 + b"\x15" + b"\x02" * 4  # fixed64 field 1, fixed32 field 2


def main():
    cases = sorted(os.listdir(PODS))
    for case in cases:
        env = env_of(case)
        root = os.path.join(PODS, case, "root")
        write("env", case, read(PODS, case, "env"))
        if "RAYBOOT_PLUGIN_ARGS" in env:
            write("flags", case, env["RAYBOOT_PLUGIN_ARGS"] + "\nplan\n--format=json\n")
        host = env.get("HOSTNAME", "")
        if os.path.exists(os.path.join(root, "etc", "hosts")):
            write("hosts", case, host.encode() + b"\n" + read(root, "etc", "hosts"))
        if os.path.exists(os.path.join(root, "etc", "resolv.conf")):
            write("resolvconf", case, read(root, "etc", "resolv.conf"))
        for f in ("cpu.max", "memory.max", "memory/memory.limit_in_bytes"):
            p = os.path.join(root, "sys", "fs", "cgroup", f)
            if os.path.exists(p):
                write("cgroup", case + "-" + os.path.basename(f), read(p))
        for d in ("cpu", "cpu,cpuacct"):  # cgroup v1: the quota's line, then the period
            p = os.path.join(root, "sys", "fs", "cgroup", d)
            if os.path.exists(os.path.join(p, "cpu.cfs_quota_us")):
                write("cgroup", case + "-cfs", read(p, "cpu.cfs_quota_us") + read(p, "cpu.cfs_period_us"))
        vol = os.path.join(root, "etc", "volcano")
        if os.path.isdir(vol):
            data_dir = os.path.join(vol, read(vol, "..data").decode().strip())
            records = [name.encode() + b"\n" + read(data_dir, name) for name in sorted(os.listdir(data_dir))]
            write("volcano", case, b"\0".join(records))
        vc = [(k, v) for k, v in sorted(env.items()) if k.startswith("VC_") and not k.startswith("VC_TASK")]
        if vc:
            write("volcano", case + "-env", b"\0".join(f"{k}\n{v}".encode() for k, v in vc))
        if "RAYBOOT_HEAD_ADDRESS" in env:
            write("address", case, env["RAYBOOT_HEAD_ADDRESS"])
        env_lines = b"".join(f"{k}={v}\n".encode() for k, v in sorted(env.items()))
        if any(k.startswith("LWS_") for k in env):
            write("lws", case, host.encode() + b"\n" + env_lines)
        labels = os.path.join(root, "etc", "podinfo", "labels")
        if os.path.exists(labels):
            fqdn = [line.split()[1] for line in read(root, "etc", "hosts").decode().splitlines()
                    if line.split()[-1:] == [host] and len(line.split()) > 2]
            args_file = os.path.join(PODS, case, "args")
            args = read(args_file).decode().split() if os.path.exists(args_file) else []
            head = ([a.split("=", 1)[1] for a in args if a.startswith("--head=")] or ["head"])[0]
            write("jobset", case, f"{host}\n{fqdn[0] if fqdn else ''}\n{head}\n\n".encode() + env_lines + b"--\n"
                  + read(labels))
    # Hand-written shapes the fixtures do not have.
    write("hosts", "unit-layouts", "p-1\n  10.0.0.2   p-1.s.ns.svc.corp.   p-1 # mine\n# 10.0.0.9 p-1.x p-1\n")
    write("resolvconf", "unit-many", "search a.example\ndomain b.example\nnameserver 1.1.1.1\nnameserver 2.2.2.2\n"
          "nameserver 3.3.3.3\nnameserver 4.4.4.4\noptions timeout:1 ndots:99 attempts:2\n")
    write("resolvconf", "unit-junk", "# search x.svc.y\n; nameserver 9.9.9.9\nfoo bar\nnameserver\noptions ndots:x\n\t\n")
    for name, text in {"max": "max 100000\n", "half": "50000 100000\n", "mem-max": "max\n",
                       "mem-8g": "8589934592\n", "big": "18446744073709551615 1\n",
                       "v1-cfs-1500m": "150000\n100000\n", "v1-cfs-none": "-1\n100000\n",
                       "v1-mem-none": "9223372036854771712\n", "v1-mem-256mi": "268435456\n"}.items():
        write("cgroup", name, text)
    for i, text in enumerate(["ray-head:6379", "[fd00::1]:6379", "j-head-0.j.ns.svc.cluster.local.:6379",
                              "10.0.0.1:80", "h:x", "65535", "ray-head", "a:b:1", "[::1]6379"]):
        write("address", f"unit-{i}", text)
    write("flags", "cli-command", "--head=head\n--log-format=json\n--head\nray-head\n--\npython\ntrain.py\n")
    write("flags", "cli-submit", "\nsubmit\n--address\nhttp://head:8265\n--\npython\njob.py\n")
    write("flags", "cli-install", "--port=6380 --clientServerPort=1\ninstall\n/rayboot\n")
    worker = read(PODS, "explicit-worker", "env")
    write("env", "labels-explicit-worker", worker + b'RAYBOOT_RAY_LABELS= "zone=z1, rayboot.io/pod=mine,a..b/k=,gpu=a100"\n')
    write("env", "bad-labels", worker + b"RAYBOOT_RAY_LABELS=zone=z1,-bad=x,\n")
    write("flags", "cli-help", "\n-h\n--version\n--format=text\nplan\n")
    write("raystart", "worker-words", "\x00--num-cpus=2 --object-store-memory 100000000 --resources={\"a\":1} --port=1")
    write("raystart", "head-json", "\x03[\"--resources={\\\"TPU\\\": 4}\", \"--address=x:1\", \"--block\", \"--temp-dir=/tmp/ray\"]")
    write("raystart", "head-words", "\x1f --include-dashboard=false --dashboard-port 9000 --labels a=b")
    write("raystart", "bad", "\x00--num-cpus=2 positional")
    write("grpc", "health-ok", b"HTTP/2 200\r\ncontent-type: application/grpc\r\n\r\n" + frame(HEALTH_SERVING)
          + b"")
    write("grpc", "trailers-only", b"HTTP/2 200\r\ncontent-type: application/grpc\r\ngrpc-status: 14\r\n"
          b"grpc-message: failed to connect to all addresses\r\n\r\n")
    write("grpc", "status-ok-body", b"HTTP/2 200\r\ngrpc-status: 0\r\ngrpc-message:\r\n\r\n" + frame(NODES))
    write("grpc", "http-503", b"HTTP/2 503\r\ncontent-type: text/plain\r\n\r\nno healthy upstream")
    write("grpc", "compressed", b"HTTP/2 200\r\ngrpc-status: 0\r\n\r\n\x01\x00\x00\x00\x02\x08\x01")
    for name, msg in {"health": HEALTH_SERVING, "not-serving": HEALTH_NOT_SERVING, "nodes": NODES,
                      "check-alive": field_bytes(1, b"") + field_bytes(2, "2.60.0"),
                      "drain": DRAIN_REJECTED, "cluster-id": CLUSTER_ID, "kv-get": KV_GET,
                      "kv-put-failed": KV_PUT_FAILED, "fixed": FIXED}.items():
        write("protobuf", name, msg)
        write("gcs", name, msg)
    write("gcs", "nodes-many", b"".join(field_bytes(2, node(i, f"10.0.1.{i}", head=(i == 0))) for i in range(40)))
    # drain: a DrainNodeReply, then the script (budget, then control+time+reply bytes).
    write("drain", "accepted", DRAIN_ACCEPTED)
    write("drain", "rejected", DRAIN_REJECTED)
    write("drain", "left", b"\x04\x00" + b"\x02\x01\x04abcd" + b"\x00\x20\x00" + b"\x20\x20\x00")
    write("drain", "deadline", b"\x00\x70" + b"\x02\x01\x00" + b"\x04\x40\x0cGCS timeout." * 6)
    write("drain", "failed", b"\x03\x00" + b"\x0c\x01\x10" + b"y" * 16)
    for name in ("job-failed.json", "job-succeeded.json", "logs.json", "submit.json"):
        write("jobsapi", "unit-" + name, read(ROOT, "tests", "unit", "data", "jobsapi", name))
    for name in sorted(os.listdir(os.path.join(ROOT, "tests", "unit", "data", "pods"))):
        write("podreason", name, read(ROOT, "tests", "unit", "data", "pods", name))
    tb = ("Traceback (most recent call last):\n  File \"/home/ray/anaconda3/lib/python3.10/site-packages/ray/"
          "dashboard/modules/job/job_head.py\", line 287, in submit_job\n"
          "ValueError: runtime_env must be a dict\n\n")
    write("dashboard", "traceback", "http://ray-cluster-head-0.ray-cluster:8265/\n" + tb)
    write("dashboard", "json", "http://10.0.0.1:8265\n" + read(ROOT, "tests", "unit", "data", "jobsapi",
                                                                "job-failed.json").decode())
    write("dashboard", "bad-url", "https://head:8265/?x=1\r\n\x00\xff\n")
    for name, text in {"text-plain": "\x00waiting for ray-cluster-head-0.ray-cluster.default.svc.cluster.local:6379 "
                       "(attempt 3, 2.1 s): connection refused",
                       "json-quotes": "\x01RAYBOOT_HEAD_ADDRESS=\"h\\x\": port is not a number\n(expected host:port)",
                       "json-bytes": b"\x01reason unknown (\xc3\xa9\x7f\x1b[31m\t\r)",
                       "text-bytes": b"\x00\xff\xfe\x01\x02 evicted"}.items():
        write("log", name, text)
    for name, text in {"healthz": "probes\nGET\n/healthz", "readyz": "probes\nHEAD\n/readyz",
                       "metrics": "probes\nGET\n/metrics", "drain": "drain\nPOST\n/drain\n25",
                       "drain-get": "probes\nGET\n/drain", "drain-put": "probes\nPUT\n/drain",
                       "drain-head-refused": "drain\nHEAD\n/drain", "drain-port-healthz": "drain\nGET\n/healthz",
                       "drain-on-probes-port": "probes\nPOST\n/drain\n25",
                       "bad-deadline": "drain\nPOST\n/drain\n3601", "post-healthz": "probes\nPOST\n/healthz",
                       "unknown": "probes\nGET\n/favicon.ico"}.items():
        write("route", name, text)
    # What a worker reads from the head's rendezvous (lib/ray/rdvmsg.c), in pieces: each piece is a
    # byte saying how many bytes follow together (byte % 8 + 1), then those bytes.
    def pieces(data, size):
        out = b""
        for i in range(0, len(data), size):
            out += bytes([size - 1]) + data[i:i + size]
        return out
    message = b"RAYBOOT-RDV/1 SERVING\n"
    finished = b"RAYBOOT-RDV/1 FINISHED\n"
    for name, data in {"whole-8": pieces(message, 8), "bytewise": pieces(message, 1),
                       "both-8": pieces(message + finished, 8), "both-bytewise": pieces(message + finished, 1),
                       "finished-alone": pieces(finished, 8), "finished-twice": pieces(finished + finished, 5),
                       "finished-prefix": pieces(finished[:17], 4), "serving-then-junk": pieces(message + b"GET /", 6),
                       "prefix": pieces(message[:9], 3), "version-2": pieces(message.replace(b"/1", b"/2"), 8),
                       "trailing": pieces(message + b"X", 8), "http": pieces(b"HTTP/1.1 400 Bad Request\r\n", 8),
                       "empty": b""}.items():
        write("rendezvous", name, data)


if __name__ == "__main__":
    main()
