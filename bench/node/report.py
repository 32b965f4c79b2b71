"""The Markdown tables of bench/RESULTS.md's real-node section, from bench/results/node.json:
`python3 report.py` prints them (what is measured is bench_node.py's; this only writes it out)."""
import json
import pathlib
import sys

WORKERS = 4  # nodecommon.WORKERS (not imported: that brings in the node's modules)

RESULTS = pathlib.Path(__file__).resolve().parents[1] / "results" / "node.json"


def f(s, unit="s", scale=1):
    if not s or s.get("median") is None:
        return "-"
    m, x = s["median"] * scale, s["max"] * scale
    if unit == "s" and x < 1:
        return f"{m * 1000:,.0f} ms (max {x * 1000:,.0f}, n {s['n']})"
    fmt = (lambda v: f"{v:,.2f}") if unit == "s" else (lambda v: f"{v:,.0f}")
    return f"{fmt(m)} {unit} (max {fmt(x)}, n {s['n']})"


def apply_table(a):
    rows = [("create -> every worker ALIVE", "ready_s"), ("create -> last pod created (the controller)", "pods_created_s"),
            ("create -> every pod Running (a watch)", "pods_running_s"), ("create -> GCS serving", "gcs_serving_s"),
            ("create -> the head's node ALIVE", "head_alive_s"), ("head ALIVE -> last worker ALIVE", "head_to_last_worker_s"),
            ("Ray: head `ray start` -> GCS serving", "head_ray_start_to_serving_s"),
            ("Ray: a worker's `ray start` -> ALIVE (each worker)", "worker_ray_start_to_alive_s"),
            ("rayboot, head: first log line -> `ray start`", "rayboot_head_s"),
            ("rayboot, worker: its line \"is SERVING\" -> `ray start`", "rayboot_worker_s"),
            ("rayboot, worker: the recorder's first answer -> its line \"is SERVING\"", "rayboot_worker_knew_s"),
            ("KubeRay worker: GCS serving -> wait-gcs-ready's \"GCS is ready\"", "kuberay_init_sees_gcs_s"),
            ("KubeRay worker: \"GCS is ready\" -> ALIVE", "kuberay_init_done_to_alive_s"),
            ("the GCS's serving window (recorder)", "serving_window_s")]
    # Runs before the version was recorded were against v1.5.0.
    out = [f"| figure | KubeRay {a.get('kuberay_version', 'v1.5.0')} | rayboot, Indexed Job | rayboot, vcjob |",
           "|---|---|---|---|"]
    for what, key in rows:
        out.append(f"| {what} | " + " | ".join(f(a.get(n, {}).get(key)) for n in ("kuberay", "indexed", "vcjob")) + " |")
    out.append("| every worker ALIVE, median / KubeRay's | 1 | " +
               " | ".join(f"{a.get(n, {}).get('ratio_to_kuberay')}x" for n in ("indexed", "vcjob")) + " |")
    return "\n".join(out)


WAITERS = (("kuberay", "KubeRay `wait-gcs-ready`"), ("rayboot", "rayboot, nothing listens on the head"),
           ("rayboot_held", "rayboot, the head's rayboot up, no GCS"), ("floor", "a container running `sleep`"))


def _ratio_cell(w, waiter, metric):
    """One cell of a ratio row: waiting.run's ratio_METRIC (rayboot) or ratio_METRIC_held."""
    if waiter == "kuberay":
        return "1"
    suffix = {"rayboot": "", "rayboot_held": "_held"}.get(waiter)
    if suffix is None:
        return "-"
    r = w.get(f"ratio_{metric}{suffix}", "-")
    return "within the floor's spread" if r is None else r if r == "-" else f"{r}x"


def waiting_table(w):
    have = [(k, t) for k, t in WAITERS if k in w]
    out = ["| figure | " + " | ".join(t for _k, t in have) + " |", "|---" * (len(have) + 1) + "|"]
    for what, key, unit in (("CPU in 60 s (cpuacct.usage, every container)", "cpu_ms", "ms"),
                            ("peak memory (memory.max_usage_in_bytes)", "peak_kb", "kB")):
        out.append(f"| {what} | " + " | ".join(f(w[k][key], unit) for k, _t in have) + " |")
    for what, metric in (("CPU, KubeRay's / this", "cpu"), ("memory, KubeRay's / this", "memory"),
                         ("CPU above the `sleep` container's, KubeRay's / this", "cpu_above_floor"),
                         ("memory above the `sleep` container's, KubeRay's / this", "memory_above_floor")):
        out.append(f"| {what} | " + " | ".join(_ratio_cell(w, k, metric) for k, _t in have) + " |")
    split = []
    for k, _t in have:
        last = w[k]["rounds"][-1]
        split.append("; ".join(f"{c}: rss {v['rss_kb']} kB, cache {v['cache_kb']} kB" for c, v in last["containers"].items()))
    out.append("| at 60 s of the last round (memory.stat) | " + " | ".join(split) + " |")
    return "\n".join(out)


def evict_table(e):
    out = ["| contender | drained (GCS death reason) | Ray container exit, pod phase | seconds to gone |", "|---|---|---|---|"]
    joining = e.get("joining", {})
    rows = [(name, e.get(name)) for name in ("kuberay", "kuberay+sidecar", "rayboot", "vcjob", "lws", "jobset")]
    rows += [(f"{name}, evicted as it joins", r) for name, r in joining.items()]
    for name, r in rows:
        if r:
            kinds = sorted({(x["death_reason"], x["exit_code"], x["container_reason"], x["phase"]) for x in r["rounds"]})
            out.append(f"| {name} | " + "; ".join(k[0] for k in kinds) + " | " +
                       "; ".join(f"{k[1]} ({k[2]}), {k[3]}" for k in kinds) + f" | {f(r['gone_s'])} |")
    return "\n".join(out)


def head_lost_table(h):
    out = ["| contender | head lost -> every worker ALIVE in the new GCS | old head pod gone | new head pod made | "
           "its containers running | new GCS serving | its head ALIVE | new GCS serving -> whole | "
           "worker container restarts | job ran again |", "|---" * 10 + "|"]
    for name in ("kuberay", "vcjob", "indexed", "kuberay_ft", "vcjob_ft", "indexed_ft"):
        r = h.get(name)
        if r:
            out.append(f"| {name} | {f(r['whole_s'])} | {f(r.get('old_head_gone_s'))} | {f(r.get('new_head_pod_s'))} | "
                       f"{f(r.get('new_head_running_s'))} | {f(r['new_gcs_serving_s'])} | {f(r['new_head_alive_s'])} | "
                       f"{f(r['serving_to_whole_s'])} | {r['worker_container_restarts']['median']:g} of {WORKERS} workers "
                       f"(median) | {r['job_ran_again']} |")
    return "\n".join(out)


def main():
    d = json.loads(RESULTS.read_text())
    m = d["machine"]
    print(f"Machine: {m['cores']} cores ({m['cpu']}), {m['memory_gib']} GiB, Linux {m['kernel']}, {m['os']}; "
          f"{d['date']}{' (quick)' if d.get('quick') else ''}. {d.get('auth', '')}.\n")
    for key, title, fn in (("apply_ready", "Apply to every worker ALIVE", apply_table),
                           ("waiting", "Waiting 60 s for an absent head", waiting_table),
                           ("evict", "A worker evicted", evict_table), ("head_lost", "Head lost", head_lost_table),
                           ("head_lost_ft", "Head lost, with GCS fault tolerance", head_lost_table)):
        if key in d:
            print(f"### {title} ({d[key].get('when', '')})\n\n{fn(d[key])}\n")


if __name__ == "__main__":
    sys.exit(main())
