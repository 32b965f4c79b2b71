"""Every benchmark `make bench` runs (bench/run.py's BENCHES), once, at its smallest size
("smoke": a run or two, a few seconds of waiting, 20 workers): a benchmark that broke fails here,
in `make test`, instead of at the next `make bench` (the start-up benchmark once exited 1 at its
first run for weeks, unseen). Each run must give every figure that README.md's tables
(scripts/check-docs.py's FIGURES) and run.py's targets read from it, each a number that can be
true; a figure renamed in the benchmark and not in the README fails here too."""
import importlib.util
import numbers
import pathlib
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(REPO / "bench"))


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench_run = _load("bench_run", REPO / "bench" / "run.py")
check_docs = _load("check_docs", REPO / "scripts" / "check-docs.py")
import common  # noqa: E402  (bench/common.py, on the path run.py put it on)


def read_figures():
    """The dotted paths into latest.json that the README and the targets read."""
    readme = [spec.partition("*")[0].partition(":")[2] for specs in check_docs.FIGURES.values()
              for spec in specs if spec and spec.startswith("latest:")]
    return sorted(set(readme) | set(bench_run.TARGETS))


@pytest.fixture(scope="module")
def built():
    for path in (common.RAYBOOT, common.SIDECAR, common.STAMP):
        if not path.exists():
            pytest.fail(f"{path} is missing: `make all build/bench/stamp` (make test does)")


@pytest.mark.parametrize("name,bench", bench_run.BENCHES, ids=[name for name, _ in bench_run.BENCHES])
def test_benchmark_runs_at_its_smallest_size(built, name, bench):
    result = bench("smoke")
    assert result, f"{name} measured nothing"
    read = [path for path in read_figures() if path.split(".")[0] in result]
    for path in read:
        value = bench_run.lookup(result, path)
        assert isinstance(value, numbers.Number), f"{name}: {path} is {value!r}, read by README.md or a target"
        assert value >= 0, f"{name}: {path} is {value}: no figure of this bench can be negative"
    if name == "shutdown":  # the claim the README makes of it: drained, exit 0
        assert result["shutdown"]["rayboot"]["exit_code"] == 0, result
        assert result["shutdown"]["rayboot"]["graceful"], result


def test_every_figure_read_has_a_benchmark():
    """Each top-level key the README or a target reads is made by one of the benchmarks (or is
    run.py's own record of the machine): none is left to a benchmark since removed."""
    made = {"startup": {"startup_ms", "binary_bytes", "idle_rss_kb"}, "wait_cost": {"wait_cost"},
            "join": {"join_latency_ms"}, "shutdown": {"shutdown"}, "scale": {"scale"}, "plan": {"plan"}}
    assert set(made) == {name for name, _ in bench_run.BENCHES}
    known = set().union(*made.values()) | {"machine"}
    assert {path.split(".")[0] for path in read_figures()} <= known
