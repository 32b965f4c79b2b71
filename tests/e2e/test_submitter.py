"""The submitter role with real Ray, on the shipped manifest k8s/volcano/ray-submitter.yaml (head
x1, worker x2, submitter x1): it waits for the cluster, submits through the Jobs REST API,
prints the job's log and exits with its outcome; a failing entrypoint exits 1; deleting the
submitter stops the job; a re-created submitter follows its job instead of submitting it again.
One cluster serves every case (each case uses its own submission_id). Below Ray 2.52 (make
e2e-oldest) the manifest's token mode is turned off: that Ray has none, and rayboot refuses it."""
import json
import os
import pathlib
import signal

import pytest
import yaml

from podsim import wait_until
from rayjobs import PROGRAMS, RAY_VERSION
from test_manifests_run import TOKEN, token_from_env

REPO = pathlib.Path(__file__).resolve().parents[2]
MANIFEST = REPO / "k8s" / "volcano" / "ray-submitter.yaml"
SQUARES = "[0, 1, 4, 9, 16, 25, 36, 49, 64, 81]"
# Set to a directory to record the dashboard's real replies (the unit tests' fixtures).
RECORD = os.environ.get("RAYBOOT_RECORD_JOBSAPI")


def manifest():
    (job,) = [d for d in yaml.safe_load_all(MANIFEST.read_text()) if d and d["kind"] == "Job"]
    token_from_env([t["template"]["spec"] for t in job["spec"]["tasks"]])
    for task in job["spec"]["tasks"]:
        c = task["template"]["spec"]["containers"][0]
        if task["name"] in ("head", "worker"):
            # One CPU per simulated node; the head keeps its dashboard (the submitter needs it).
            c["env"].append({"name": "RAYBOOT_RAY_START_ARGS", "value": "--num-cpus=1"})
        else:
            c["command"] = ["rayboot", "--", "python", str(PROGRAMS / "squares.py")]
        if RAY_VERSION < (2, 52):  # no token authentication there: rayboot refuses RAY_AUTH_MODE=token
            c["env"] = [e for e in c["env"] if e["name"] != "RAY_AUTH_MODE"] + [{"name": "RAY_AUTH_MODE",
                                                                                 "value": "disabled"}]
    return job


def dashboard(head, path, method="GET"):
    out = head.exec(["curl", "-sS", "-X", method, "-m", "20", "-H", f"Authorization: Bearer {TOKEN}",
                     f"http://127.0.0.1:8265{path}"], timeout=30)
    assert out.returncode == 0, out.stderr
    return out.stdout


def job_status(head, sid):
    try:
        return json.loads(dashboard(head, f"/api/jobs/{sid}"))["status"]
    except (ValueError, KeyError):
        return None


def rerun(submitter, command, submission_id):
    submitter.container["command"] = ["rayboot", "--", *command]
    submitter.extra_env["RAYBOOT_SUBMISSION_ID"] = submission_id
    submitter.recreate()


@pytest.mark.ray_oldest
def test_submitter_runs_jobs_on_a_volcano_cluster(cluster):
    job = cluster.job(manifest())
    job.start()
    head, submitter = job.pod("head"), job.pod("submitter")

    # The seed job: waits for 3 nodes, runs squares, exits 0.
    assert submitter.wait(240) == 0, submitter.log() + head.log()
    log = submitter.log()
    assert SQUARES in log and "nodes: 3" in log, log
    assert "submitted job rayboot-default-ray-job" in log and "SUCCEEDED" in log, log
    assert "2 of 2 workers joined" in log, log
    if RECORD:
        rec = pathlib.Path(RECORD)
        rec.mkdir(parents=True, exist_ok=True)
        (rec / "job-succeeded.json").write_text(dashboard(head, "/api/jobs/rayboot-default-ray-job"))
        (rec / "logs.json").write_text(dashboard(head, "/api/jobs/rayboot-default-ray-job/logs"))

    # A failing entrypoint exits 1, with Ray's message in the log.
    rerun(submitter, ["python", str(PROGRAMS / "squares.py"), "3"], "fails-1")
    assert submitter.wait(120) == 1, submitter.log()
    assert "FAILED" in submitter.log()
    if RECORD:
        (pathlib.Path(RECORD) / "job-failed.json").write_text(dashboard(head, "/api/jobs/fails-1"))

    # Quotes, spaces, $, backticks and a newline reach the job exactly as written.
    odd = ["it's", "a b", "$HOME", "`id`", "two\nlines", ""]
    rerun(submitter, ["python", "-c", "import json, sys; print('ARGV=' + json.dumps(sys.argv[1:]))", *odd], "odd-1")
    assert submitter.wait(120) == 0, submitter.log()
    assert "ARGV=" + json.dumps(odd) in submitter.log(), submitter.log()

    # A re-created submitter follows the job it submitted; it never submits it twice.
    stop_file = "/tmp/stop-restart-1"
    rerun(submitter, ["python", str(PROGRAMS / "busy.py"), stop_file], "restart-1")
    wait_until(lambda: job_status(head, "restart-1") == "RUNNING", 120, "the busy job to run", interval=1)
    os.kill(submitter.pid1, signal.SIGKILL)  # a crash: no chance to stop the job
    submitter.wait(10)
    submitter.recreate()
    wait_until(lambda: "exists already" in submitter.log(), 60, "the new submitter to find the job")
    head.exec(["touch", stop_file])
    assert submitter.wait(120) == 0, submitter.log()
    assert "tasks done:" in submitter.log()
    jobs = json.loads(dashboard(head, "/api/jobs/"))
    assert [j["submission_id"] for j in jobs].count("restart-1") == 1

    # Deleting the submitter mid-job stops the job in Ray.
    rerun(submitter, ["python", str(PROGRAMS / "busy.py"), "/tmp/never"], "deleted-1")
    wait_until(lambda: job_status(head, "deleted-1") == "RUNNING", 120, "the busy job to run", interval=1)
    assert submitter.delete(grace=15) == 3, submitter.log()
    assert job_status(head, "deleted-1") == "STOPPED", submitter.log()
