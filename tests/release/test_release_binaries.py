"""The release binaries are what users copy into any image: fully static, stripped, small,
hardened where a static musl binary can be. These read the ELF headers with readelf."""
import subprocess

import pytest

# The sidecar carries TLS (mbedTLS) for the Kubernetes API and an HTTP server.
MAX_BYTES = {"rayboot": 1024 * 1024, "rayboot-sidecar": 1536 * 1024}


def readelf(*args):
    return subprocess.run(["readelf", "-W", *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture(params=["rayboot", "rayboot-sidecar"])
def binary(request, rayboot_bin, sidecar_bin):
    return {"rayboot": rayboot_bin, "rayboot-sidecar": sidecar_bin}[request.param]


def test_static_no_interpreter_no_dynamic_section(binary):
    headers = readelf("-l", str(binary))
    assert "INTERP" not in headers, f"{binary} asks for a dynamic loader"
    assert "DYNAMIC" not in headers, f"{binary} has a dynamic section"


def test_stripped(binary):
    sections = readelf("-S", str(binary))
    assert ".symtab" not in sections and ".debug_info" not in sections, f"{binary} is not stripped"


def test_relro_and_non_executable_stack(binary):
    headers = readelf("-l", str(binary))
    assert "GNU_RELRO" in headers, f"{binary} has no RELRO segment"
    stack = [line for line in headers.splitlines() if "GNU_STACK" in line]
    assert stack and "RWE" not in stack[0], f"{binary} has an executable stack: {stack}"


def test_size_under_limit(binary):
    size = binary.stat().st_size
    assert size < MAX_BYTES[binary.name], f"{binary} is {size} bytes"


def test_version_names_linked_libraries(binary):
    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=5)
    assert out.returncode == 0
    for lib in ("libcurl", "c-ares", "nghttp2", "libseccomp", "cJSON"):
        assert lib in out.stdout, out.stdout


def test_runs_with_empty_environment(binary):
    """No libc, no loader, no env: it must still start (it runs FROM scratch)."""
    out = subprocess.run([str(binary), "--help"], env={}, capture_output=True, text=True, timeout=5)
    assert out.returncode == 0 and "Usage" in out.stdout
