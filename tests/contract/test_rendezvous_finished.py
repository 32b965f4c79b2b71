"""The rendezvous' second message (issue 20): the head writes FINISHED to every connection it holds
when its command ends, and a joined worker, which holds one through a small confined watch child
(init/rdvwatch.c) instead of reading the "finished" key every 2 s, leaves at once. Without a
rendezvous, or when the watch is lost, the worker looks at its head and reads the key as before.
Real processes: two rayboots (head and worker), fake GCSes, fake ray; the head's command ends when
the test touches a file."""
import os
import re
import signal
import socket
import sys
import time

import pytest

from fake_gcs import Node
from fake_rdv import FakeRendezvous
from procs import free_port, log_ts, rendezvous_pid

SERVING = b"RAYBOOT-RDV/1 SERVING\n"
FINISHED = b"RAYBOOT-RDV/1 FINISHED\n"
# How soon after the head's command a watching worker has decided to leave (it was 2 ms).
LEAVE_BOUND_S = 1.0


def head(run, gcs, rdv_port, done_file, **extra):
    """A head whose command runs until done_file exists."""
    env = {"RAYBOOT_ROLE": "head", "RAYBOOT_PLUGIN_ARGS": f"--port={gcs.port}",
           "RAYBOOT_RENDEZVOUS_PORT": str(rdv_port)}
    env.update(extra)
    script = f"import os, time\nwhile not os.path.exists({str(done_file)!r}): time.sleep(0.01)\n"
    return run(env, ["--log-format=json", "--", sys.executable, "-c", script])


def worker(run, gcs_port, rdv_port, **extra):
    return run({"RAYBOOT_ROLE": "worker", "RAYBOOT_HEAD_ADDRESS": f"127.0.0.1:{gcs_port}",
                "RAYBOOT_POD_IP": "127.0.0.1", "RAYBOOT_RENDEZVOUS_PORT": str(rdv_port), **extra},
               ["--log-format=json"])


def watch_pid(w) -> int:
    w.wait_for_log("watching the head's rendezvous")
    return int(re.search(r"watching the head's rendezvous at \S+ port \d+ \(pid (\d+)\)", w.stderr)[1])


def test_a_watching_worker_leaves_the_moment_the_head_finishes(run, gcs, gcs2, tmp_path):
    """With Ray's token: the worker's watch is confined, holds nothing but its socket, makes no GCS
    call (nor does the worker: its looks are every 15 s while it watches), and the worker decides
    to leave within milliseconds of the head's command, through the rendezvous (the head's tag over
    the watch's nonce and the cluster's id), not the key (its own GCS, gcs2, never has the key)."""
    rdv, done = free_port(), tmp_path / "done"
    gcs.token = gcs2.token = "right"
    h = head(run, gcs, rdv, done, RAY_AUTH_TOKEN="right")
    h.wait_for_log("is SERVING")
    w = worker(run, gcs2.port, rdv, RAY_AUTH_TOKEN="right")
    w.wait_for_log("started ray")
    pid = watch_pid(w)
    for _ in range(100):  # logged at its fork: it connects, then confines itself
        status = open(f"/proc/{pid}/status").read()
        if re.search(r"^Seccomp:\s+2$", status, re.M):
            break
        time.sleep(0.02)
    assert re.search(r"^Seccomp:\s+2$", status, re.M), status
    assert re.search(r"^NoNewPrivs:\s+1$", status, re.M), status
    fds = {int(fd): os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
    assert [t for fd, t in fds.items() if fd > 2 and not t.startswith("socket:")] == [], fds
    assert len([fd for fd in fds if fd > 2]) == 1, fds
    before = len(gcs2.methods())
    time.sleep(5.0)
    calls = gcs2.methods()[before:]
    assert calls == [], f"GCS calls while the watch was held: {calls}"
    done.touch()
    assert h.wait(15) == 0, h.stderr
    assert w.wait(15) == 0, w.stderr
    left = log_ts(w.stderr, "the head's command finished (told by its rendezvous)") - \
        log_ts(h.stderr, "the command exited")
    print(f"the worker decided to leave {left * 1000:.1f} ms after the head's command exited; "
          f"GCS calls in 5 s of watching: {len(calls)}")
    assert left < LEAVE_BOUND_S, f"the worker left {left:.3f} s after the head's command"
    assert "SIGSYS" not in w.stderr and "the watch on the head's rendezvous ended" not in w.stderr, w.stderr


def test_without_a_token_finished_is_confirmed_by_the_key(run, gcs, tmp_path):
    """Without a token the head writes the "finished" key before FINISHED, and the worker leaves
    on FINISHED once its own read of the key confirms it: still within a second of the command."""
    rdv, done = free_port(), tmp_path / "done"
    h = head(run, gcs, rdv, done)
    h.wait_for_log("is SERVING")
    w = worker(run, gcs.port, rdv)
    w.wait_for_log("started ray")
    watch_pid(w)
    time.sleep(0.3)  # connected (the watch's hello needs nothing more)
    done.touch()
    assert h.wait(15) == 0, h.stderr
    assert w.wait(15) == 0, w.stderr
    assert "the rendezvous' FINISHED is confirmed by the head's GCS" in w.stderr, w.stderr
    left = log_ts(w.stderr, "the head's command finished (told by its rendezvous)") - \
        log_ts(h.stderr, "the command exited")
    assert left < LEAVE_BOUND_S, f"the worker left {left:.3f} s after the head's command"


@pytest.mark.parametrize("token", [None, "right"], ids=["no-token", "token"])
def test_a_strangers_finished_is_ignored(run, gcs, tmp_path, token):
    """Issue 28: a process on the head's rendezvous port wrote FINISHED, and a joined worker
    stopped Ray and exited 0 in 0.12 s while the job ran. Now without a token the worker finds no
    "finished" key in its head's GCS and ignores it; with one the stranger's FINISHED has no tag of
    the head's (it tags with another token) and ends only the watch. The worker keeps Ray running.
    On the old code the worker exited 0 at once (the lines below never came)."""
    stranger = FakeRendezvous(speak=True, finished=True, token="stolen" if token else None)
    auth = {"RAY_AUTH_TOKEN": token} if token else {}
    try:
        w = worker(run, gcs.port, stranger.port, **auth)
        w.wait_for_log("started ray")
        watch_pid(w)
        if token:
            w.wait_for_log("the watch on the head's rendezvous ended: it sent something other than")
        else:
            w.wait_for_log("not the head's word, ignored")
        time.sleep(0.5)  # what it does next: keep Ray (a stop would follow at once)
        assert w.proc.poll() is None, w.stderr
        assert "the head's command finished" not in w.stderr and "stopping Ray" not in w.stderr, w.stderr
    finally:
        stranger.close()


def test_rendezvous_off_the_worker_leaves_through_the_key(run, gcs, tmp_path):
    """RAYBOOT_RENDEZVOUS_PORT=0: no watch; the worker reads the "finished" key, as before."""
    done = tmp_path / "done"
    h = head(run, gcs, 0, done)
    h.wait_for_log("is SERVING")
    w = worker(run, gcs.port, 0)
    w.wait_for_log("started ray")
    time.sleep(0.5)
    done.touch()
    assert w.wait(15) == 0, w.stderr
    assert "the head's command finished (exit 0)" in w.stderr, w.stderr
    assert "rendezvous" not in w.stderr, w.stderr


def test_a_lost_watch_sends_the_worker_back_to_looking(run, gcs, gcs2, tmp_path):
    """The head's rendezvous child killed: the worker's watch sees the connection close without
    FINISHED, the worker looks at its head at once, then every 2 s, and leaves on the key."""
    rdv, done = free_port(), tmp_path / "done"
    h = head(run, gcs, rdv, done)
    child = rendezvous_pid(h)
    h.wait_for_log("is SERVING")
    w = worker(run, gcs2.port, rdv)
    w.wait_for_log("started ray")
    watch_pid(w)
    time.sleep(0.3)
    before = len(gcs2.methods())
    os.kill(child, signal.SIGKILL)
    w.wait_for_log("the watch on the head's rendezvous ended: the head closed it without FINISHED")
    time.sleep(0.5)
    assert len(gcs2.methods()) > before, "the worker did not look at its head at once"
    t0 = time.monotonic()
    gcs2.kv[(b"rayboot", b"finished")] = b"0"
    assert w.wait(15) == 0, w.stderr
    took = time.monotonic() - t0
    print(f"after the watch was lost, the worker read the key in {took:.2f} s")
    assert took < 3.0, w.stderr
    assert "the head's command finished (exit 0)" in w.stderr, w.stderr


def test_the_wire_serving_then_nothing_then_finished_then_close(run, gcs, tmp_path):
    rdv, done = free_port(), tmp_path / "done"
    gcs.serving = False
    h = head(run, gcs, rdv, done)
    rendezvous_pid(h)
    s = socket.create_connection(("127.0.0.1", rdv), timeout=5)
    gcs.serving = True
    assert s.recv(100) == SERVING
    s.settimeout(1.0)
    with pytest.raises(TimeoutError):
        s.recv(100)
    s.settimeout(10)
    done.touch()
    assert s.recv(100) == FINISHED
    assert s.recv(100) == b""
    s.close()
    assert h.wait(15) == 0, h.stderr


def test_a_connection_after_the_job_ended_gets_both_lines_and_is_closed(run, gcs, tmp_path):
    """The head lingers (a worker is still ALIVE in its GCS): a watch that connects then is told
    SERVING and FINISHED at once and closed."""
    rdv, done = free_port(), tmp_path / "done"
    gcs.nodes.append(Node("127.0.0.9", name="straggler", node_id=b"\x09" * 28))
    h = head(run, gcs, rdv, done)
    h.wait_for_log("is SERVING")
    done.touch()
    h.wait_for_log("waiting for the workers to leave")
    s = socket.create_connection(("127.0.0.1", rdv), timeout=5)
    got = b""
    while True:
        chunk = s.recv(100)
        if not chunk:
            break
        got += chunk
    assert got == SERVING + FINISHED
    s.close()
