"""A detached actor that counts, for the GCS fault tolerance tests.

Usage: keeper.py GCS create NODE_IP  (run in the head pod) places the actor `keeper` (namespace
                                  `gcsft`) on the node at NODE_IP, counts to 3, prints `count 3`
       keeper.py GCS ask              waits (60 s at most) until the actor answers, counts once more
                                  and prints `count N NODE_ID T`: N is 4 when its state survived
                                  a head restart, T the wall-clock time it first answered."""
import sys
import time

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

# The GCS's address, never "auto": a driver that finds no cluster in the pod's files (a new head's
# `ray start` has not written them yet) would start a local one of its own.
gcs, mode = sys.argv[1], sys.argv[2]
deadline = time.monotonic() + 60
while True:
    try:  # a new head's raylet may not be up yet
        ray.init(address=gcs, namespace="gcsft")
        break
    except Exception:
        ray.shutdown()
        if time.monotonic() > deadline:
            raise
        time.sleep(0.1)


@ray.remote(num_cpus=0)
class Keeper:
    def __init__(self):
        self.count = 0

    def peek(self):
        return self.count

    def incr(self):
        self.count += 1
        return self.count, ray.get_runtime_context().get_node_id()


if mode == "create":
    node = [n["NodeID"] for n in ray.nodes() if n["Alive"] and n["NodeManagerAddress"] == sys.argv[3]][0]
    keeper = Keeper.options(name="keeper", lifetime="detached",
                            scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False)).remote()
    for _ in range(3):
        count, where = ray.get(keeper.incr.remote(), timeout=60)
    answered = time.time()
else:
    while True:
        try:  # a read first: a call that timed out may still run, and must not count twice
            ray.get(ray.get_actor("keeper").peek.remote(), timeout=2)
            break
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    answered = time.time()
    count, where = ray.get(ray.get_actor("keeper").incr.remote(), timeout=20)
print("count", count, where, answered, flush=True)
