"""rayboot's contract as PID 1 / supervisor (issue 5), black box, with a fake GCS and fake ray:
exit codes, signals, reaping, restored dispositions, SIGTERM handling, worker completion, drain.
Also the waiting contract (issue 4): deadline exit 75, and the seccomp-confined prober."""
import json
import os
import re
import signal
import sys
import threading
import time

import pytest

from fake_gcs import ALL_NODES, DRAIN, Node, parse

PY = sys.executable


def ray_started(tmp_path, timeout=15):
    """The fake ray's first log line, once it has set up its signals and written it."""
    log = tmp_path / "ray.log"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.exists() and log.read_text().endswith("\n"):
            return json.loads(log.read_text().splitlines()[0])
        time.sleep(0.02)
    raise AssertionError("the fake ray never started")


def head_env(gcs, **extra):
    env = {"RAYBOOT_ROLE": "head", "RAYBOOT_PLUGIN_ARGS": f"--port={gcs.port}"}
    env.update(extra)
    return env


def worker_env(port, **extra):
    env = {"RAYBOOT_ROLE": "worker", "RAYBOOT_HEAD_ADDRESS": f"127.0.0.1:{port}", "RAYBOOT_POD_IP": "127.0.0.1"}
    env.update(extra)
    return env


def started_worker(run, gcs, **extra):
    """A worker whose node (127.0.0.1) is ALIVE in the fake GCS, the head elsewhere (10.0.0.1),
    run with worker_env's EXTRA until it has started Ray."""
    from fake_gcs import Node
    gcs.nodes.append(Node("127.0.0.1", node_id=b"\x42" * 28))
    gcs.nodes[0].ip = "10.0.0.1"  # the head is elsewhere; this pod's node is 127.0.0.1
    r = run(worker_env(gcs.port, **extra))
    r.wait_for_log("started ray")
    return r


@pytest.mark.parametrize("code", [0, 1, 3, 42, 126, 200, 255])
def test_command_exit_code_becomes_rayboots(run, gcs, code):
    r = run(head_env(gcs), ["--", PY, "-c", f"import sys; sys.exit({code})"])
    assert r.wait(30) == code, r.stderr


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGUSR1, signal.SIGSEGV])
def test_command_killed_by_signal_gives_128_plus_n(run, gcs, sig):
    r = run(head_env(gcs), ["--", PY, "-c", f"import os; os.kill(os.getpid(), {int(sig)})"])
    assert r.wait(30) == 128 + sig, r.stderr


def test_command_not_found_is_127(run, gcs):
    r = run(head_env(gcs), ["--", "no-such-command-anywhere"])
    assert r.wait(30) == 127, r.stderr
    assert "no-such-command-anywhere" in r.stderr


def test_command_not_executable_is_126(run, gcs, tmp_path):
    script = tmp_path / "not-executable.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o644)
    r = run(head_env(gcs), ["--", str(script)])
    assert r.wait(30) == 126, r.stderr


def test_ray_start_gets_the_plan_and_its_env(run, gcs, tmp_path):
    # The command waits for the fake ray to announce itself, or it could be stopped unborn.
    show = ("import os, sys, time\nwhile not os.path.exists(sys.argv[1]): time.sleep(0.02)\n"
            "print(os.environ['RAY_ADDRESS'])")
    r = run(head_env(gcs), ["--", PY, "-c", show, str(tmp_path / "ray.log")])
    started = ray_started(tmp_path)
    assert r.wait(30) == 0, r.stderr
    assert r.stdout.strip() == f"127.0.0.1:{gcs.port}"
    assert started["argv"][1:3] == ["start", "--head"]
    assert f"--port={gcs.port}" in started["argv"] and started["argv"][-1] == "--block"
    assert started["env"]["RAY_CLOUD_INSTANCE_ID"] == "pod-0"
    assert started["env"]["RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S"] == "0"
    assert started["pgid"] == started["pid"], "ray start must lead its own process group"


def test_head_marks_the_job_finished_for_workers(run, gcs):
    r = run(head_env(gcs), ["--", PY, "-c", "import sys; sys.exit(5)"])
    assert r.wait(30) == 5, r.stderr
    assert gcs.kv.get((b"rayboot", b"finished")) == b"5"


FORWARDED = [signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2, signal.SIGWINCH]

RECORDER = """
import signal, sys, time
out = open(sys.argv[1], "a", buffering=1)
for s in %s:
    signal.signal(s, lambda n, f: out.write(str(n) + "\\n"))
out.write("ready\\n")
end = time.monotonic() + 30
while time.monotonic() < end:
    time.sleep(0.02)
"""


def test_signals_are_forwarded_to_the_command(run, gcs, tmp_path):
    record = tmp_path / "signals"
    r = run(head_env(gcs), ["--", PY, "-c", RECORDER % [int(s) for s in FORWARDED], str(record)])
    deadline = time.monotonic() + 20
    while "ready" not in (record.read_text() if record.exists() else ""):
        assert time.monotonic() < deadline and r.proc.poll() is None, r.stderr
        time.sleep(0.05)
    for sig in FORWARDED:
        os.kill(r.proc.pid, sig)
        time.sleep(0.1)
    deadline = time.monotonic() + 5
    while len(record.read_text().split()) < len(FORWARDED) + 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    got = [int(x) for x in record.read_text().split()[1:]]
    assert got == [int(s) for s in FORWARDED], got


def test_sigterm_stops_command_and_ray_and_the_head_exits_with_the_commands_outcome(run, gcs, tmp_path):
    """A head whose command SIGTERM stopped has not done its job: the pod's code is how the
    command ended (here killed by SIGTERM: 143), never the eviction code, so that no controller
    counts the stopped job as finished (Volcano's TaskCompleted, an Indexed Job's index)."""
    log = tmp_path / "termination-log"
    log.write_text("")
    r = run(head_env(gcs, RAYBOOT_TERMINATION_LOG=str(log)), ["--", PY, "-c", "import time; time.sleep(60)"])
    r.wait_for_log("started the command")
    t0 = time.monotonic()
    os.kill(r.proc.pid, signal.SIGTERM)
    assert r.wait(15) == 128 + signal.SIGTERM, r.stderr
    assert time.monotonic() - t0 < 8
    assert log.read_text().startswith("rayboot: SIGTERM: the command was stopped before it finished; "), log.read_text()
    assert re.search(r"; Ray stopped in \d+\.\d\d s \(exit 143\)\n$", log.read_text()), log.read_text()


def sigterm_running_head(r, then=None, timeout=20):
    """Once the head's command runs: calls THEN (if any), SIGTERMs the head, and returns how many
    seconds it took to exit, which must be with the command's 143 (SIGTERM stopped it)."""
    r.wait_for_log("started the command")
    if then:
        then()
    t0 = time.monotonic()
    os.kill(r.proc.pid, signal.SIGTERM)
    assert r.wait(timeout) == 128 + signal.SIGTERM, r.stderr
    return time.monotonic() - t0


def test_the_head_does_not_wait_for_its_node_to_leave(run, gcs):
    """An evicted or deleted head is re-created only once its old pod has ended (Volcano's
    RestartTask, the Job controller), and its cluster's GCS ends with it: nothing can move off its
    node meanwhile. So the head has its node drained (PREEMPTION: the GCS sends it no new work) and
    stops at once, without waiting for the node to leave, which here it never does (the head used
    to wait half its grace period for it: 13.5 s of 30)."""
    gcs.drain_removes_node = False
    r = run(head_env(gcs, RAYBOOT_GRACE_PERIOD="30"), ["--", PY, "-c", "import time; time.sleep(60)"])
    took = sigterm_running_head(r)
    drains = [parse(req) for method, req in gcs.calls if method == DRAIN]
    assert len(drains) == 1 and drains[0][1] == [b"\xaa" * 28] and drains[0][2] == [2], gcs.methods()
    assert took < 2, f"the head waited {took:.1f} s for its node to leave:\n{r.stderr}"
    assert "the head does not wait for it to leave" in r.stderr, r.stderr


def test_the_head_keeps_its_gcs_up_while_its_workers_drain(run, gcs, tmp_path):
    """A whole cluster deleted at once (Kueue's preemption deletes every pod of the Job together):
    the workers drain through the head's GCS while the head itself is told to stop. The head keeps
    its GCS (ray start) up while a worker reports DRAINING and stops as soon as it has left; it
    used to stop at once, and the workers' drains were cut off with the GCS ("stopped without a
    drain"). Here the worker's node takes 2 s to leave."""
    log = tmp_path / "termination-log"
    log.write_text("")
    worker = Node("10.0.0.2", node_id=b"\xbb" * 28, name="worker-0")
    worker.draining = True
    gcs.nodes.append(worker)
    r = run(head_env(gcs, RAYBOOT_GRACE_PERIOD="30", RAYBOOT_TERMINATION_LOG=str(log)),
            ["--", PY, "-c", "import time; time.sleep(60)"])

    def leave():
        time.sleep(2)
        with gcs.lock:
            worker.alive, worker.draining, worker.death = False, False, 3
    took = sigterm_running_head(r, then=lambda: threading.Thread(target=leave, daemon=True).start())
    assert 1.9 < took < 4, f"the head stopped {took:.1f} s after SIGTERM; the worker left after 2 s:\n{r.stderr}"
    assert "the workers' drains are through (1 of 1 workers left, 0 still ALIVE)" in r.stderr, r.stderr
    assert "node drained" in log.read_text(), log.read_text()


def test_the_head_waits_for_a_worker_whose_sigterm_comes_late(run, gcs):
    """A whole cluster deleted at once, one worker's SIGTERM late (the kubelet's skew between pods
    deleted together reached 0.69 s on the loaded node): worker-0 drains at once and leaves at
    0.3 s, worker-1 begins its drain 0.8 s after that. Once one drain was seen the cluster is
    going, and the head waits 1 s past the last change for the rest; it used to wait 0.6 s, and
    stopped its GCS under worker-1's drain (seen under Kueue's preemption of a JobSet)."""
    workers = [Node(f"10.0.0.{i + 2}", node_id=bytes([0xb0 + i]) * 28, name=f"worker-{i}") for i in range(2)]
    gcs.nodes.extend(workers)
    r = run(head_env(gcs, RAYBOOT_GRACE_PERIOD="30"), ["--", PY, "-c", "import time; time.sleep(60)"])

    def cluster_deleted():  # started just before the head's SIGTERM
        t0 = time.monotonic()
        for when, worker, change in ((0.1, 0, "drain"), (0.3, 0, "leave"), (1.1, 1, "drain"), (1.3, 1, "leave")):
            time.sleep(max(0.0, when - (time.monotonic() - t0)))
            with gcs.lock:
                if change == "drain":
                    workers[worker].draining = True
                else:
                    workers[worker].alive, workers[worker].draining, workers[worker].death = False, False, 3
    took = sigterm_running_head(r, then=lambda: threading.Thread(target=cluster_deleted, daemon=True).start())
    assert "the workers' drains are through (2 of 2 workers left, 0 still ALIVE)" in r.stderr, r.stderr
    assert took < 4, f"the head stopped {took:.1f} s after SIGTERM:\n{r.stderr}"


def test_a_head_deleted_alone_does_not_wait_for_its_workers(run, gcs):
    """A head deleted alone (its workers ALIVE, none draining) waits for no drain: it stops once the
    time a whole cluster's deletion gives its first drain (600 ms from SIGTERM) has passed with none."""
    gcs.drain_removes_node = False
    gcs.nodes.append(Node("10.0.0.2", node_id=b"\xbb" * 28, name="worker-0"))
    r = run(head_env(gcs, RAYBOOT_GRACE_PERIOD="30"), ["--", PY, "-c", "import time; time.sleep(60)"])
    took = sigterm_running_head(r)
    assert took < 2, f"the head deleted alone took {took:.1f} s:\n{r.stderr}"
    assert "drains are through" not in r.stderr, r.stderr


# A command that handles SIGTERM itself and exits with the code it is given.
TRAP = ("import signal, sys, time\n"
        "signal.signal(signal.SIGTERM, lambda *_: sys.exit(int(sys.argv[1])))\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n")


@pytest.mark.parametrize("code", [0, 7])
def test_a_head_command_that_handles_sigterm_gives_its_own_code(run, gcs, code):
    """The command's outcome is its own to say: one that handles SIGTERM and exits 7 gives 7, and
    one that exits 0 (its work done) gives 0, whatever RAYBOOT_EVICTION_EXIT_CODE says."""
    r = run(head_env(gcs, RAYBOOT_EVICTION_EXIT_CODE="9"), ["--", PY, "-c", TRAP, str(code)])
    r.wait_for_log("started the command")
    r.wait_for_log("ready", stdout=True)
    os.kill(r.proc.pid, signal.SIGTERM)
    assert r.wait(15) == code, r.stderr


def test_sigterm_before_the_heads_command_ran_is_not_a_success(run, gcs, tmp_path):
    """The head waits for workers that never come; SIGTERM then ends it with 143: a job that
    never ran is no finished job."""
    log = tmp_path / "termination-log"
    log.write_text("")
    r = run(head_env(gcs, RAYBOOT_WORKERS_EXPECTED="2", RAYBOOT_TERMINATION_LOG=str(log)),
            ["--", PY, "-c", "print('the command ran')"])
    deadline = time.monotonic() + 15
    while ALL_NODES not in gcs.methods():  # counting the workers that have joined
        assert time.monotonic() < deadline and r.proc.poll() is None, r.stderr
        time.sleep(0.02)
    os.kill(r.proc.pid, signal.SIGTERM)
    assert r.wait(15) == 128 + signal.SIGTERM, r.stderr
    assert "started the command" not in r.stderr and "the command ran" not in r.stdout
    assert log.read_text().startswith("rayboot: SIGTERM: the command never ran; "), log.read_text()


def test_eviction_exit_code_is_configurable(run, gcs):
    """RAYBOOT_EVICTION_EXIT_CODE is what a graceful SIGTERM gives a pod that runs no command."""
    r = started_worker(run, gcs, RAYBOOT_EVICTION_EXIT_CODE="9")
    os.kill(r.proc.pid, signal.SIGTERM)
    assert r.wait(15) == 9, r.stderr


def test_orphans_are_reaped(run, gcs, tmp_path):
    """The command spawns 1,000 grandchildren whose parents exit at once: they are re-parented
    to rayboot (subreaper), which must reap every one while the command still runs."""
    storm = """
import os, sys, time
for _ in range(1000):
    if os.fork() == 0:
        if os.fork() == 0:
            os._exit(0)
        os._exit(0)
    os.wait()
open(sys.argv[1], "w").write("done")
time.sleep(3)
"""
    marker = tmp_path / "storm"
    r = run(head_env(gcs), ["--", PY, "-c", storm, str(marker)])
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert time.monotonic() < deadline and r.proc.poll() is None, r.stderr
        time.sleep(0.05)
    time.sleep(0.5)
    zombies = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = open(f"/proc/{pid}/stat").read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[0] == "Z" and int(fields[1]) == r.proc.pid:
            zombies.append(pid)
    assert zombies == [], f"{len(zombies)} zombies left under rayboot"
    assert r.wait(30) == 0, r.stderr


def test_inherited_ignored_and_blocked_signals_are_restored(run, gcs):
    # Set by a wrapper that then execs rayboot (dispositions SIG_IGN and the mask survive exec),
    # not by preexec_fn: this process runs the fake GCS's gRPC threads, and code run between
    # fork and exec in a threaded process has aborted in grpc's epoll.
    ignore_and_block = ("import os, signal, sys\n"
                        "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                        "signal.signal(signal.SIGHUP, signal.SIG_IGN)\n"
                        "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})\n"
                        "os.execv(sys.argv[1], sys.argv[1:])\n")
    report = ("import sys\nst = dict(l.split(':', 1) for l in open('/proc/self/status'))\n"
              "print(st['SigIgn'].strip(), st['SigBlk'].strip())")
    r = run(head_env(gcs), ["--", PY, "-c", report], wrap=(PY, "-c", ignore_and_block))
    assert r.wait(30) == 0, r.stderr
    ignored, blocked = (int(x, 16) for x in r.stdout.split())
    for sig in (signal.SIGINT, signal.SIGHUP):
        assert not ignored & (1 << (sig - 1)), f"signal {sig} still ignored in the command"
    assert blocked == 0, f"signals still blocked in the command: {blocked:#x}"


def test_wait_deadline_exits_75_naming_the_address(run, closed_port):
    port = closed_port
    r = run(worker_env(port, RAYBOOT_WAIT_TIMEOUT="1"))
    assert r.wait(15) == 75, r.stderr
    assert f"127.0.0.1:{port}" in r.stderr and "connection refused" in r.stderr


def test_signals_during_a_wait_do_not_start_it_over(run, closed_port):
    """Signals that do not end a wait (here SIGWINCH, read and forwarded to nobody, every 20 ms)
    leave it where it was: one deadline, one attempt count, one first progress line. A wait that
    started over at each signal printed its first progress line again each time and gave up
    "after 0.0 s and 1 attempts"."""
    r = run(worker_env(closed_port, RAYBOOT_WAIT_TIMEOUT="3"))
    r.wait_for_log("waiting for GCS")
    t0 = time.monotonic()
    while r.proc.poll() is None and time.monotonic() - t0 < 15:
        os.kill(r.proc.pid, signal.SIGWINCH)
        time.sleep(0.02)
    assert r.wait(5) == 75, r.stderr
    gave_up = re.search(r"gave up waiting for GCS \S+ after ([\d.]+) s and (\d+) attempts", r.stderr)
    assert gave_up, r.stderr
    # Nothing listens on either port: the poll backs off (50 ms doubling to 1 s), ~9 looks in 3 s.
    assert float(gave_up[1]) >= 2.9 and int(gave_up[2]) >= 5, gave_up[0]
    assert r.stderr.count("waiting for GCS") == 1 + 1, r.stderr  # the first progress line, the last message


def test_sigterm_while_waiting_exits_promptly(run, closed_port):
    r = run(worker_env(closed_port))
    r.wait_for_log("waiting for GCS")
    t0 = time.monotonic()
    os.kill(r.proc.pid, signal.SIGTERM)
    assert r.wait(10) == 0, r.stderr
    assert time.monotonic() - t0 < 1.0


def test_worker_joins_when_head_turns_serving(run, gcs, tmp_path):
    gcs.serving = False
    r = run(worker_env(gcs.port))
    r.wait_for_log("NOT_SERVING")
    gcs.serving = True
    r.wait_for_log("started ray")
    started = ray_started(tmp_path)
    assert f"--address=127.0.0.1:{gcs.port}" in started["argv"]
    assert not any(a.startswith("--head") or a.startswith("--port") for a in started["argv"])


def test_worker_leaves_when_the_head_job_finished(run, gcs):
    r = run(worker_env(gcs.port))
    r.wait_for_log("started ray")
    gcs.kv[(b"rayboot", b"finished")] = b"0"
    assert r.wait(15) == 0, r.stderr
    assert "the head's command finished" in r.stderr


def test_the_finished_keys_bytes_reach_the_termination_message_escaped(run, gcs, tmp_path):
    """Issue 40: the head's GCS `finished` key (anyone with the token can write it) reached
    /dev/termination-log raw, so an ANSI escape and a newline forged a line of kubectl describe's
    (`rayboot: ...` of its own) while the log line was escaped. Now the message is escaped as the
    log is: one line, control bytes as \\xNN. On the old code the file held the raw bytes."""
    log = tmp_path / "termination-log"
    log.write_text("")
    r = run(worker_env(gcs.port, RAYBOOT_TERMINATION_LOG=str(log)))
    r.wait_for_log("started ray")
    gcs.kv[(b"rayboot", b"finished")] = b"0\x1b[2K\rrayboot: forged\nrayboot: all is well"
    assert r.wait(15) == 0, r.stderr
    text = log.read_bytes().decode()  # read_text would turn a \r into \n
    assert text.count("\n") == 1 and text.endswith("\n"), repr(text)
    assert "\x1b" not in text and "\r" not in text, repr(text)
    assert "exit 0\\x1b[2K\\x0drayboot: forged\\x0arayboot: all is well" in text, repr(text)


def test_worker_drains_its_node_on_sigterm(run, gcs, tmp_path):
    r = started_worker(run, gcs, RAYBOOT_POD_NAME="ray-worker-0")
    ray_started(tmp_path)
    os.kill(r.proc.pid, signal.SIGTERM)
    assert r.wait(15) == 0, r.stderr
    drains = [parse(req) for method, req in gcs.calls if method == DRAIN]
    assert len(drains) == 1, gcs.methods()
    assert drains[0][1] == [b"\x42" * 28], "drained the wrong node id"
    assert drains[0][2] == [2], "reason must be PREEMPTION"
    assert b"ray-worker-0" in drains[0][3][0]
    assert "left the cluster" in r.stderr


@pytest.mark.parametrize("version, form", [("2.60.0", "selectors"), ("2.40.0", "filters"), ("2.30.0", "unfiltered"),
                                           ("2.10.0", "unfiltered"), (None, "selectors")],
                         ids=["2.60", "2.40", "2.30", "2.10-oldest", "no-version"])
def test_node_lookups_speak_the_gcs_ray_version(run, gcs, tmp_path, version, form):
    """The GCS's Ray version is read once (CheckAlive) and logged; node lookups use the request
    form that version reads (2.36-2.48: field 3 is a limit, so state_filter = ALIVE there would
    list no node at all), and the drain still finds this pod's node among the others."""
    from fake_gcs import CHECK_ALIVE, Node
    gcs.ray_version = version
    gcs.nodes.append(Node("127.0.0.1", node_id=b"\x42" * 28))
    gcs.nodes.append(Node("10.0.0.9", node_id=b"\x43" * 28))
    r = run(worker_env(gcs.port))
    r.wait_for_log("started ray")
    ray_started(tmp_path)
    os.kill(r.proc.pid, signal.SIGTERM)
    assert r.wait(15) == 0, r.stderr
    assert gcs.methods().count(CHECK_ALIVE) == 1, gcs.methods()
    if version:
        assert f"the GCS at 127.0.0.1 runs Ray {version}" in r.stderr, r.stderr
    else:
        assert "could not read the Ray version of the GCS at 127.0.0.1" in r.stderr, r.stderr
    assert ("older than 2.36: every node lookup pulls the whole node table" in r.stderr) == (form == "unfiltered")
    drains = [parse(req) for method, req in gcs.calls if method == DRAIN]
    assert [d[1] for d in drains] == [[b"\x42" * 28]], gcs.methods()
    looks = [parse(req) for method, req in gcs.calls if method == ALL_NODES]
    assert looks, gcs.methods()
    for look in looks:
        if form == "selectors":
            assert parse(look[2][0]) == {2: [b"127.0.0.1"]} and look[3] in ([0], [1]), look
        elif form == "filters":
            assert 3 not in look and parse(look[4][0])[3] == [b"127.0.0.1"], look
        else:
            assert look == {}, look
    assert "left the cluster" in r.stderr, r.stderr


def test_ray_dying_under_the_command_stops_it(run, gcs):
    r = run(head_env(gcs, FAKE_RAY_MODE="exit:0"), ["--", PY, "-c", "import time; time.sleep(60)"])
    code = r.wait(30)
    assert code != 0, r.stderr
    assert "Ray" in r.stderr


def test_ray_ignoring_sigterm_is_killed_at_the_deadline(run, gcs, tmp_path):
    r = run(head_env(gcs, FAKE_RAY_MODE="ignore-term", RAYBOOT_GRACE_PERIOD="5"),
            ["--", PY, "-c", "import time; time.sleep(60)"])
    took = sigterm_running_head(r, then=lambda: ray_started(tmp_path), timeout=15)
    assert 1.0 < took < 5.0, "SIGKILL must come at grace minus the margin"


def test_prober_outside_its_seccomp_allowlist_is_killed_and_reported(run, closed_port):
    r = run(worker_env(closed_port, RAYBOOT_PROBER_SELFTEST="forbidden-syscall"))
    assert r.wait(10) == 70, r.stderr
    assert "SIGSYS" in r.stderr and "seccomp" in r.stderr


def test_termination_log_says_why_the_pod_ended(run, gcs, tmp_path):
    log = tmp_path / "termination-log"
    log.write_text("")  # the kubelet creates it; rayboot only writes into an existing file
    r = run(head_env(gcs, RAYBOOT_TERMINATION_LOG=str(log)), ["--", PY, "-c", "import sys; sys.exit(4)"])
    assert r.wait(30) == 4, r.stderr
    assert log.read_text() == "rayboot: the command exited with 4 (exit 4)\n"


def test_termination_log_after_a_drained_eviction(run, gcs, tmp_path):
    log = tmp_path / "termination-log"
    log.write_text("")
    r = started_worker(run, gcs, RAYBOOT_TERMINATION_LOG=str(log))
    ray_started(tmp_path)
    os.kill(r.proc.pid, signal.SIGTERM)
    assert r.wait(15) == 0, r.stderr
    # How long ray start took after its SIGTERM: the fake one exits at once.
    said = re.fullmatch(r"rayboot: SIGTERM: node drained; Ray stopped in (\d+\.\d\d) s \(exit 0\)\n", log.read_text())
    assert said and float(said.group(1)) < 0.5, log.read_text()


def test_ray_stuck_after_its_node_was_drained_is_killed_without_the_whole_grace(run, gcs, tmp_path):
    """Ray 2.60's `ray start --block` sometimes never exits on SIGTERM once its drained raylet is
    gone: with the node drained, rayboot kills it after 1 s (5 s before) instead of
    sitting out the grace period (30 s here), and the eviction still ends as a drained one."""
    r = started_worker(run, gcs, FAKE_RAY_MODE="ignore-term", RAYBOOT_GRACE_PERIOD="30")
    ray_started(tmp_path)
    t0 = time.monotonic()
    os.kill(r.proc.pid, signal.SIGTERM)
    assert r.wait(40) == 0, r.stderr
    took = time.monotonic() - t0
    assert "left the cluster" in r.stderr and "although its node was drained: killing it" in r.stderr, r.stderr
    assert "deadline passed" not in r.stderr, r.stderr
    assert 0.8 < took < 3.5, f"took {took:.1f} s: the drained Ray's SIGKILL comes 1 s after its SIGTERM"


# A command that takes 3 s to end after SIGTERM (a driver finishing its last call).
SLOW_TO_END = ("import signal, time\n"
               "signal.signal(signal.SIGTERM, lambda *_: (time.sleep(3), exit(0)))\n"
               "time.sleep(60)\n")


def sigterm_head_until(run, gcs, tmp_path, fake_ray_mode, command, said):
    """A head running COMMAND beside the fake ray in FAKE_RAY_MODE, SIGTERMed once both run: (it,
    seconds from the SIGTERM until its log SAID that)."""
    r = run(head_env(gcs, FAKE_RAY_MODE=fake_ray_mode, RAYBOOT_GRACE_PERIOD="30"), ["--", PY, "-c", command])
    r.wait_for_log("started the command")
    ray_started(tmp_path)
    t0 = time.monotonic()
    os.kill(r.proc.pid, signal.SIGTERM)
    r.wait_for_log(said, timeout=40)
    return r, time.monotonic() - t0


@pytest.mark.parametrize("command, bound", [("import time; time.sleep(60)", 1), (SLOW_TO_END, 2)])
def test_a_drained_heads_stuck_ray_is_killed_after_its_bound(run, gcs, tmp_path, command, bound):
    """An evicted head is re-created only once its pod has ended, and its GCS ends with it: its
    `ray start`, SIGTERMed once the drain is accepted, is killed with its daemons after 1 s when
    the command has ended (as a drained worker's), or 2 s while the command is still ending, for
    its driver to finish before the GCS goes (2 s in every case before; 5 s before that)."""
    r, took = sigterm_head_until(run, gcs, tmp_path, "ignore-term", command, "although its node was drained: killing it")
    assert "deadline passed" not in r.stderr, r.stderr
    # its drain accepted at once, no worker to wait for: the bound, and little more
    assert bound - 0.1 < took < bound + 0.8, f"took {took:.1f} s: the drained Ray is killed {bound} s after its SIGTERM"
    r.wait(40)


@pytest.mark.parametrize("role", ["head", "worker"])
def test_a_drained_rays_rest_is_killed_once_its_node_has_ended(run, gcs, tmp_path, role):
    """Ray 2.60's `ray start`, SIGTERMed, stops its raylet, then the head's GCS, then its agents,
    dashboard and monitors one after another, up to 1 s each: the deleted head's used up its whole
    bound on the real node. Once the raylet and the GCS have ended, what is left has nothing to
    hand over, and rayboot kills it at once: here, instead of 1 s after the SIGTERM."""
    if role == "head":
        r = run(head_env(gcs, FAKE_RAY_MODE="daemons", RAYBOOT_GRACE_PERIOD="30"),
                ["--", PY, "-c", "import time; time.sleep(60)"])
        r.wait_for_log("started the command")
    else:
        r = started_worker(run, gcs, FAKE_RAY_MODE="daemons", RAYBOOT_GRACE_PERIOD="30")
    ray_started(tmp_path)
    t0 = time.monotonic()
    os.kill(r.proc.pid, signal.SIGTERM)
    r.wait(40)
    took = time.monotonic() - t0
    assert "killing what is left of ray start's" in r.stderr, r.stderr
    assert "deadline passed" not in r.stderr and "did not exit in time" not in r.stderr, r.stderr
    assert took < 0.9, f"took {took:.2f} s: the rest of a drained Ray waited for its bound"
    if role == "head":
        # With no worker ALIVE the head keeps its GCS up 0.25 s for a worker that has just drained;
        # the command's SIGCHLD, as it ended on its SIGTERM, cut that short (0.03 s) before.
        assert "keeping the GCS up 0.25 s" in r.stderr and took >= 0.25, f"took {took:.2f} s"


@pytest.mark.parametrize("command, gcs_waited", [("import time; time.sleep(60)", False), (SLOW_TO_END, True)])
def test_a_stopping_heads_gcs_is_waited_for_only_while_its_command_runs(run, gcs, tmp_path, command, gcs_waited):
    """Ray's GCS, SIGTERMed, flushes its events to the dashboard agent before it ends, and that agent
    goes with the raylet: on the node, a deleted GCS FT head's raylet left as soon as it was drained
    and its GCS then used ray start's whole 1 s. Only the command's driver needs the GCS: once the
    command has ended, ray start's group is killed as soon as the raylet has ended, the GCS with it
    (its state is in Redis under fault tolerance, or ends with the pod); while the command is
    still ending, the GCS is waited for (here ray start kills it after its 1 s)."""
    r, took = sigterm_head_until(run, gcs, tmp_path, "daemons-slow-gcs", command, "killing what is left of ray start's")
    assert "deadline passed" not in r.stderr and "did not exit in time" not in r.stderr, r.stderr
    if gcs_waited:
        assert "Ray's raylet and GCS have ended" in r.stderr, r.stderr
        assert took >= 1.2, f"took {took:.2f} s: the GCS was killed before ray start's 1 s for it"
    else:
        assert "Ray's raylet and the command have ended" in r.stderr, r.stderr
        assert took < 0.9, f"took {took:.2f} s: the GCS's own stop was waited for"
    r.wait(40)


# A command that leaves a process of its own behind, in a session of its own (a daemon): once the
# command has ended it is rayboot's child (the subreaper's), out of reach of the command's group.
LEAVES_A_DAEMON = ("import subprocess, time\n"
                   "subprocess.Popen(['sleep', '60'], start_new_session=True)\n"
                   "print('ready', flush=True)\n"
                   "time.sleep(60)\n")


def test_what_ray_and_the_command_leave_is_stopped_within_2_s(run, gcs):
    """Once Ray and the command have ended, what they left (a raylet's orphaned workers, a command's
    daemon) gets SIGTERM and 2 s, then SIGKILL: the pod's work is over. Before, rayboot
    waited for it until the grace period's end (an evicted head's pod held 24 s on the node)."""
    r = run(head_env(gcs, RAYBOOT_GRACE_PERIOD="30"), ["--", PY, "-c", LEAVES_A_DAEMON])
    took = sigterm_running_head(r, then=lambda: r.wait_for_log("ready", stdout=True), timeout=40)
    assert re.search(r"\d+ processes they left get SIGTERM", r.stderr), r.stderr
    assert took < 5, f"took {took:.1f} s: what the command left held the pod\n{r.stderr}"


def test_no_termination_log_file_is_created(run, gcs, tmp_path):
    log = tmp_path / "absent"
    r = run(head_env(gcs, RAYBOOT_TERMINATION_LOG=str(log)), ["--", PY, "-c", "pass"])
    assert r.wait(30) == 0, r.stderr
    assert not log.exists()
