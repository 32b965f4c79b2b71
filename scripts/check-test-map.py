#!/usr/bin/env python3
"""tests/README.md's map against the tree: every module (lib/LAYER/x.c, init/x.c, sidecar/x.c) is
in the table's first column, every unit test (tests/unit/test_x.c) in the second, every fuzz
target (fuzz/fuzz_x.c) in the third, and nothing the table names is gone. A map that drifted
from the code misleads the newcomer it is written for; `make lint` runs this.

Prints each mismatch and exits 1 if there is any."""
import pathlib
import re
import sys

REPO = pathlib.Path(__file__).resolve().parent.parent
MAP = REPO / "tests" / "README.md"
CODE = re.compile(r"`([^`]+)`")


def outside_parentheses(text):
    """TEXT without what stands in parentheses: the names a cell lists, not the ones its notes
    mention (`test_nofile` (`RAYBOOT_NOFILE`'s values) names one test)."""
    out, depth = [], 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def table_columns():
    """The backticked names of each of the table's first three columns (a list of sets)."""
    cols = [set(), set(), set()]
    for line in MAP.read_text().splitlines():
        if not line.startswith("| ") or line.startswith("| ---") or line.startswith("| module"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        for i in range(min(3, len(cells))):
            for name in CODE.findall(outside_parentheses(cells[i])):
                cols[i].add(name.split(" ")[0].strip(","))
    return cols


def main():
    modules = {str(p.relative_to(REPO).with_suffix("")) for d in ("lib", "init", "sidecar")
               for p in (REPO / d).rglob("*.c")}
    units = {p.stem for p in (REPO / "tests" / "unit").glob("test_*.c")}
    fuzzers = {p.stem[len("fuzz_"):] for p in (REPO / "fuzz").glob("fuzz_*.c")}
    named_modules, named_units, named_fuzzers = table_columns()
    problems = []
    problems += [f"module {m} is not in the map's first column" for m in sorted(modules - named_modules)]
    problems += [f"the map names module {m}, which is not in the tree" for m in sorted(named_modules - modules)]
    problems += [f"unit test {u} is not in the map's second column" for u in sorted(units - named_units)]
    problems += [f"the map names unit test {u}, which is not in tests/unit" for u in sorted(named_units - units)]
    problems += [f"fuzz target {f} is not in the map's third column" for f in sorted(fuzzers - named_fuzzers)]
    problems += [f"the map names fuzz target {f}, which is not in fuzz/" for f in sorted(named_fuzzers - fuzzers)]
    for p in problems:
        print(f"check-test-map: {MAP.relative_to(REPO)}: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
