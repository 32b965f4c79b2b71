"""Keeps every worker busy with short tasks until told to stop (a file appears), then exits 0.
Used to delete a worker while tasks run: the job must still finish on the nodes left."""
import os
import sys
import time

import ray

ray.init()


@ray.remote(num_cpus=1, max_retries=5)
def work(i):
    time.sleep(0.5)
    return i


stop = sys.argv[1]
done = 0
while not os.path.exists(stop):
    done += len(ray.get([work.remote(i) for i in range(4)]))
print("tasks done:", done, flush=True)
