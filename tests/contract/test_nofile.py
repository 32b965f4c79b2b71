"""The open files limit Ray is started with (issue 29): rayboot raises a container runtime's soft
RLIMIT_NOFILE of 1,024 (containerd 2.x) to 65,536 as KubeRay's `ulimit -n 65536` does, caps it at
the hard limit with a warning naming it, never lowers it, and RAYBOOT_NOFILE changes or keeps it.
The soft and hard limits are set with prlimit(1) around rayboot, as the runtime would set them;
the hard limit is this machine's (raising it needs CAP_SYS_RESOURCE, which a container may lack:
then 65,536 becomes the hard limit, with the warning)."""
import json
import resource
import subprocess

import pytest

from test_pid1 import head_env, ray_started

HARD = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
if HARD == resource.RLIM_INFINITY:
    HARD = 1048576  # prlimit takes a number; a kernel's default fs.nr_open
# What 65,536 becomes here.
RAISED = min(65536, HARD)


def started_with(run, gcs, tmp_path, soft, hard, **extra):
    """rayboot as a head under a soft/hard RLIMIT_NOFILE; returns the fake ray's [soft, hard] and rayboot."""
    r = run(head_env(gcs, **extra), wrap=["prlimit", f"--nofile={soft}:{hard}", "--"])
    return ray_started(tmp_path)["nofile"], r


def test_a_soft_limit_of_1024_is_raised_to_65536(run, gcs, tmp_path):
    nofile, r = started_with(run, gcs, tmp_path, 1024, HARD)
    assert nofile == [RAISED, HARD], r.stderr
    assert f"open files: soft limit raised to {RAISED}" in r.stderr


def test_a_lower_hard_limit_caps_it_with_a_warning_naming_it(run, gcs, tmp_path):
    nofile, r = started_with(run, gcs, tmp_path, 1024, 8000)
    assert nofile == [8000, 8000], r.stderr
    assert "the hard limit is 8000, below RAYBOOT_NOFILE's 65536" in r.stderr, r.stderr


def test_a_higher_soft_limit_is_never_lowered(run, gcs, tmp_path):
    nofile, r = started_with(run, gcs, tmp_path, HARD, HARD, RAYBOOT_NOFILE="2048")
    assert nofile == [HARD, HARD], r.stderr


@pytest.mark.parametrize("value,soft", [("keep", 1024), ("0", 1024), ("4096", 4096), ("1073741816", HARD)])
def test_rayboot_nofile_sets_or_keeps_it(run, gcs, tmp_path, value, soft):
    nofile, r = started_with(run, gcs, tmp_path, 1024, HARD, RAYBOOT_NOFILE=value)
    assert nofile == [soft, HARD], r.stderr


@pytest.mark.parametrize("value", ["lots", "-1", "65536k", "1073741817"])
def test_a_bad_value_exits_2_naming_the_variable(run, gcs, tmp_path, value):
    r = run(head_env(gcs, RAYBOOT_NOFILE=value))
    assert r.wait(15) == 2, r.stderr
    assert f"RAYBOOT_NOFILE={value}" in r.stderr
    assert not (tmp_path / "ray.log").exists(), "Ray was started"


def plan(rayboot_bin, pod_root, fmt, **extra):
    env = {"PATH": "/usr/bin:/bin", "HOSTNAME": "pod-0", "RAYBOOT_ROOT": str(pod_root), "RAYBOOT_ROLE": "head"}
    env.update(extra)
    return subprocess.run([str(rayboot_bin), "plan", f"--format={fmt}"], env=env, capture_output=True, text=True,
                          timeout=10)


def test_plan_shows_the_limit_and_refuses_a_bad_one(rayboot_bin, pod_root):
    assert json.loads(plan(rayboot_bin, pod_root, "json").stdout)["nofile"] == 65536
    assert json.loads(plan(rayboot_bin, pod_root, "json", RAYBOOT_NOFILE="keep").stdout)["nofile"] == 0
    text = plan(rayboot_bin, pod_root, "text").stdout
    assert "open files:       soft limit raised to 65536" in text, text
    assert "kept as it is" in plan(rayboot_bin, pod_root, "text", RAYBOOT_NOFILE="keep").stdout
    bad = plan(rayboot_bin, pod_root, "text", RAYBOOT_NOFILE="many")
    assert bad.returncode == 2 and "RAYBOOT_NOFILE=many" in bad.stderr, bad.stderr
