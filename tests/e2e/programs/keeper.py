"""A detached actor that counts, for the GCS fault tolerance tests.

Usage: keeper.py create NODE_IP   (run in the head pod) places the actor `keeper` (namespace
                                  `gcsft`) on the node at NODE_IP, counts to 3, prints `count 3`
       keeper.py ask              counts once more and prints `count N` and the actor's node id:
                                  after a head restart N is 4 when its state survived."""
import sys

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

ray.init(namespace="gcsft")


@ray.remote(num_cpus=0)
class Keeper:
    def __init__(self):
        self.count = 0

    def incr(self):
        self.count += 1
        return self.count, ray.get_runtime_context().get_node_id()


if sys.argv[1] == "create":
    node = [n["NodeID"] for n in ray.nodes() if n["Alive"] and n["NodeManagerAddress"] == sys.argv[2]][0]
    keeper = Keeper.options(name="keeper", lifetime="detached",
                            scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False)).remote()
    for _ in range(3):
        count, where = ray.get(keeper.incr.remote(), timeout=60)
else:
    count, where = ray.get(ray.get_actor("keeper").incr.remote(), timeout=20)
print("count", count, where, flush=True)
