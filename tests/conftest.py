"""Shared pytest settings: where the built binaries are."""
import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
BIN = pathlib.Path(os.environ.get("RAYBOOT_BIN_DIR", REPO / "build" / "bin"))


@pytest.fixture(scope="session")
def rayboot_bin() -> pathlib.Path:
    path = BIN / "rayboot"
    if not path.exists():
        pytest.fail(f"{path} is missing: run `make` first")
    return path


@pytest.fixture(scope="session")
def sidecar_bin() -> pathlib.Path:
    path = BIN / "rayboot-sidecar"
    if not path.exists():
        pytest.fail(f"{path} is missing: run `make` first")
    return path


def pytest_configure(config):
    config.addinivalue_line("markers", "ray_oldest: also run against the oldest Ray the docs promise "
                            "(make e2e-oldest: build/venv-oldest, tests/e2e/requirements-oldest.txt)")
    config.addinivalue_line("markers", "node: needs what `make node` builds (every test in tests/node/ "
                            "has it); `make test` runs `-m 'not node'` while the node builds, then `-m node`")


def pytest_collection_modifyitems(config, items):
    """The real-node tier runs last: the fast tiers fail first, and the node's start-up (and
    its images' weight on the machine) comes after them. Its tests carry the `node` mark."""
    node_dir = REPO / "tests" / "node"
    for item in items:
        if pathlib.Path(str(item.fspath)).is_relative_to(node_dir):
            item.add_marker(pytest.mark.node)
    items.sort(key=lambda item: item.get_closest_marker("node") is not None)


_TIER_SECONDS = {}


def pytest_runtest_logreport(report):
    """Adds each test's setup, call and teardown time to its tier (the directory under tests/)."""
    parts = report.nodeid.split("::", 1)[0].split("/")
    tier = parts[1] if parts[0] == "tests" and len(parts) > 2 else parts[0]
    _TIER_SECONDS[tier] = _TIER_SECONDS.get(tier, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter):
    """How long each tier took, before pytest's own summary line (which stays the last): where a
    slower suite went, without reading every test's time."""
    if _TIER_SECONDS:
        terminalreporter.write_line("time per tier: " + ", ".join(
            f"{tier} {seconds:.0f} s" for tier, seconds in sorted(_TIER_SECONDS.items(), key=lambda kv: -kv[1])))
