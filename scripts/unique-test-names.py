#!/usr/bin/env python3
"""Every Python file under tests/ and bench/ has a basename of its own (conftest.py aside).

pytest's default import mode puts each test file's folder on sys.path and imports the file by its
basename, so tests/e2e/test_x.py beside tests/contract/test_x.py stops the whole suite at
collection, and two helper modules of one name make the second folder import the first's. `make
lint` runs this so that the clash is named before the suite starts. Exits 1 listing each clash."""
import collections
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
SHARED_NAMES = {"conftest.py", "__init__.py"}


def main() -> int:
    seen = collections.defaultdict(list)
    for top in ("tests", "bench"):
        for path in sorted((REPO / top).rglob("*.py")):
            if path.name not in SHARED_NAMES:
                seen[path.name].append(str(path.relative_to(REPO)))
    clashes = {name: paths for name, paths in seen.items() if len(paths) > 1}
    for name, paths in sorted(clashes.items()):
        print(f"unique-test-names: {name} is in {', '.join(paths)}: rename one", file=sys.stderr)
    return 1 if clashes else 0


if __name__ == "__main__":
    sys.exit(main())
