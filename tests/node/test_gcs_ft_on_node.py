"""GCS fault tolerance on the real node (issue 29 item 5), with what we ship: k8s/redis/redis.yaml
(Debian's redis-server from images/redis/) and k8s/volcano/ray-cluster-gcs-ft.yaml, changed only as
tests/node/test_shipped_manifests.py changes every manifest (the user's job, CPU requests).

A detached actor is placed on a worker and the head's job runs tasks; the head pod is deleted
while it runs. Volcano's RestartTask re-creates it with a new IP; its GCS reads the cluster back
from Redis: the same cluster id, and the workers' raylets never restart (same PIDs, no
"joining the head again"), their node ids ALIVE in the new GCS, the detached actor answers with
its count, and the job runs again to its result. When the job is done the head deletes its
namespace from Redis. The figures are printed next to the no-FT rejoin of
test_volcano_head_deleted_is_recreated_alone_and_the_workers_rejoin (16.5 and 19.0 s)."""
import base64
import pathlib
import re
import secrets
import subprocess
import time

import cluster
import test_shipped_manifests as shipped
from test_shipped_manifests import (
    PodEnd,
    apply,
    apply_rbac_if_used,
    assert_left_when_done,
    assert_seed_job_ran,
    container_processes,
    ended,
    first_cluster_up,
    for_this_node,
    load,
    pod_logs,
    run_vcjob_to_end,
    start_busy_then_seed_job,
    wait_all_ready,
)

KEEPER = (shipped.PROGRAMS / "keeper.py").read_text()
NODE_STATES = (shipped.PROGRAMS / "node_states.py").read_text()
REDIS_SECRET = "ray-redis"
SEED_DELAY_S = 150   # the re-created head's job waits this long before its squares


def create_redis(node, namespace):
    """What docs/gcs-ft.md tells a user: the Secret with a random hex password, then redis.yaml.
    Returns the password."""
    password = secrets.token_hex(32)
    node.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": REDIS_SECRET, "namespace": namespace},
                 "type": "Opaque", "stringData": {"password": password}})
    for d in load("redis/redis.yaml"):
        d = for_this_node(d, namespace)
        node.create(d)
    node.wait("Redis Ready", lambda: [p for p in node.pods(namespace, "app.kubernetes.io/name=ray-redis")
                                      if any(c["type"] == "Ready" and c["status"] == "True"
                                             for c in p["status"].get("conditions", []))], 180, interval=1)
    return password


def container_pids(namespace, pod, argv0_suffix, ip=None):
    """Host PIDs of POD's processes (outside its sidecar) whose argv[0] ends with ARGV0_SUFFIX; IP:
    the pod's, for one without a sidecar (the head)."""
    by_mnt, sidecar_mnt = container_processes(namespace, pod, ip)
    found = []
    for mnt, pids in by_mnt.items():
        if mnt == sidecar_mnt:
            continue
        for pid in pids:
            try:
                argv0 = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
            except OSError:
                continue
            if argv0.endswith(argv0_suffix):
                found.append(pid)
    return sorted(found)


def parent(pid):
    return int(pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def in_container(namespace, pod, argv, extra_env=None, timeout=150, ip=None):
    """ARGV in POD's Ray container (its namespaces, UID 1000, its environment), as `kubectl exec`;
    IP as for container_pids."""
    # rayboot's own children (its prober, rendezvous, watch) are forks with its argv: the one
    # whose parent is none of them is the container's PID 1.
    found = container_pids(namespace, pod, b"rayboot", ip)
    (rayboot,) = [p for p in found if parent(p) not in found]
    env = dict(e.split("=", 1) for e in pathlib.Path(f"/proc/{rayboot}/environ").read_text().split("\0") if "=" in e)
    env.update(extra_env or {})
    return subprocess.run(["nsenter", f"--target={rayboot}", "--net", "--pid", "--mount", "--uts",
                           "--setuid=1000", "--setgid=100", "--", *argv], env=env, capture_output=True, text=True,
                          timeout=timeout)


def token(node, namespace):
    s = node.get(f"/api/v1/namespaces/{namespace}/secrets/{shipped.AUTH_SECRET}")
    return base64.b64decode(s["data"]["token"]).decode()


def node_table(node, namespace, head, tok):
    """The GCS's node table, read in the head's container (it has no sidecar: found by its IP)."""
    ip = node.pod(namespace, head)["status"]["podIP"]
    out = in_container(namespace, head, ["python", "-c", NODE_STATES, "127.0.0.1:6379"], {"RAY_AUTH_TOKEN": tok},
                       ip=ip)
    assert out.returncode == 0, out.stderr
    return [line.split() for line in out.stdout.splitlines()]


def serving_at(node, namespace, pod):
    """When POD's rayboot logged its GCS SERVING (the container log's timestamp, epoch seconds)."""
    for line in node.log(namespace, pod, "ray", timestamps=True).splitlines():
        if "is SERVING" in line:
            return shipped._rfc3339(line.split(" ", 1)[0])
    return None


def redis_keys(node, namespace, pod, password, pattern):
    """The keys matching PATTERN, from redis-cli in POD's container (it has no sidecar to find it by:
    its redis-server is found in the pod's network namespace)."""
    procs = cluster.processes_in_netns(cluster.pod_sandboxes()[node.pod(namespace, pod)["status"]["podIP"]])
    # Redis retitles itself ("redis-server *:6379"): its argv[0] only starts with its name.
    (server,) = [pid for pid, argv in procs.items() if argv[0].split(b" ")[0].endswith(b"redis-server")]
    out = subprocess.run(["nsenter", f"--target={server}", "--net", "--pid", "--mount", "--setuid=1000",
                          "--setgid=100", "--", "redis-cli", "--no-auth-warning", "--scan", "--pattern", pattern],
                         env={"REDISCLI_AUTH": password, "PATH": "/usr/bin:/bin"}, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_volcano_gcs_ft_head_deleted_keeps_the_workers_ray(node, restricted_namespace, volcano):
    namespace = restricted_namespace
    password = create_redis(node, namespace)
    (redis_pod,) = [p["metadata"]["name"] for p in node.pods(namespace, "app.kubernetes.io/name=ray-redis")]
    docs = [for_this_node(d, namespace) for d in load("volcano/ray-cluster-gcs-ft.yaml")]
    apply_rbac_if_used(node, namespace, docs)
    apply(node, namespace, start_busy_then_seed_job(docs))
    name = "ray-cluster-gcs-ft"
    head, workers = f"{name}-head-0", [f"{name}-worker-0", f"{name}-worker-1"]
    gcs = f"{head}.{name}:6379"
    ready = wait_all_ready(node, namespace, volcano, name, [head] + workers)
    _, head_ip, worker_ips = first_cluster_up(node, namespace, gcs, ready[head], [ready[w] for w in workers])
    tok = token(node, namespace)
    made = in_container(namespace, head, ["python", "-c", KEEPER, gcs, "create", worker_ips[0]], ip=head_ip)
    assert made.returncode == 0 and made.stdout.startswith("count 3 "), made.stdout + made.stderr
    actor_node = made.stdout.split()[2]
    worker_ids = {n[0]: n[4] for n in node_table(node, namespace, head, tok) if n[3] == "worker" and n[1] == "ALIVE"}
    assert set(worker_ids) == set(worker_ips), worker_ids
    raylets = {w: container_pids(namespace, w, b"/raylet") for w in workers}
    assert all(len(p) == 1 for p in raylets.values()), raylets
    ns_value = f"{ready[head]['metadata']['annotations']['scheduling.k8s.io/group-name']}-v0"
    assert redis_keys(node, namespace, redis_pod, password, f"RAY{ns_value}@*"), "the GCS wrote nothing to Redis"
    # The next head's job: the seed program, after long enough for the checks below (a quick one
    # would end the cluster, and with it the workers' Ray, before the worker's raylet has its new
    # GCS back).
    node.patch(f"/api/v1/namespaces/{namespace}/configmaps/{shipped.EXAMPLE_CONFIGMAP}",
               {"data": {"job.py": f"import time\ntime.sleep({SEED_DELAY_S})\n" + shipped.example_program()}})

    t0 = time.time()
    node.delete(f"/api/v1/namespaces/{namespace}/pods/{head}")
    last = node.follow_pod_until_gone(namespace, head, 120)
    # The old head's Ray: its raylet, drained and idle, left at once; its command ended on SIGTERM.
    # Its GCS's own stop (a flush to the dashboard agent gone with the raylet) used up ray start's
    # 1 s when rayboot waited for it; its controller makes the next head only once this one ends.
    stopped = re.search(r"Ray stopped in ([0-9.]+) s", (ended(last, "ray") or {}).get("message", ""))
    assert stopped, last["status"]
    print(f"GCS FT: the old head's Ray stopped in {stopped.group(1)} s")
    assert float(stopped.group(1)) < 0.5, f"the old head waited for its Ray: {stopped.group(0)}"

    def recreated():
        p = node.pod(namespace, head)
        return p if p["metadata"]["uid"] != ready[head]["metadata"]["uid"] and p["status"].get("podIP") else None
    node.wait("the head re-created", recreated, 120, interval=0.5)
    t_new = time.time()
    serving = node.wait("the new head's GCS serving", lambda: serving_at(node, namespace, head), 180, interval=0.5)
    # The head has no sidecar, so that the kubelet starts its Ray container at once instead of at its
    # next look after the sidecar's start (docs/gcs-ft.md#a-head-without-a-sidecar).
    in_new_head = cluster.processes_in_netns(cluster.pod_sandboxes()[node.pod(namespace, head)["status"]["podIP"]])
    assert [argv for argv in in_new_head.values() if argv[0].endswith(b"rayboot-sidecar")] == [], in_new_head
    # A driver on the worker works once that worker's raylet has its new GCS back (Ray takes its
    # time, ~20 s in the pod simulator); until then it fails to start: asked again until then.
    failures = []

    def ask():
        try:
            out = in_container(namespace, workers[0], ["python", "-c", KEEPER, gcs, "ask"])
        except ValueError as e:   # its rayboot not found in /proc at that moment
            failures.append(f"{e}; {workers[0]}'s log:\n{node.log(namespace, workers[0], 'ray')[-3000:]}")
            return None
        if out.returncode != 0:
            failures.append(out.stdout + out.stderr)
        return out if out.returncode == 0 else None
    try:
        answer = node.wait("the detached actor's answer", ask, 240, interval=2)
    except TimeoutError as e:
        raise AssertionError(f"{e}; the last failure:\n{failures[-1] if failures else ''}") from None
    count, where, answered = answer.stdout.split()[1], answer.stdout.split()[2], float(answer.stdout.split()[3])
    table = node.wait("the workers' node ids ALIVE in the new GCS", lambda: (lambda t: t if all(
        any(n[4] == i and n[1] == "ALIVE" for n in t) for i in worker_ids.values()) else None)(
        node_table(node, namespace, head, tok)), 120, interval=1)
    print(f"GCS FT: head deleted; re-created after {t_new - t0:.1f} s, its GCS serving after {serving - t0:.1f} s, "
          f"the detached actor answered {answered - serving:.1f} s later ({answered - t0:.1f} s after the "
          f"deletion); no-FT rejoin for comparison: 16.5 and 19.0 s")
    assert count == "4" and where == actor_node, answer.stdout
    assert {n[0] for n in table if n[3] == "head" and n[1] == "ALIVE"} != {head_ip}
    for w in workers:
        assert container_pids(namespace, w, b"/raylet") == raylets[w], f"{w}'s raylet was restarted"
        log = node.log(namespace, w, "ray")
        assert "joining the head again" not in log and "as the same cluster: Ray keeps running" in log, log

    ends = {w: PodEnd(node, namespace, w, "ray") for w in workers}
    _, final = run_vcjob_to_end(node, namespace, volcano, name)
    assert_seed_job_ran(node, namespace, final[head], "ray")
    for w in workers:
        end = ends[w].pod()
        assert end["metadata"]["uid"] == ready[w]["metadata"]["uid"], w
        assert_left_when_done(end)
    assert "the GCS's storage namespace is deleted from Redis" in node.log(namespace, head, "ray"), \
        pod_logs(node, namespace)
    assert redis_keys(node, namespace, redis_pod, password, f"RAY{ns_value}@*") == []
    assert ended(final[head], "ray")["exitCode"] == 0
