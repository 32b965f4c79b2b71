"""bench/startup.py's premise, in seconds rather than a benchmark's minutes: rayboot, a worker
whose head's GCS serves, run as the benchmark runs it (startup.standin_env: the `ray` stand-in of
bench/tools/stamp.c), execs `ray` once, keeps it, and ends on SIGTERM within its grace period.
When rayboot came to start a `ray` that returned at once again (three times, seconds apart), the
benchmark, which counted on one exec, exited 1 at its first run; this fails the same way."""
import os
import pathlib
import signal
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests" / "contract"))
import common  # noqa: E402
import startup  # noqa: E402
from fake_gcs import FakeGcs  # noqa: E402

RESTART_DELAY_S = 1.5  # rayboot starts a `ray` that returned again after 1 s: wait past that


def test_rayboot_execs_the_benchmarks_ray_once_and_stops(rayboot_bin, tmp_path):
    stamp = tmp_path / "stamp"
    subprocess.run(["gcc", "-std=c11", "-O2", "-o", stamp, REPO / "bench" / "tools" / "stamp.c"], check=True)
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    (root / "etc" / "hosts").write_text("127.0.0.1\tlocalhost\n127.0.0.1\tpod-0\n")
    (root / "etc" / "resolv.conf").write_text("nameserver 127.0.0.1\n")
    stamps = tmp_path / "stamps"
    gcs = FakeGcs()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOSTNAME": "pod-1", "RAYBOOT_ROOT": str(root),
           "RAYBOOT_ROLE": "worker", "RAYBOOT_HEAD_ADDRESS": f"127.0.0.1:{gcs.port}",
           "RAYBOOT_POD_IP": "127.0.0.1", "RAYBOOT_RENDEZVOUS_PORT": "0",
           **startup.standin_env(stamps, stamp)}
    proc = subprocess.Popen([rayboot_bin], env=env, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 15
        while not common.read_stamps(stamps) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(RESTART_DELAY_S)
        assert proc.poll() is None, proc.stderr.read()
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=int(env["RAYBOOT_GRACE_PERIOD"]) + 5)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        gcs.stop()
    log = proc.stderr.read()
    assert len(common.read_stamps(stamps)) == 1, log
    assert code == 0, log
