"""Ray node labels in the plan: rayboot's own (rayboot.io/...) and RAYBOOT_RAY_LABELS, checked
exactly as Ray 2.60 checks `ray start --labels` (its label_utils is the oracle), and passed only to
a Ray that takes them (2.49+), its version read from the package metadata under the pod's root."""
import json
import pathlib
import random
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "fixtures"))
from podgen import volcano_pod  # noqa: E402

PLAN_TIMEOUT_S = 10  # a plan takes milliseconds; this only turns a hang into a failure
RAY = "/venv/bin/ray"  # where the faked Ray is installed under the pod's root


def fake_ray(root: pathlib.Path, version: str):
    """A venv at /venv under root with ray VERSION's metadata, as pip installs it."""
    exe = root / RAY.lstrip("/")
    exe.parent.mkdir(parents=True, exist_ok=True)
    exe.write_text("#!/venv/bin/python\n")
    exe.chmod(0o755)
    meta = root / f"venv/lib/python3.11/site-packages/ray-{version}.dist-info/METADATA"
    meta.parent.mkdir(parents=True, exist_ok=True)
    meta.write_text(f"Metadata-Version: 2.4\nName: ray\nVersion: {version}\n\nlong description\n")


@pytest.fixture
def pod(tmp_path):
    """Volcano job rc, task worker, index 1, with Ray 2.60 installed at /venv under its root."""
    root = tmp_path / "root"
    env = volcano_pod(root, "rc", "ml", {"head": 1, "worker": 2}, ("worker", 1))
    fake_ray(root, "2.60.0")
    return root, dict(env, RAYBOOT_ROOT=str(root), PATH="/usr/bin:/venv/bin")


def plan(env, fmt="json"):
    r = subprocess.run([str(BIN), "plan", f"--format={fmt}"], env=env, capture_output=True, text=True,
                       timeout=PLAN_TIMEOUT_S)
    if fmt != "json":
        return r.returncode, r.stdout, r.stderr
    return r.returncode, (json.loads(r.stdout) if r.returncode == 0 else None), r.stderr


@pytest.fixture(autouse=True)
def _bin(rayboot_bin):
    global BIN
    BIN = rayboot_bin


def flag(p):
    found = [a for a in p["ray_start"] if a.startswith("--labels")]
    return found[0] if found else None


def test_volcano_worker_labels_passed_to_ray_260(pod):
    root, env = pod
    rc, p, err = plan(env)
    assert rc == 0, err
    want = ("rayboot.io/platform=volcano,rayboot.io/role=worker,rayboot.io/job=rc,rayboot.io/task=worker,"
            "rayboot.io/index=1,rayboot.io/pod=rc-worker-1")
    assert flag(p) == f"--labels={want}"
    assert p["ray_start"][-1] == "--block"
    labels = p["node_labels"]
    assert labels["passed"] is True and labels["ray_version"] == "2.60.0"
    assert labels["ray_version_from"] == "/venv/lib/python3.11/site-packages/ray-2.60.0.dist-info/METADATA"
    assert labels["labels"]["rayboot.io/task"] == "worker" and p["warnings"] == []
    rc, text, _ = plan(env, "text")
    assert "node labels:      rayboot.io/platform=volcano" in text and "ray version:      2.60.0 (from /venv/" in text


def test_user_labels_merged_theirs_win(pod):
    _, env = pod
    rc, p, err = plan(dict(env, RAYBOOT_RAY_LABELS=' "zone=z1, rayboot.io/pod=mine,gpu=" '.strip()))
    assert rc == 0, err
    assert flag(p).endswith("rayboot.io/index=1,rayboot.io/pod=mine,zone=z1,gpu=")
    assert p["node_labels"]["notes"] == ["RAYBOOT_RAY_LABELS: rayboot.io/pod=mine replaces rayboot's "
                                         "rayboot.io/pod=rc-worker-1"]


@pytest.mark.parametrize("version", ["2.48.0", "2.10.0", None])  # 2.10: the oldest promised
def test_old_or_unknown_ray_gets_no_labels(pod, version):
    """2.48 (and 2.10, the oldest promised) takes no --labels; a Ray whose metadata cannot be
    found is of unknown version: no flag, a note saying why, and a warning only when the user
    gave labels (still checked: exit 2)."""
    root, env = pod
    if version:
        (root / "venv/lib/python3.11/site-packages/ray-2.60.0.dist-info").rename(
            root / f"venv/lib/python3.11/site-packages/ray-{version}.dist-info")
        meta = root / f"venv/lib/python3.11/site-packages/ray-{version}.dist-info/METADATA"
        meta.write_text(meta.read_text().replace("2.60.0", version))
        why = (f"Ray {version} (/venv/lib/python3.11/site-packages/ray-{version}.dist-info/METADATA) takes no "
               "--labels (2.49 and later do)")
    else:
        env["RAYBOOT_RAY"] = "/elsewhere/ray"
        why = "the version of Ray is unknown (no executable /elsewhere/ray)"
    rc, p, err = plan(env)
    assert rc == 0, err
    assert flag(p) is None and p["node_labels"]["passed"] is False and p["warnings"] == []
    assert p["node_labels"]["notes"] == [f"node labels not passed to ray start: {why}"]
    rc, p, err = plan(dict(env, RAYBOOT_RAY_LABELS="zone=z1"))
    assert rc == 0 and flag(p) is None, err
    assert p["warnings"] == [f"RAYBOOT_RAY_LABELS is not passed to ray start: {why}"]
    rc, _, err = plan(dict(env, RAYBOOT_RAY_LABELS="zone=z1,-bad=1"))
    assert rc == 2 and "RAYBOOT_RAY_LABELS: label key '-bad'" in err


def test_user_labels_flag_in_start_args_wins(pod):
    _, env = pod
    rc, p, err = plan(dict(env, RAYBOOT_RAY_START_ARGS="--labels=a=b", RAYBOOT_RAY_LABELS="zone=z1"))
    assert rc == 0, err
    assert flag(p) == "--labels=a=b"
    assert "RAYBOOT_RAY_START_ARGS gives --labels" in p["warnings"][0]


def candidates(seed=29, n=160):
    """Label strings near the edges of Ray's rules: prefixes, dots, dashes, lengths, separators."""
    rng = random.Random(seed)
    parts = ["a", "Z9", "-", "_", ".", "..", "/", "x" * 62, "x" * 63, "ray.io", "rayboot.io", "@", " ", "=", ","]
    out = ["a=b", "rayboot.io/x=y", "ray.io/market-type=spot", "/k=v", "k/=v", "a..b/c=d", "k=" + "v" * 64,
           "p" * 253 + "/k=v", ".a/k=v", "k=-v", "k= v ", " k =v", "k=v,", ",k=v", "k", "k==v", '"k=v"', "k=v\t"]
    for _ in range(n):
        key = "".join(rng.choice(parts) for _ in range(rng.randint(1, 4)))
        value = "".join(rng.choice(parts[:9]) for _ in range(rng.randint(0, 2)))
        out.append(f"{key}={value}")
    # Near-valid ones too, so that about half are taken: alphanumeric ends around any middle.
    for _ in range(n):
        prefix = rng.choice(["", "a.b/", "x-y.z/", ".q/", "a-/", "k8s.io/", "a..b/", "-a/"])
        middle = "".join(rng.choice(parts[:5]) for _ in range(rng.randint(0, 3)))
        out.append(f"{prefix}k{middle}9={rng.choice(['', 'v', 'v-1.x', '-v', 'v' * 63, 'v' * 64])}")
    return out


def test_syntax_is_rays_own(pod):
    """Every candidate: accepted by rayboot (exit 0, in --labels) exactly when Ray 2.60's
    parse_node_labels_string takes it, refused with exit 2 naming RAYBOOT_RAY_LABELS otherwise."""
    label_utils = pytest.importorskip("ray._private.label_utils")
    _, env = pod
    wrong = []
    for text in candidates():
        try:
            rays = label_utils.parse_node_labels_string(text)
        except ValueError:
            rays = None
        rc, p, err = plan(dict(env, RAYBOOT_RAY_LABELS=text))
        if rays is None and (rc != 2 or "RAYBOOT_RAY_LABELS" not in err):
            wrong.append((text, "Ray refuses it", rc, err))
        elif rays is not None and (rc != 0 or not all(f"{k}={v}" in flag(p) for k, v in rays.items())):
            wrong.append((text, f"Ray takes it as {rays}", rc, err))
    assert not wrong, wrong[:5]
