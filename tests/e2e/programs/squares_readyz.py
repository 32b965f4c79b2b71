"""The seed job, then a look at every node's pod from inside it: a task pinned to each ALIVE node
asks that pod's sidecar for /readyz on 127.0.0.1:8077 until it answers 200 (at most 30 s). A job
this short may end before a sidecar's periodic look (every 2 s) finds its node ALIVE; the job stays
until each one has, so the test reads readiness while the cluster runs, not a race with its end."""
import time
import urllib.error
import urllib.request

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

READYZ = "http://127.0.0.1:8077/readyz"
DEADLINE_S = 30

ray.init()


@ray.remote
def square(x):
    return x * x


@ray.remote(num_cpus=0)
def readyz():
    end = time.monotonic() + DEADLINE_S
    status = None
    while time.monotonic() < end:
        try:
            with urllib.request.urlopen(READYZ, timeout=2) as reply:
                return reply.status
        except urllib.error.HTTPError as e:
            status = f"{e.code} {e.read(200).decode(errors='replace').strip()}"  # the sidecar's reason
        except OSError as e:
            status = str(e)
        time.sleep(0.2)
    return status


print(ray.get([square.remote(i) for i in range(10)]), flush=True)
nodes = [n for n in ray.nodes() if n["Alive"]]
print("nodes:", len(nodes), flush=True)
pinned = [readyz.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)) for n in nodes]
print("readyz:", sorted(str(s) for s in ray.get([r.remote() for r in pinned])), flush=True)
