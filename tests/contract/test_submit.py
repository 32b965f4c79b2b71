"""`rayboot submit` as a black box against a stand-in for the Ray dashboard's Jobs API (the routes
and answers of the pinned Ray's job_head.py): retries while the dashboard is not up, the exact
entrypoint, following the log without repeating it, exit codes per final status, a refused
submit, SIGTERM stopping the job, and never submitting twice under one submission_id."""
import http.server
import json
import pathlib
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

from procs import children, eventually

HERE = pathlib.Path(__file__).resolve().parent


class FakeDashboard:
    def __init__(self):
        self.jobs = {}  # id -> {"status", "logs", "message", "request"}
        self.calls = []
        self.version_failures = 0
        self.submit_error = None  # (status, text) to answer POST /api/jobs/ with
        self.lock = threading.Lock()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _send(self, code, body, ctype="application/json"):
                data = body.encode() if isinstance(body, str) else body
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                with outer.lock:
                    outer.calls.append(("GET", self.path))
                    if self.path == "/api/version":
                        if outer.version_failures > 0:
                            outer.version_failures -= 1
                            return self._send(503, "starting", "text/plain")
                        return self._send(200, json.dumps({"version": "4", "ray_version": "2.60.0"}))
                    m = re.fullmatch(r"/api/jobs/([^/]+)(/logs)?", self.path)
                    job = outer.jobs.get(m.group(1)) if m else None
                    if not job:
                        return self._send(404, f"Job {m.group(1) if m else '?'} does not exist", "text/plain")
                    if m.group(2):
                        return self._send(200, json.dumps({"logs": job["logs"]}))
                    return self._send(200, json.dumps({
                        "type": "SUBMISSION", "job_id": None, "submission_id": m.group(1), "status": job["status"],
                        "entrypoint": job["request"].get("entrypoint"), "message": job["message"],
                        "error_type": None, "driver_exit_code": job.get("driver_exit_code")}))

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with outer.lock:
                    outer.calls.append(("POST", self.path))
                    if self.path == "/api/jobs/":
                        if outer.submit_error:
                            return self._send(*outer.submit_error, "text/plain")
                        req = json.loads(body)
                        sid = req.get("submission_id") or f"raysubmit_{len(outer.jobs) + 1}"
                        if sid in outer.jobs:
                            return self._send(400, f"Traceback ...\nValueError: Job with submission_id {sid} "
                                                   "already exists. Please use a different submission_id.",
                                              "text/plain")
                        outer.jobs[sid] = {"status": "PENDING", "logs": "", "message": "", "request": req}
                        return self._send(200, json.dumps({"job_id": None, "submission_id": sid}))
                    m = re.fullmatch(r"/api/jobs/([^/]+)/stop", self.path)
                    if m and m.group(1) in outer.jobs:
                        outer.jobs[m.group(1)]["status"] = "STOPPED"
                        outer.jobs[m.group(1)]["message"] = "Job was intentionally stopped."
                        return self._send(200, json.dumps({"stopped": True}))
                    return self._send(404, "no such route", "text/plain")

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def the_job(self, timeout=10):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if self.jobs:
                    return next(iter(self.jobs.values()))
            time.sleep(0.02)
        raise AssertionError("nothing was submitted")

    def update(self, job, **fields):
        with self.lock:
            job.update(fields)

    def posts(self):
        with self.lock:
            return [p for m, p in self.calls if m == "POST" and p == "/api/jobs/"]

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def dashboard():
    d = FakeDashboard()
    yield d
    d.close()


@pytest.fixture
def submit(rayboot_bin, tmp_path):
    procs = []

    def start(entrypoint, url, env=None, args=()):
        full = {"PATH": "/usr/bin:/bin", "RAYBOOT_WAIT_TIMEOUT": "10", **(env or {})}
        p = subprocess.Popen([str(rayboot_bin), "submit", *([f"--address={url}"] if url else []), *args, "--",
                              *entrypoint], env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append(p)
        return p

    yield start
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()


ODD = ["python", "-c", "import sys; print(sys.argv)", "it's", "a b", "$HOME", "`id`", "two\nlines", "", "--x=\"q\""]


def test_submit_retries_then_follows_to_success(dashboard, submit):
    dashboard.version_failures = 3
    p = submit(ODD, dashboard.url)
    job = dashboard.the_job()
    # The entrypoint reaches Ray as one shell string that splits back into exactly the argv.
    assert shlex.split(job["request"]["entrypoint"]) == ODD
    dashboard.update(job, status="RUNNING", logs="line 1\n")
    time.sleep(0.8)
    dashboard.update(job, logs="line 1\nline 2\n")
    time.sleep(0.8)
    dashboard.update(job, status="SUCCEEDED", logs="line 1\nline 2\ndone\n")
    out, err = p.communicate(timeout=20)
    assert p.returncode == 0, err
    assert out == "line 1\nline 2\ndone\n"  # each line once, in order
    assert "SUCCEEDED" in err


@pytest.mark.parametrize("status,code,needle", [("FAILED", 1, "FAILED (its entrypoint exited 7): boom"),
                                                ("STOPPED", 3, "STOPPED")])
def test_final_status_becomes_the_exit_code(dashboard, submit, status, code, needle):
    p = submit(["python", "job.py"], dashboard.url)
    job = dashboard.the_job()
    dashboard.update(job, status=status, message="boom", driver_exit_code=7)
    out, err = p.communicate(timeout=20)
    assert p.returncode == code, err
    assert needle in err


def test_refused_submit_exits_2_with_the_server_message(dashboard, submit):
    dashboard.submit_error = (400, "Traceback (most recent call last):\n  ...\nValueError: runtime_env is bad\n")
    p = submit(["python", "job.py"], dashboard.url)
    out, err = p.communicate(timeout=20)
    assert p.returncode == 2, err
    assert "HTTP 400" in err and "ValueError: runtime_env is bad" in err


def test_sigterm_stops_the_job(dashboard, submit):
    p = submit(["python", "job.py"], dashboard.url)
    job = dashboard.the_job()
    dashboard.update(job, status="RUNNING")
    time.sleep(0.5)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=20)
    assert p.returncode == 3, err
    assert job["status"] == "STOPPED"
    assert any(m == "POST" and path.endswith("/stop") for m, path in dashboard.calls)


def test_existing_submission_is_followed_not_submitted_again(dashboard, submit):
    dashboard.jobs["train-7"] = {"status": "RUNNING", "logs": "resumed\n", "message": "", "request": {}}
    p = submit(["python", "job.py"], dashboard.url, env={"RAYBOOT_SUBMISSION_ID": "train-7"})
    time.sleep(1)
    dashboard.update(dashboard.jobs["train-7"], status="SUCCEEDED")
    out, err = p.communicate(timeout=20)
    assert p.returncode == 0, err
    assert dashboard.posts() == [] and "exists already" in err
    assert out == "resumed\n"


def test_runtime_env_and_submission_id_are_sent(dashboard, submit, tmp_path):
    env_file = tmp_path / "env.json"
    env_file.write_text('{"env_vars": {"A": "1"}, "pip": ["requests"]}')
    p = submit(["python", "job.py"], dashboard.url,
               env={"RAYBOOT_RUNTIME_ENV_FILE": str(env_file), "RAYBOOT_SUBMISSION_ID": "my-job_1.2"})
    job = dashboard.the_job()
    assert job["request"]["runtime_env"] == {"env_vars": {"A": "1"}, "pip": ["requests"]}
    assert job["request"]["submission_id"] == "my-job_1.2"
    dashboard.update(job, status="SUCCEEDED")
    assert p.wait(20) == 0


def test_dashboard_never_up_exits_75(submit, closed_port):
    t0 = time.monotonic()
    p = submit(["python", "job.py"], f"http://127.0.0.1:{closed_port}", env={"RAYBOOT_WAIT_TIMEOUT": "2"})
    out, err = p.communicate(timeout=20)
    assert p.returncode == 75, err
    assert time.monotonic() - t0 < 8
    assert f"127.0.0.1:{closed_port}" in err.strip().splitlines()[-1]


@pytest.mark.parametrize("url,env,args,needle", [
    ("https://head:8265", {}, (), "--address=https://head:8265"),
    ("http://", {}, (), "--address=http://"),
    ("http://head:99999", {}, (), "--address=http://head:99999"),  # no such port: libcurl's URL API says so
    ("http://head:8265x", {}, (), "--address=http://head:8265x"),
    ("http:///head:8265", {}, (), "--address=http:///head:8265"),  # libcurl would read the host from the path
    ("http://head:-1", {}, (), "--address=http://head:-1"),
    ("http://he ad:8265", {}, (), "--address=http://he ad:8265"),
    ("http://head:8265/#x", {}, (), "--address=http://head:8265/#x"),
    ("ftp://head:8265", {}, (), "--address=ftp://head:8265"),
    (None, {}, (), "RAYBOOT_DASHBOARD_ADDRESS"),
    ("http://h:8265", {"RAYBOOT_RUNTIME_ENV": "[1, 2]"}, (), "RAYBOOT_RUNTIME_ENV"),
    ("http://h:8265", {"RAYBOOT_RUNTIME_ENV_FILE": "/nonexistent/env.json"}, (), "RAYBOOT_RUNTIME_ENV_FILE"),
    ("http://h:8265", {"RAYBOOT_SUBMISSION_ID": "a/b"}, (), "RAYBOOT_SUBMISSION_ID"),
])
def test_bad_configuration_exits_2(submit, url, env, args, needle):
    p = submit(["python", "job.py"], url, env=env, args=args)
    out, err = p.communicate(timeout=10)
    assert p.returncode == 2, err
    assert needle in err


def test_no_entrypoint_exits_2(rayboot_bin):
    out = subprocess.run([str(rayboot_bin), "submit", "--address=http://h:8265"], env={}, capture_output=True,
                         text=True, timeout=5)
    assert out.returncode == 2 and "entrypoint" in out.stderr


# First words a shell would read as an assignment or a keyword unless quoted, with later words that
# must stay plain arguments: each first word is a program on PATH that prints its own argv. (Not
# `%1`: bash reads a command word that starts with % as a job, quoted or not.)
SHELL_WORDS = [["A=B", "x=1", "if"], ["if", "then", "fi"], ["time", "-p"], ["for", "in", "do"],
               ["while", "a b", "$HOME"], ["it's", "`id`", ""]]


@pytest.mark.parametrize("shell", ["sh", "dash", "bash"])
def test_entrypoint_runs_as_the_exact_argv_in_a_real_shell(dashboard, submit, tmp_path, shell):
    """The entrypoint goes to Ray as one shell string and Ray runs it with a shell: run what
    rayboot sent the way Ray does, and the program must see exactly the argv given."""
    if not shutil.which(shell):
        pytest.skip(f"no {shell} here")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for words in SHELL_WORDS:
        prog = bindir / words[0]
        prog.write_text(f"#!{shutil.which('python3')}\nimport json, sys\nprint(json.dumps(sys.argv))\n")
        prog.chmod(0o755)
    for words in SHELL_WORDS:
        dashboard.jobs.clear()
        p = submit(words, dashboard.url, env={"RAYBOOT_SUBMISSION_ID": "roundtrip"})
        job = dashboard.the_job()
        p.kill()
        p.wait()
        entrypoint = job["request"]["entrypoint"]
        out = subprocess.run([shutil.which(shell), "-c", entrypoint], env={"PATH": f"{bindir}:/usr/bin:/bin"},
                             capture_output=True, text=True, timeout=10)
        assert out.returncode == 0, f"{shell} -c {entrypoint!r}: {out.stderr}"
        argv = json.loads(out.stdout)
        assert [pathlib.Path(argv[0]).name, *argv[1:]] == words, f"{shell} -c {entrypoint!r} ran {argv}"


def test_entrypoint_that_is_not_utf8_exits_2_naming_the_argument(rayboot_bin):
    out = subprocess.run([str(rayboot_bin), "submit", "--address=http://127.0.0.1:9", "--",
                          b"python", b"job.py", b"caf\xe9.txt"], env={}, capture_output=True, timeout=5)
    err = out.stderr.decode(errors="replace")
    assert out.returncode == 2, err
    assert "argument 3 of the job's entrypoint is not valid UTF-8 (byte 4 is 0xe9)" in err, err


def zombies_of(pid: int) -> list:
    """PIDs of the zombies whose parent is pid (this PID namespace's /proc)."""
    found = []
    for child in children(pid):
        try:
            state = pathlib.Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state == "Z":
            found.append(child)
    return found


def test_submitter_as_pid1_reaps_orphans_while_it_follows_the_job(run, gcs, dashboard, tmp_path):
    """The submitter role as a pod's PID 1 (RAYBOOT_ROLE=submitter): while it follows its job,
    orphans re-parented to it are reaped, not left as zombies (its waits once read the signalfd
    for stop signals only and dropped SIGCHLD)."""
    marker = tmp_path / "orphans"
    r = run({"RAYBOOT_ROLE": "submitter", "RAYBOOT_HEAD_ADDRESS": f"127.0.0.1:{gcs.port}",
             "RAYBOOT_PLUGIN_ARGS": f"--dashboardPort={dashboard.port}", "ORPHANS_WHEN": str(marker)},
            ["--", "python", "job.py"],
            wrap=("unshare", "--pid", "--fork", "--kill-child", sys.executable, HERE / "orphan_maker.py"))
    job = dashboard.the_job()
    dashboard.update(job, status="RUNNING", logs="working\n")
    rayboot = eventually(lambda: children(r.proc.pid))[0]
    nspid = pathlib.Path(f"/proc/{rayboot}/status").read_text().split("NSpid:")[1].split("\n")[0].split()
    assert nspid[-1] == "1", f"rayboot is not PID 1 in its namespace: NSpid {nspid}"
    marker.write_text("")
    eventually(lambda: pathlib.Path(f"{marker}.done").exists(), 30)
    # Following the job, it must reap all of them (the spawner too) while the job still runs.
    try:
        eventually(lambda: not zombies_of(rayboot), 10)
    except AssertionError as err:
        raise AssertionError(f"{len(zombies_of(rayboot))} zombies left under the submitter:\n{r.stderr}") from err
    assert r.proc.poll() is None and job["status"] == "RUNNING", r.stderr
    dashboard.update(job, status="SUCCEEDED")
    assert r.wait(30) == 0, r.stderr
    assert r.stdout == "working\n"
