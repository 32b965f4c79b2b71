"""Node labels as Ray's GCS holds them, and a task placed by them: prints one JSON line
{"labels": {node id: labels}, "placed": {selector key: node id the task ran on}}."""
import json
import sys

import ray

ray.init()


@ray.remote(num_cpus=0)
def where():
    return ray.get_runtime_context().get_node_id()


nodes = {n["NodeID"]: n.get("Labels", {}) for n in ray.nodes() if n["Alive"]}
placed = {}
# A selector no node satisfies would leave the task pending for ever: only ask when some node has it.
for key, value in json.loads(sys.argv[1]).items():
    if any(labels.get(key) == value for labels in nodes.values()):
        placed[key] = ray.get(where.options(label_selector={key: value}).remote(), timeout=120)
print(json.dumps({"labels": nodes, "placed": placed}), flush=True)
