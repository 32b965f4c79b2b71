"""Ray node labels (RAYBOOT_RAY_LABELS and rayboot's rayboot.io/...), read back from a real Ray's
GCS, and tasks placed on the worker by a label_selector; below Ray 2.49 (make e2e-oldest), no
labels and the log saying why."""
import json

import pytest

from rayjobs import PROGRAMS, RAY_VERSION, env, ray_job


def logs(job):
    return "\n".join(f"--- {name}\n{pod.log()}" for name, pod in job.pods.items())


@pytest.mark.ray_oldest
def test_labels_reach_the_gcs_and_place_a_task_on_the_worker(cluster):
    """The head's program sees both nodes' labels in ray.nodes(): rayboot's (platform volcano, role,
    job, task, index, pod) and the worker's own from RAYBOOT_RAY_LABELS, which also replaces
    rayboot's rayboot.io/index there; tasks with label_selector on rayboot.io/role=worker and on
    the user's label run on the worker's node. Before labels, ray.nodes() had no such labels.
    A Ray older than 2.49 takes no `--labels` in that form: both pods still run, with no labels of
    rayboot's or the user's in the GCS, the head saying why in a note and the worker, whose user
    gave labels, in a warning."""
    selectors = {"rayboot.io/role": "worker", "zone": "z1"}
    job = cluster.job(ray_job(name="lbl", workers=1,
                              head_command=["python", str(PROGRAMS / "node_labels.py"), json.dumps(selectors)],
                              worker_env=env(RAYBOOT_RAY_LABELS="zone=z1, rayboot.io/index=seven")))
    job.start()
    head, worker = job.pod("head"), job.pod("worker")
    assert head.wait(240) == 0, logs(job)
    line = next(text for text in head.log().splitlines() if text.startswith('{"labels"'))
    seen = json.loads(line)
    if RAY_VERSION < (2, 49):
        assert len(seen["labels"]) == 2 and seen["placed"] == {}, line
        for labels in seen["labels"].values():
            assert not any(k.startswith("rayboot.io/") or k == "zone" for k in labels), line
        why = f"Ray {RAY_VERSION[0]}.{RAY_VERSION[1]}."
        assert "node labels not passed to ray start: " + why in head.log(), head.log()
        assert "takes no --labels (2.49 and later do)" in head.log(), head.log()
        assert "RAYBOOT_RAY_LABELS is not passed to ray start: " + why in worker.log(), worker.log()
        assert worker.wait(60) == 0, logs(job)
        return
    by_role = {labels.get("rayboot.io/role"): (node, labels) for node, labels in seen["labels"].items()}
    assert set(by_role) == {"head", "worker"}, line
    head_node, head_labels = by_role["head"]
    worker_node, worker_labels = by_role["worker"]
    for labels, task, index, pod in ((head_labels, "head", "0", head.name), (worker_labels, "worker", "seven", worker.name)):
        want = {"rayboot.io/platform": "volcano", "rayboot.io/job": "lbl", "rayboot.io/task": task,
                "rayboot.io/index": index, "rayboot.io/pod": pod}
        assert {k: labels.get(k) for k in want} == want, line
    assert worker_labels.get("zone") == "z1" and "zone" not in head_labels, line
    assert seen["placed"] == {"rayboot.io/role": worker_node, "zone": worker_node}, line
    assert head_node != worker_node
    # The run says which Ray it read and what the user's label replaced.
    assert "Ray 2." in head.log() and "takes node labels" in head.log(), logs(job)
    assert "RAYBOOT_RAY_LABELS: rayboot.io/index=seven replaces rayboot's rayboot.io/index=0" in worker.log(), logs(job)
    assert worker.wait(60) == 0, logs(job)
