"""`make bench-node`: rayboot against the real KubeRay operator (tests/node/pins.env) on the real node
(tests/node/), side by side in one run, contenders alternating round by round. Brings the node
up, runs the comparisons, takes the node down; writes bench/results/node.json and prints a table.
Figures, not pass/fail, except that an impossible figure (a negative interval, a node ALIVE
before its GCS answered) fails the run.

usage: bench_node.py [--quick] [--only NAME[,NAME...]] [--rounds N]
  --quick   2 rounds instead of 5
  --only    some comparisons (apply,waiting,evict,headlost,headlost_ft); the others keep the previous node.json's
  --rounds  this many rounds of each (to try it out)"""
import argparse
import datetime
import json
import sys
import time

import nodecommon
from nodecommon import MeasurementError, log

RESULTS = nodecommon.REPO / "bench" / "results" / "node.json"


def benches():
    import apply_ready
    import evict
    import headlost
    import waiting
    return [("apply", apply_ready.run), ("waiting", waiting.run), ("evict", evict.run), ("headlost", headlost.run),
            ("headlost_ft", headlost.run_ft)]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default="")
    parser.add_argument("--rounds", type=int, default=0)
    args = parser.parse_args()
    all_benches = benches()
    names = [n for n, _ in all_benches]
    only = [n for n in args.only.split(",") if n]
    unknown = [n for n in only if n not in names]
    if unknown:
        parser.error(f"--only: unknown comparison {', '.join(unknown)} (known: {', '.join(names)})")
    results = json.loads(RESULTS.read_text()) if only and RESULTS.exists() else {}
    node = nodecommon.Node()
    try:
        for name, bench in all_benches:
            if only and name not in only:
                continue
            log(f"== {name}")
            t0 = time.monotonic()
            try:
                got = bench(node, args.quick, args.rounds or None)
            except MeasurementError as e:
                log(f"   {name}: the measurement failed: {e}")
                return 1
            got[next(iter(got))]["when"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
            got[next(iter(got))]["kuberay_version"] = nodecommon.cluster.PINS["KUBERAY_VERSION"]
            results.update(got)
            log(f"   {name}: {time.monotonic() - t0:.0f} s")
            _write(results, args.quick)
    finally:
        node.close()
    print(table(results))
    return 0


def _write(results, quick):
    import common
    results["machine"] = common.machine()
    results["date"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    results["quick"] = quick
    results["auth"] = "Ray token authentication on for every contender (RAY_AUTH_MODE=token, one Secret)"
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")


def _fmt(s, unit="s"):
    if not s or s.get("median") is None:
        return "-"
    return f"{s['median']:g} {unit} (max {s['max']:g}, n {s['n']})"


def table(results):
    rows = []
    a = results.get("apply_ready", {})
    for name in ("kuberay", "indexed", "vcjob"):
        r = a.get(name)
        if not r:
            continue
        for key, what in (("ready_s", "create -> every worker ALIVE"), ("pods_created_s", "create -> last pod created"),
                          ("pods_running_s", "create -> every pod Running"), ("gcs_serving_s", "create -> GCS serving"),
                          ("head_alive_s", "create -> head ALIVE"),
                          ("head_to_last_worker_s", "head ALIVE -> last worker ALIVE"),
                          ("head_ray_start_to_serving_s", "head ray start -> GCS serving (Ray)"),
                          ("worker_ray_start_to_alive_s", "worker ray start -> ALIVE (Ray)"),
                          ("rayboot_head_s", "rayboot, head: first line -> ray start"),
                          ("rayboot_worker_s", "rayboot, worker: knew serving -> ray start"),
                          ("rayboot_worker_knew_s", "rayboot, worker: recorder's answer -> knew")):
            if key in r:
                rows.append((f"{name}: {what}", _fmt(r[key])))
        if "ratio_to_kuberay" in r:
            rows.append((f"{name}: ready, median / KubeRay's", f"{r['ratio_to_kuberay']}x"))
    w = results.get("waiting", {})
    for name, r in w.items():
        if isinstance(r, dict) and "cpu_ms" in r:
            rows.append((f"waiting 60 s, {name}: CPU", _fmt(r["cpu_ms"], "ms")))
            rows.append((f"waiting 60 s, {name}: peak memory (v1 max_usage)", _fmt(r["peak_kb"], "kB")))
    e = results.get("evict", {})
    for name, r in [*e.items(), *((f"{n}, as it joins", r) for n, r in e.get("joining", {}).items())]:
        if isinstance(r, dict) and "gone_s" in r:
            rows.append((f"evicted, {name}", f"{r['summary']}; gone {_fmt(r['gone_s'])}"))
    h = {**results.get("head_lost", {}), **results.get("head_lost_ft", {})}
    for name, r in h.items():
        if isinstance(r, dict) and "whole_s" in r:
            rows.append((f"head lost, {name}: every worker ALIVE in the new GCS", _fmt(r["whole_s"])))
            rows.append((f"head lost, {name}: new GCS serving -> whole", _fmt(r["serving_to_whole_s"])))
            rows.append((f"head lost, {name}: worker container restarts; job ran again",
                         f"{r['worker_container_restarts']['median']}; {r['job_ran_again']}"))
    width = max((len(r[0]) for r in rows), default=10)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in rows)


if __name__ == "__main__":
    sys.exit(main())
