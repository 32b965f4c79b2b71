"""`make bench`: every benchmark in one run, side by side, written to bench/results/latest.json
and printed as a table. Figures, not pass/fail: a missed target is reported, never an error.

usage: run.py [--quick] [--only NAME[,NAME...]]
  --quick   fewer runs and a smaller scale test (tests/bench/test_bench_sizes.py runs
            each benchmark smaller still, once, in `make test`)
  --only    run some benchmarks (startup,wait_cost,join,shutdown,scale,plan); the
            others keep their figures from the previous latest.json"""
import argparse
import datetime
import json
import os
import pathlib
import sys
import time

import common
import join
import plan_bench
import scale
import shutdown
import startup
import waitcost

RESULTS = pathlib.Path(__file__).resolve().parent / "results" / "latest.json"

# Run order: the cheap ones first; the scale test last (it loads the machine the most).
BENCHES = [
    ("startup", startup.run),  # also binary_bytes and idle_rss_kb (the same cluster)
    ("wait_cost", waitcost.run),
    ("join", join.run),
    ("shutdown", shutdown.run),
    ("scale", scale.run),
    ("plan", plan_bench.run),
]

TARGETS = {
    "join_latency_ms.rayboot.p50": ("<", 5),
    "join_latency_ms.rayboot.p99": ("<", 50),
    "join_latency_ms.ratio_p50": (">=", 50),
    "wait_cost.ratio_cpu": (">=", 100),
    "wait_cost.ratio_rss": (">=", 100),
    "startup_ms.rayboot": ("<", 10),
    "binary_bytes.rayboot": ("<", 1 << 20),
    "binary_bytes.rayboot_sidecar": ("<", 3 << 19),
    "shutdown.rayboot.exit_code": ("==", 0),
    "shutdown.rayboot.graceful": ("==", True),
    "scale.dns_qps": ("<=", 1),
    "scale.connect_per_s": ("<", 1),
    "scale.join_p99_ms": ("<", 250),
}


def lookup(results, dotted):
    value = results
    for key in dotted.split("."):
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def verdict(value, op, target):
    if value is None:
        return "not measured"
    ok = {"<": value < target, "<=": value <= target, ">=": value >= target, "==": value == target}[op]
    return "met" if ok else "MISSED"


def table(results):
    rows = []

    def row(name, dotted, unit=""):
        value = lookup(results, dotted)
        target = TARGETS.get(dotted)
        rows.append((name, "-" if value is None else f"{value}{unit}",
                     f"{target[0]} {target[1]}{unit}" if target else "",
                     verdict(value, *target) if target else ""))

    row("join p50, rayboot", "join_latency_ms.rayboot.p50", " ms")
    row("join p99, rayboot", "join_latency_ms.rayboot.p99", " ms")
    row("join p50, rayboot without rendezvous", "join_latency_ms.rayboot_fallback.p50", " ms")
    row("join p99, rayboot without rendezvous", "join_latency_ms.rayboot_fallback.p99", " ms")
    row("join p50, KubeRay-style", "join_latency_ms.kuberay.p50", " ms")
    row("join p99, KubeRay-style", "join_latency_ms.kuberay.p99", " ms")
    row("join p50, rayboot, from the latest SERVING", "join_latency_ms.rayboot.low.p50", " ms")
    row("join p50 ratio (KubeRay/rayboot)", "join_latency_ms.ratio_p50", "x")
    row("SERVING instant known to, p50 (p99)", "join_latency_ms.serving_window_ms.p50", " ms")
    row("waiting 60 s: CPU, rayboot", "wait_cost.rayboot.cpu_ms", " ms")
    row("waiting 60 s: CPU, KubeRay-style", "wait_cost.kuberay.cpu_ms", " ms")
    row("waiting 60 s: CPU, rayboot without rendezvous", "wait_cost.rayboot_fallback.cpu_ms", " ms")
    row("waiting 60 s: CPU, rayboot before", "wait_cost.rayboot_before_held.cpu_ms", " ms")
    row("waiting: CPU ratio", "wait_cost.ratio_cpu", "x")
    row("waiting: CPU ratio in 10 ms ticks, podinit included", "wait_cost.ratio_cpu_ticks", "x")
    row("waiting: CPU ratio without rendezvous", "wait_cost.ratio_cpu_fallback", "x")
    row("waiting: CPU ratio, rayboot before", "wait_cost.ratio_cpu_before", "x")
    row("CPU per poll attempt, rayboot", "wait_cost.rayboot_fallback.cpu_us_per_attempt", " us")
    row("CPU per poll attempt, rayboot before", "wait_cost.rayboot_before.cpu_us_per_attempt", " us")
    row("waiting: peak RSS, rayboot", "wait_cost.rayboot.peak_rss_kb", " kB")
    row("waiting: peak RSS, KubeRay-style", "wait_cost.kuberay.peak_rss_kb", " kB")
    row("waiting: RSS ratio", "wait_cost.ratio_rss", "x")
    row("waiting: RSS ratio, rayboot before", "wait_cost.ratio_rss_before", "x")
    row("waiting: peak PSS, rayboot", "wait_cost.rayboot.peak_pss_kb", " kB")
    row("waiting: peak PSS, KubeRay-style", "wait_cost.kuberay.peak_pss_kb", " kB")
    row("waiting: PSS ratio", "wait_cost.ratio_pss", "x")
    row("waiting: PSS ratio, rayboot before", "wait_cost.ratio_pss_before", "x")
    row("waiting: peak RSS, rayboot without rendezvous", "wait_cost.rayboot_fallback.peak_rss_kb", " kB")
    row("start-up, rayboot exec to exec of ray", "startup_ms.rayboot", " ms")
    row("one `ray health-check`", "startup_ms.ray_health_check", " ms")
    row("rayboot, stripped", "binary_bytes.rayboot", " B")
    row("rayboot-sidecar, stripped", "binary_bytes.rayboot_sidecar", " B")
    row("idle RSS, supervising rayboot", "idle_rss_kb.rayboot", " kB")
    row("idle RSS, sidecar", "idle_rss_kb.sidecar", " kB")
    row("shutdown, rayboot: seconds", "shutdown.rayboot.seconds", " s")
    row("shutdown, rayboot: exit code", "shutdown.rayboot.exit_code")
    row("shutdown, rayboot: graceful", "shutdown.rayboot.graceful")
    row("shutdown, `ray start --block`: seconds", "shutdown.ray_start_block.seconds", " s")
    row("shutdown, `ray start --block`: exit code", "shutdown.ray_start_block.exit_code")
    row("shutdown, `ray start --block`: graceful", "shutdown.ray_start_block.graceful")
    row("scale: waiting workers", "scale.workers")
    row("scale: DNS queries/s per worker", "scale.dns_qps")
    row("scale: connection attempts/s per worker", "scale.connect_per_s")
    row("scale: join p50", "scale.join_p50_ms", " ms")
    row("scale: join p99", "scale.join_p99_ms", " ms")
    row("scale: CPU per wake (rayboot and prober, per worker)", "scale.wake_cpu_us", " us")
    row("scale, no rendezvous: DNS queries/s per worker", "scale.fallback.dns_qps")
    row("scale, no rendezvous: connection attempts/s per worker", "scale.fallback.connect_per_s")
    row("scale, no rendezvous: join p50", "scale.fallback.join_p50_ms", " ms")
    row("scale, no rendezvous: join p99", "scale.fallback.join_p99_ms", " ms")
    row("scale, no rendezvous: CPU per join", "scale.fallback.wake_cpu_us", " us")
    row("plan, 10,000 workers (p50)", "plan.planning_ms_p50", " ms")
    widths = [max(len(r[i]) for r in rows + [("figure", "value", "target", "")]) for i in range(4)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(("figure", "value", "target", ""), widths, strict=True))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    names = [n for n, _ in BENCHES]
    only = [n for n in args.only.split(",") if n]
    unknown = [n for n in only if n not in names]
    if unknown:
        parser.error(f"--only: unknown benchmark {', '.join(unknown)} (known: {', '.join(names)})")
    results = json.loads(RESULTS.read_text()) if only and RESULTS.exists() else {}
    for name, bench in BENCHES:
        if only and name not in only:
            continue
        common.log(f"== {name}")
        t0, load0 = time.monotonic(), os.getloadavg()[0]
        try:
            results.update(bench("quick" if args.quick else "full"))
        except common.MeasurementError as e:
            common.log(f"   {name}: the measurement failed: {e}")
            return 1
        # The machine's 1-minute load average as the bench began and ended: the machine is
        # shared, and an absolute figure (not a side-by-side ratio) is read against it.
        results.setdefault("load_1m", {})[name] = [round(load0, 1), round(os.getloadavg()[0], 1)]
        common.log(f"   {name}: {time.monotonic() - t0:.0f} s, load {load0:.1f} to {os.getloadavg()[0]:.1f}")
    results["machine"] = common.machine()
    results["ray_version"] = common.ray_version()
    results["date"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    results["quick"] = args.quick
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    print(table(results))
    print(f"\n{RESULTS.relative_to(common.REPO)} written ({results['date']}, Ray {results['ray_version']}, "
          f"{results['machine']['cores']} cores{', quick mode' if args.quick else ''})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
