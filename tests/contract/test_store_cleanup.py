"""The head's deletion of its GCS state from Redis (GCS fault tolerance, docs/gcs-ft.md): once its
command has ended by itself and Ray has stopped, the head runs Ray's cleanup_redis_storage in the
Python of `ray`'s #! line; never after a SIGTERM that came first. Here `ray` is a script whose #!
line names the test's Python and a recorder (with one argument, as the kernel splits it): as
`ray start` it is fake_ray.py, as the cleanup it records its program and environment. The real
cleanup against a real redis-server is tests/e2e/test_gcs_ft.py's."""
import json
import os
import signal
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
RECORDER = f"""import json, os, runpy, sys
if sys.argv[1:2] == ["-c"]:
    with open(os.environ["CLEANUP_LOG"], "w") as f:
        json.dump({{"program": sys.argv[2], "env": {{k: v for k, v in os.environ.items()
                   if k.startswith(("RAY_", "REDIS_"))}}}}, f)
    sys.exit(int(os.environ.get("CLEANUP_EXIT", "0")))
sys.argv[0] = {os.path.join(HERE, "fake_ray.py")!r}
runpy.run_path(sys.argv[0], run_name="__main__")
"""


@pytest.fixture
def ray_script(tmp_path, pod_root):
    """The script, where execve runs it and where rayboot reads files (under RAYBOOT_ROOT)."""
    recorder = tmp_path / "recorder.py"
    recorder.write_text(RECORDER)
    ray = tmp_path / "bin" / "ray"
    for place in (ray, pod_root / str(ray).lstrip("/")):
        place.parent.mkdir(parents=True)
        place.write_text(f"#!{sys.executable}  {recorder}  \nthis line is never read\n")
        place.chmod(0o755)
    return ray


def head_env(gcs, ray, tmp_path, **extra):
    env = {"RAYBOOT_ROLE": "head", "RAYBOOT_PLUGIN_ARGS": f"--port={gcs.port}", "RAYBOOT_RENDEZVOUS_PORT": "0",
           "RAYBOOT_RAY": str(ray), "CLEANUP_LOG": str(tmp_path / "cleanup.json"),
           "RAY_REDIS_ADDRESS": "redis.example:6380", "RAY_external_storage_namespace": "job-uid-1",
           "REDIS_PASSWORD": "pw"}
    env.update(extra)
    return env


@pytest.mark.parametrize("outcome", [0, 1], ids=["deleted", "failed"])
def test_a_finished_jobs_namespace_is_deleted_after_ray_stops(run, gcs, ray_script, tmp_path, outcome):
    head = run(head_env(gcs, ray_script, tmp_path, CLEANUP_EXIT=str(outcome)), ["--", "sh", "-c", "exit 3"])
    assert head.wait(30) == 3, head.stderr  # the command's code, whatever the cleanup did
    assert (tmp_path / "cleanup.json").exists(), head.stderr
    record = json.loads((tmp_path / "cleanup.json").read_text())
    assert "cleanup_redis_storage" in record["program"] and "os.environ" in record["program"]
    assert {k: record["env"].get(k) for k in ("RAY_REDIS_ADDRESS", "RAY_external_storage_namespace",
                                             "REDIS_PASSWORD")} == \
        {"RAY_REDIS_ADDRESS": "redis.example:6380", "RAY_external_storage_namespace": "job-uid-1",
         "REDIS_PASSWORD": "pw"}
    log = head.stderr
    assert log.index("ray start exited") < log.index("deleting the GCS's storage namespace job-uid-1"), log
    if outcome == 0:
        assert "the GCS's storage namespace is deleted from Redis" in log, log
    else:
        assert "deleting the GCS's storage namespace from Redis failed (1)" in log, log


def test_a_head_stopped_before_its_command_ended_keeps_the_namespace(run, gcs, ray_script, tmp_path):
    """An evicted head's successor needs the state: nothing is deleted."""
    head = run(head_env(gcs, ray_script, tmp_path), ["--", "sleep", "30"])
    head.wait_for_log("started the command")
    os.kill(head.proc.pid, signal.SIGTERM)
    assert head.wait(30) == 128 + signal.SIGTERM, head.stderr
    assert not (tmp_path / "cleanup.json").exists() and "deleting the GCS" not in head.stderr, head.stderr


def test_redis_without_a_namespace_is_warned_of_and_not_deleted(run, gcs, ray_script, tmp_path):
    head = run(head_env(gcs, ray_script, tmp_path, RAY_external_storage_namespace=""), ["--", "true"])
    assert head.wait(30) == 0, head.stderr
    assert "RAY_REDIS_ADDRESS is set and RAY_external_storage_namespace is not" in head.stderr, head.stderr
    assert not (tmp_path / "cleanup.json").exists(), head.stderr
