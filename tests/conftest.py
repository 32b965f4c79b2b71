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
