"""No input ever reaches a shell (issue 9): every RAYBOOT_* variable, every flag of rayboot and
rayboot-sidecar, the user's command after `--`, `rayboot submit`'s entrypoint, `rayboot install`'s
directory and the Volcano values, each given shell metacharacters ($(...), backticks, ;, |, &&, a
newline, quotes), and:
  (a) nothing is ever run: the marker files the payload would create stay absent;
  (b) a value that ends up in an argv (ray start's, the command's), an env, a JSON body or a file
      path arrives byte for byte, as one element;
  (c) a value that is refused exits 2 with a message naming the variable or flag.
test_every_variable_and_flag_is_covered fails when a RAYBOOT_* variable or a flag appears in the
sources or the help texts without a case here.

fixtures/test_generated.py::test_values_are_never_interpreted and fixtures/test_mutations.py run
`plan` on pod fixtures; this file covers every field and the run itself (argv seen by a fake ray
and by the command, files written, bodies sent)."""
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

from fake_gcs import FakeGcs
from procs import free_port
from test_submit import FakeDashboard

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO / "tests" / "fixtures"))
from podgen import volcano_pod  # noqa: E402

# Relative markers: a shell started by rayboot would create them in rayboot's working directory
# (each test's own), or in / if rayboot had changed directory.
PAYLOAD = ("v$(touch pwned-1)`touch pwned-2`;touch pwned-3|touch pwned-4&&touch pwned-5\n"
           "touch pwned-6 'q' \"d\" \\ * ${IFS} %s %n")
# The same in one word (no white space), for the values that are split into words.
WORD = "$(touch${IFS}pwned-7)`touch${IFS}pwned-8`;touch${IFS}pwned-9|x&&y'q'\"d\"\\*%s"
# A file name cannot hold '/'; everything else of the payload it can.
FILE_NAME = "f " + PAYLOAD

PLUGIN_FLAGS = ["--head", "--headContainer", "--worker", "--workerContainer", "--port", "--dashboardPort",
                "--clientPort"]

# --- (c) refused values: variable -> the ways of running that read it ------------------------------
PLAN_READS = ("plan", "sidecar", "run")
SETTINGS_READ = ("plan", "sidecar", "run", "submit")
SUBMITTER_READS = ("submit", "submitter")
REFUSED_ENV = {
    "RAYBOOT_ROLE": PLAN_READS,
    "RAYBOOT_HEAD_ADDRESS": PLAN_READS,
    "RAYBOOT_PLUGIN_ARGS": PLAN_READS,
    "RAYBOOT_RAY_LABELS": PLAN_READS,
    "RAYBOOT_POD_IP": PLAN_READS,
    "RAYBOOT_POD_NAME": PLAN_READS,
    "RAYBOOT_POD_NAMESPACE": PLAN_READS,
    "RAYBOOT_CLUSTER_DOMAIN": PLAN_READS,
    "RAYBOOT_WORKERS_EXPECTED": PLAN_READS,
    "RAYBOOT_NOFILE": PLAN_READS,
    "RAYBOOT_SUBMITTER_TASK": ("volcano",),  # read only where Volcano names the tasks
    "RAYBOOT_WORKER_PARALLELISM": ("jobset",),  # read only where a JobSet's labels name the pod
    "RAYBOOT_WAIT_TIMEOUT": SETTINGS_READ,
    "RAYBOOT_WORKERS_TIMEOUT": SETTINGS_READ,
    "RAYBOOT_GRACE_PERIOD": SETTINGS_READ,
    "RAYBOOT_HEAD_LOSS_TIMEOUT": SETTINGS_READ,
    "RAYBOOT_EVICTION_EXIT_CODE": SETTINGS_READ,
    "RAYBOOT_RENDEZVOUS_PORT": SETTINGS_READ,
    "RAYBOOT_SIDECAR_PORT": ("sidecar",),
    "RAYBOOT_SIDECAR_DRAIN_PORT": ("sidecar", "drain"),
    "RAYBOOT_SIDECAR_READINESS": ("sidecar",),
    "RAYBOOT_DASHBOARD_ADDRESS": ("submit",),
    "RAYBOOT_RUNTIME_ENV": SUBMITTER_READS,
    "RAYBOOT_RUNTIME_ENV_FILE": SUBMITTER_READS,  # no file has that name (one that has: below)
    "RAYBOOT_SUBMISSION_ID": SUBMITTER_READS,
    "RAYBOOT_TLS_CA_KEY": ("tls",),  # read only with RAY_USE_TLS=1
    "RAYBOOT_TLS_CERT_HOURS": ("tls",),
    "RAYBOOT_TLS_DIR": ("tls",),
}
# Values that arrive literally (tests below), and values that are only compared or counted.
LITERAL_ENV = {"RAYBOOT_RAY", "RAYBOOT_RAY_START_ARGS", "RAYBOOT_ROOT", "RAYBOOT_TERMINATION_LOG",
               "RAYBOOT_RUNTIME_ENV", "RAYBOOT_RUNTIME_ENV_FILE"}
INERT_ENV = {"RAYBOOT_DEBUG", "RAYBOOT_PROBER_SELFTEST"}
# Not environment variables: build-time macros (the version, the seccomp test builds' knobs).
BUILD_MACROS = {"RAYBOOT_VERSION", "RAYBOOT_MUSL_VERSION", "RAYBOOT_SECCOMP_DROP", "RAYBOOT_SECCOMP_TEST_BRK_FAILS"}

# Flags: program -> flag -> how its value is treated.
FLAGS = {
    "rayboot": {"--format": "refused", "--log-format": "refused", "--address": "refused",
                "--clientServerPort": "refused", "--help": "switch", "-h": "switch", "--version": "switch",
                **{f: "refused" for f in PLUGIN_FLAGS}},
    "rayboot-sidecar": {"--log-format": "refused", "--clientServerPort": "refused", "--help": "switch",
                        "-h": "switch", "--version": "switch", "--deadline": "refused",
                        **{f: "refused" for f in PLUGIN_FLAGS}},
}
VOLCANO_VALUES = ["HOSTNAME", "VK_TASK_INDEX", "VC_TASK_INDEX", "VC_HEAD_HOSTS", "VC_WORKER_HOSTS", "VC_HEAD_NUM",
                  "VC_WORKER_NUM", "/etc/volcano/head.host", "/etc/volcano/worker.host", "JOB_COMPLETION_INDEX"]


def nothing_ran(cwd: pathlib.Path):
    made = [str(p) for p in [*cwd.glob("pwned-*"), *pathlib.Path("/").glob("pwned-*")]]
    assert not made, f"a shell ran a value: {made}"


def run(argv, env, cwd, timeout=20):
    out = subprocess.run([str(a) for a in argv], env=env, cwd=cwd, capture_output=True, timeout=timeout)
    return out.returncode, out.stdout.decode(errors="replace"), out.stderr.decode(errors="replace")


@pytest.fixture
def cwd(tmp_path):
    d = tmp_path / "cwd"
    d.mkdir()
    yield d
    nothing_ran(d)


@pytest.fixture
def pod(tmp_path):
    """An explicit pod: its root, and the env every way of running starts from."""
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    (root / "etc" / "hosts").write_text("127.0.0.1\tlocalhost\n10.7.7.7\tpod-0\n")
    (root / "etc" / "resolv.conf").write_text("nameserver 127.0.0.1\n")
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOSTNAME": "pod-0", "RAYBOOT_ROOT": str(root),
            "RAYBOOT_WAIT_TIMEOUT": "1", "RAYBOOT_SIDECAR_PORT": "0", "RAYBOOT_SIDECAR_DRAIN_PORT": "0"}


def tls_settings(tmp_path):
    """A CA made by openssl and a memory-backed directory: what the "tls" way of running needs to
    get as far as the variable under test."""
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-days", "1", "-keyout", tmp_path / "ca.key", "-out", tmp_path / "ca.crt", "-subj", "/CN=ca",
                    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"],
                   check=True, capture_output=True, timeout=30)
    shm = pathlib.Path(tempfile.mkdtemp(prefix="rb-noshell-", dir="/dev/shm"))
    return {"RAY_TLS_CA_CERT": str(tmp_path / "ca.crt"), "RAYBOOT_TLS_CA_KEY": str(tmp_path / "ca.key"),
            "RAYBOOT_TLS_DIR": str(shm)}


def way_of_running(mode, pod, rayboot_bin, sidecar_bin, tmp_path):
    """(argv, env) for one way of running that reads the variable under test."""
    head = dict(pod, RAYBOOT_ROLE="head")
    worker = dict(pod, RAYBOOT_ROLE="worker", RAYBOOT_HEAD_ADDRESS="127.0.0.1:1")
    if mode == "plan":
        return [rayboot_bin, "plan"], head
    if mode == "sidecar":
        return [sidecar_bin], worker
    if mode == "drain":
        return [sidecar_bin, "drain"], pod
    if mode == "run":
        return [rayboot_bin], worker
    if mode == "tls":  # a worker with Ray's TLS, every TLS setting valid but the one under test
        return [rayboot_bin], dict(worker, RAY_USE_TLS="1", **tls_settings(tmp_path))
    if mode == "submit":
        return ([rayboot_bin, "submit", "--", "python", "job.py"],
                dict(pod, RAYBOOT_DASHBOARD_ADDRESS="http://127.0.0.1:1"))
    if mode == "submitter":
        return [rayboot_bin, "--", "python", "job.py"], dict(worker, RAYBOOT_ROLE="submitter")
    if mode == "volcano":
        env = volcano_pod(tmp_path / "vc", "rc", "default", {"head": 1, "worker": 1, "submitter": 1}, ("worker", 0))
        return [rayboot_bin, "plan"], dict(env, RAYBOOT_ROOT=str(tmp_path / "vc"))
    if mode == "jobset":
        case = REPO / "tests" / "fixtures" / "pods" / "jobset-head"
        shutil.copytree(case / "root", tmp_path / "js", symlinks=True)
        env = dict(line.split("=", 1) for line in (case / "env").read_text().splitlines() if "=" in line)
        return [rayboot_bin, "plan"], dict(env, RAYBOOT_ROOT=str(tmp_path / "js"))
    raise AssertionError(mode)


@pytest.mark.parametrize("name,mode", [(n, m) for n, modes in sorted(REFUSED_ENV.items()) for m in modes])
def test_refused_value_exits_2_naming_the_variable(rayboot_bin, sidecar_bin, pod, cwd, tmp_path, name, mode):
    argv, env = way_of_running(mode, pod, rayboot_bin, sidecar_bin, tmp_path)
    try:
        code, _, err = run(argv, dict(env, **{name: PAYLOAD}), cwd)
    finally:
        if mode == "tls":
            shutil.rmtree(env["RAYBOOT_TLS_DIR"], ignore_errors=True)
    assert code == 2 and f"{name}" in err, (code, err)


REFUSED_FLAG_CASES = [(p, f, form) for p, flags in FLAGS.items() for f, kind in flags.items() if kind == "refused"
                      for form in ("--flag=value", "--flag value")]
# The plugin's flags are read from RAYBOOT_PLUGIN_ARGS too, by both programs.
REFUSED_FLAG_CASES += [(p, f, "RAYBOOT_PLUGIN_ARGS") for p in FLAGS for f in [*PLUGIN_FLAGS, "--clientServerPort"]]


@pytest.mark.parametrize("program,flag,form", REFUSED_FLAG_CASES)
def test_refused_flag_value_exits_2_naming_the_flag(rayboot_bin, sidecar_bin, pod, cwd, program, flag, form):
    env = dict(pod, RAYBOOT_ROLE="head")
    if form == "RAYBOOT_PLUGIN_ARGS":
        env["RAYBOOT_PLUGIN_ARGS"] = f"--port=6379 {flag}={WORD}"
        args = []
    else:
        args = [f"{flag}={PAYLOAD}"] if form == "--flag=value" else [flag, PAYLOAD]
    if flag == "--deadline":  # read by `rayboot-sidecar drain` only
        argv = [sidecar_bin, "drain", *args]
    elif program == "rayboot-sidecar":
        argv = [sidecar_bin, *args]
    elif flag == "--address":  # read by `submit` only
        argv = [rayboot_bin, "submit", *args, "--", "job"]
    else:
        argv = [rayboot_bin, *args, "plan"]
    code, _, err = run(argv, env, cwd)
    assert code == 2 and flag in err, (code, err)
    if form == "RAYBOOT_PLUGIN_ARGS":
        assert "RAYBOOT_PLUGIN_ARGS" in err, err


@pytest.mark.parametrize("program,flag", [(p, f) for p, flags in FLAGS.items() for f, kind in flags.items()
                                          if kind == "switch"])
def test_flags_without_a_value_refuse_one(rayboot_bin, sidecar_bin, pod, cwd, program, flag):
    binary = rayboot_bin if program == "rayboot" else sidecar_bin
    code, out, err = run([binary, f"{flag}={PAYLOAD}"], pod, cwd)
    assert code == 2 and f"{flag} takes no value" in err and not out, (code, out, err)


@pytest.mark.parametrize("program", FLAGS)
@pytest.mark.parametrize("word", ["--" + PAYLOAD, PAYLOAD, "-" + WORD], ids=["long", "word", "short"])
def test_unknown_flags_and_words_exit_2_naming_them(rayboot_bin, sidecar_bin, pod, cwd, program, word):
    binary = rayboot_bin if program == "rayboot" else sidecar_bin
    code, _, err = run([binary, word], dict(pod, RAYBOOT_ROLE="head"), cwd)
    assert code == 2 and ("unknown" in err or "unexpected" in err) and "touch" in err, (code, err)


@pytest.mark.parametrize("where", VOLCANO_VALUES)
def test_volcano_values_are_refused_by_name(rayboot_bin, cwd, tmp_path, where):
    root = tmp_path / "vc"
    if where == "JOB_COMPLETION_INDEX":
        (root / "etc").mkdir(parents=True)
        (root / "etc" / "hosts").write_text("10.0.0.5\tj-0.j.ns.svc.cluster.local\tj-0\n")
        env = {"HOSTNAME": "j-0", where: PAYLOAD}
    else:
        # Host lists from the env are read only when no ConfigMap is mounted.
        env = volcano_pod(root, "rc", "default", {"head": 1, "worker": 2}, ("worker", 1),
                          files=not where.startswith("VC_") or "TASK" in where)
        if where.startswith("/"):
            (root / where.lstrip("/")).resolve().write_text(PAYLOAD)
        else:
            env[where] = PAYLOAD
    code, _, err = run([rayboot_bin, "plan"], dict(env, RAYBOOT_ROOT=str(root)), cwd)
    assert code == 2 and pathlib.PurePath(where).name in err, (code, err)


# --- (b) values that arrive byte for byte ----------------------------------------------------------

# Records its argv once the fake ray has announced itself (or Ray could be stopped unborn).
RECORDER = ("import json, os, sys, time\nwhile not os.path.exists(os.environ['FAKE_RAY_LOG']): time.sleep(0.02)\n"
            "open(sys.argv[1], 'w').write(json.dumps(sys.argv[2:]))\n")


def test_values_reach_ray_and_the_command_byte_for_byte(rayboot_bin, cwd, tmp_path):
    """A real run (head, fake GCS): ray is executed from a path full of metacharacters, gets a
    user flag holding the payload, the command gets the payload in every argument shape, the
    pod root and the termination log are such paths too; the debug and self-test knobs only
    compare their values."""
    gcs = FakeGcs()
    try:
        ray_dir = tmp_path / FILE_NAME
        ray_dir.mkdir()
        ray = ray_dir / "ray"
        ray.write_text((HERE / "fake_ray.py").read_text())
        ray.chmod(0o755)
        root = tmp_path / ("root " + PAYLOAD)
        (root / "etc").mkdir(parents=True)
        (root / "etc" / "hosts").write_text("127.0.0.1\tlocalhost\n10.7.7.7\tpod-0\n")
        (root / "etc" / "resolv.conf").write_text("nameserver 127.0.0.1\n")
        termlog = tmp_path / ("log " + PAYLOAD)
        termlog.write_text("")
        seen = tmp_path / "argv.json"
        command = [sys.executable, "-c", RECORDER, str(seen), PAYLOAD, WORD, "", " ", "a b", "--x=" + PAYLOAD,
                   "\n", "*", "~", "$HOME", "'", '"', "\\"]
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOSTNAME": "pod-0", "RAYBOOT_ROLE": "head",
               "RAYBOOT_ROOT": str(root), "RAYBOOT_RAY": str(ray), "FAKE_RAY_LOG": str(tmp_path / "ray.log"),
               "RAYBOOT_PLUGIN_ARGS": f"--port={gcs.port}", "RAYBOOT_TERMINATION_LOG": str(termlog),
               "RAYBOOT_RAY_START_ARGS": json.dumps(["--labels=" + PAYLOAD, "--x-empty="]),
               "RAYBOOT_DEBUG": PAYLOAD, "RAYBOOT_PROBER_SELFTEST": PAYLOAD, "NVIDIA_VISIBLE_DEVICES": PAYLOAD,
               "RAYBOOT_GRACE_PERIOD": "5",
               # Not the default 8079: another session's head may hold it, and a taken port is exit 2.
               "RAYBOOT_RENDEZVOUS_PORT": str(free_port())}
        code, _, err = run([rayboot_bin, "--", *command], env, cwd, timeout=60)
        assert code == 0, err
        assert json.loads(seen.read_text()) == command[4:]
        ray_argv = json.loads((tmp_path / "ray.log").read_text().splitlines()[0])["argv"]
        assert ray_argv[0] == str(ray) and ray_argv[1:3] == ["start", "--head"]
        assert "--labels=" + PAYLOAD in ray_argv and "--x-empty=" in ray_argv
        assert "--node-ip-address=10.7.7.7" in ray_argv, "the pod root was not read at its literal path"
        assert "--num-gpus=1" in ray_argv  # a device list is counted, nothing more
        assert "SIGSYS" not in err  # the prober's self-test runs on its one exact value only
        assert termlog.read_text() == "rayboot: the command exited with 0 (exit 0)\n"
    finally:
        gcs.stop()


def test_ray_start_args_words_arrive_as_words(rayboot_bin, pod, cwd):
    words = ["--labels=" + WORD, "--resources=" + WORD, "--x-" + "y=" + WORD]
    code, out, err = run([rayboot_bin, "plan"], dict(pod, RAYBOOT_ROLE="head",
                                                     RAYBOOT_RAY_START_ARGS="\t".join(words) + "\n"), cwd)
    assert code == 0, err
    ray_start = json.loads(out)["ray_start"]
    assert all(w in ray_start for w in words), ray_start


def test_submit_sends_every_value_as_data(rayboot_bin, cwd, tmp_path):
    """The entrypoint is the one value a shell will see (Ray runs it with one): it is quoted so that
    it splits back into exactly the argv; runtime_env, from the env or from a file at a path full
    of metacharacters, is sent as JSON data."""
    dashboard = FakeDashboard()
    try:
        env_file = tmp_path / (FILE_NAME + ".json")
        env_file.write_text(json.dumps({"env_vars": {"FROM_FILE": PAYLOAD}}))
        entrypoint = ["python", "-c", "print(1)", PAYLOAD, WORD, "", "a b", "'", '"', "\\", "\n", "$HOME", "*"]
        env = {"PATH": "/usr/bin:/bin", "RAYBOOT_WAIT_TIMEOUT": "10", "RAYBOOT_RUNTIME_ENV_FILE": str(env_file)}
        proc = subprocess.Popen([str(rayboot_bin), "submit", f"--address={dashboard.url}", "--", *entrypoint],
                                env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        job = dashboard.the_job()
        assert shlex.split(job["request"]["entrypoint"]) == entrypoint
        assert job["request"]["runtime_env"] == {"env_vars": {"FROM_FILE": PAYLOAD}}
        dashboard.update(job, status="SUCCEEDED")
        assert proc.wait(20) == 0
        proc.communicate()
        runtime_env = {"env_vars": {"A": PAYLOAD}, "working_dir": FILE_NAME}
        env = dict(env, RAYBOOT_RUNTIME_ENV=json.dumps(runtime_env), RAYBOOT_SUBMISSION_ID="literal-2")
        del env["RAYBOOT_RUNTIME_ENV_FILE"]
        proc = subprocess.Popen([str(rayboot_bin), "submit", f"--address={dashboard.url}", "--", "python", "j.py"],
                                env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        wait_for(lambda: "literal-2" in dashboard.jobs)
        job = dashboard.jobs["literal-2"]
        assert job["request"]["runtime_env"] == runtime_env
        dashboard.update(job, status="SUCCEEDED")
        assert proc.wait(20) == 0
        proc.communicate()
    finally:
        dashboard.close()


def wait_for(condition, timeout=10):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_install_into_a_directory_named_like_a_command(rayboot_bin, cwd, tmp_path):
    target = tmp_path / ("dir " + PAYLOAD)
    target.mkdir()
    code, _, err = run([rayboot_bin, "install", target], {"PATH": "/usr/bin:/bin"}, cwd)
    assert code == 0, err
    assert (target / "rayboot").read_bytes() == rayboot_bin.read_bytes()


# --- Nothing left out ------------------------------------------------------------------------------

def sources(*dirs):
    for d in dirs:
        for path in sorted((REPO / d).rglob("*.[ch]")):
            yield path.read_text()


def help_text(binary):
    return subprocess.run([str(binary), "--help"], capture_output=True, text=True, timeout=5).stdout


def test_every_variable_and_flag_is_covered(rayboot_bin, sidecar_bin):
    names = set()
    for text in sources("lib", "init", "sidecar"):
        names |= {n for n in re.findall(r"\bRAYBOOT_[A-Z0-9_]+\b", text) if not n.endswith("_H")}
    names |= set(re.findall(r"\bRAYBOOT_[A-Z0-9_]+\b", help_text(rayboot_bin) + help_text(sidecar_bin)))
    covered = set(REFUSED_ENV) | LITERAL_ENV | INERT_ENV
    names -= BUILD_MACROS
    assert names == covered, (f"variables without a case here: {sorted(names - covered)}; "
                              f"cases for no variable: {sorted(covered - names)}")

    def flag(name):
        return f"-{name}" if len(name) == 1 else f"--{name}"

    plugin = set(flag(n) for n in re.findall(r'\{"(\w+)", VALUE_', (REPO / "lib" / "plan" / "pluginargs.c").read_text()))
    special = {flag(n) for n in re.findall(r'strcmp\(name, "(\w+)"\)', (REPO / "lib" / "plan" / "pluginargs.c").read_text())}
    for program, source in (("rayboot", "init/cli.c"), ("rayboot-sidecar", "sidecar/main.c")):
        text = (REPO / source).read_text()
        found = {flag(n) for n in re.findall(r'strcmp\(f(?:->|\.)name, "([\w-]+)"\)', text)} | plugin | special
        usage = help_text(rayboot_bin if program == "rayboot" else sidecar_bin)
        found |= set(re.findall(r"^\s+(--?[A-Za-z][\w-]*)", usage, re.M))
        found |= set(re.findall(r"^\s+-h, (--help)", usage, re.M))
        assert found == set(FLAGS[program]), (program, sorted(found ^ set(FLAGS[program])))
