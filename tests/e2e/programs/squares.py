"""The seed job: squares 0..9 on the cluster and reports how many nodes are ALIVE."""
import sys

import ray

ray.init()


@ray.remote
def square(x):
    return x * x


print(ray.get([square.remote(i) for i in range(10)]), flush=True)
print("nodes:", sum(1 for n in ray.nodes() if n["Alive"]), flush=True)
sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
