"""The benchmarks' join clock (bench/tools/gcs_watch.py and bench/common.py) must give a window
that really holds the instant a GCS began to serve, and must refuse a join before it: a latency
that cannot be true fails the benchmark instead of going into its median."""
import pathlib
import socket
import subprocess
import sys
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(REPO / "bench"))
import common  # noqa: E402

PYTHON = REPO / "build" / "venv" / "bin" / "python"
TOOLS = REPO / "bench" / "tools"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_watch_window_holds_the_instant_serving_began(tmp_path):
    """A grpcio health server that binds after 1.5 s stamps its own window (before the bind,
    after the start); the watcher's window, found only by looking, must overlap it and be narrow."""
    port = free_port()
    served, watched = tmp_path / "served", tmp_path / "watched"
    watcher = subprocess.Popen([str(PYTHON), str(TOOLS / "gcs_watch.py"), f"127.0.0.1:{port}", str(watched), "30"],
                               stdout=subprocess.PIPE, text=True)
    server = None
    try:
        assert watcher.stdout.readline().strip() == "watching"
        server = subprocess.Popen([str(PYTHON), str(TOOLS / "standin_gcs.py"), str(port), "1.5", str(served)])
        assert watcher.wait(timeout=30) == 0
        deadline = time.monotonic() + 10
        while not (served.exists() and served.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.05)
        s_before, s_after = common.read_serving_window(served)
        w_before, w_after = common.read_serving_window(watched)
        # The server cannot have served before its bind, and was serving once started.
        assert w_before <= s_after and w_after >= s_before, (s_before, s_after, w_before, w_after)
        assert (w_after - w_before) / 1e6 < 500, f"window {(w_after - w_before) / 1e6:.1f} ms"
    finally:
        for p in (server, watcher):
            if p and p.poll() is None:
                p.kill()
                p.wait()


def test_a_join_before_the_window_fails_the_measurement():
    window = (1_000_000_000, 1_002_000_000)
    low, high = common.join_latencies_ms([1_003_000_000, 1_001_000_000], window, "t")
    assert low == [1.0, -1.0] and high == [3.0, 1.0]
    with pytest.raises(common.MeasurementError, match="before the GCS could have been serving"):
        common.join_latencies_ms([1_003_000_000, 999_000_000], window, "t")


def test_a_window_that_ends_before_it_begins_is_refused(tmp_path):
    path = tmp_path / "w"
    path.write_text("2000 1000 3\n")
    with pytest.raises(common.MeasurementError, match="ends before it begins"):
        common.read_serving_window(path)
