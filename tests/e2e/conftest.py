"""Fixtures for end-to-end tests: a simulated cluster (tests/e2e/podsim.py) that is always torn
down, and checked to have left nothing behind."""
import pathlib
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
import podsim  # noqa: E402

VENV = pathlib.Path(sys.executable).resolve().parent.parent if (pathlib.Path(sys.prefix) / "bin" / "ray").exists() \
    else REPO / "build" / "venv"


@pytest.fixture
def cluster(tmp_path, rayboot_bin, sidecar_bin):
    venv = pathlib.Path(sys.prefix)
    if not (venv / "bin" / "ray").exists():
        pytest.fail(f"no ray in {venv}: run the tests with build/venv/bin/python (make test does)")
    try:
        c = podsim.Cluster(tmp_path / "cluster", venv, {
            "rayboot": rayboot_bin, "rayboot-sidecar": sidecar_bin,
            "ray": venv / "bin" / "ray", "python": venv / "bin" / "python",
        })
    except podsim.SimulatorUnavailable as e:
        pytest.fail(str(e))
    try:
        yield c
    finally:
        c.close()
        left = c.leftovers()
        assert not left, f"the simulated cluster left {left}"
