"""How long `rayboot plan` takes for a 10,000-worker Volcano job, against `rayboot --version` (the
cost of starting the static binary at all), alternating A B A B in one run. Prints figures; it
is not a pass/fail test."""
import json
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "fixtures"))
from podgen import volcano_pod  # noqa: E402


def timed(argv, env):
    t0 = time.perf_counter()
    r = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    elapsed = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"{argv} exited {r.returncode}")
    return elapsed * 1000


RUNS = {"full": 50, "quick": 20, "smoke": 3}  # per size


def run(size):
    runs = RUNS[size]
    rayboot = str(REPO / "build" / "bin" / "rayboot")
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        env = volcano_pod(root, "big", "default", {"head": 1, "worker": 10000}, ("worker", 9999), env_lists=False)
        env["RAYBOOT_ROOT"] = str(root)
        plan, start = [], []
        for _ in range(runs):
            plan.append(timed([rayboot, "plan"], env))
            start.append(timed([rayboot, "--version"], env))
    result = {
        "plan_10000_hosts_ms_p50": round(statistics.median(plan), 3),
        "exec_only_ms_p50": round(statistics.median(start), 3),
    }
    result["planning_ms_p50"] = round(result["plan_10000_hosts_ms_p50"] - result["exec_only_ms_p50"], 3)
    result["runs"] = runs
    return {"plan": result}


def main():
    result = run("full")["plan"]
    print(json.dumps(result))
    print(f"rayboot plan, 10,000 workers: {result['plan_10000_hosts_ms_p50']} ms median over {result['runs']} runs, "
          f"of which exec and start-up {result['exec_only_ms_p50']} ms: planning itself {result['planning_ms_p50']} ms")


if __name__ == "__main__":
    main()
