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


def pytest_collection_modifyitems(config, items):
    """The real-node tier runs last: the fast tiers fail first, and the node's start-up (and
    its images' weight on the machine) comes after them."""
    node_dir = REPO / "tests" / "node"
    items.sort(key=lambda item: pathlib.Path(str(item.fspath)).is_relative_to(node_dir))
