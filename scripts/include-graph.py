#!/usr/bin/env python3
"""The include graph of rayboot's C, module by module (lib/plan.c and lib/plan.h are the module
lib/plan), resolved the way the compiler does (the including file's directory, then lib/). Exits 1
naming a circle when there is one (`make lint` runs it), or when lib/ includes from init/ or
sidecar/. --print lists each module with what it includes.

Usage: scripts/include-graph.py [--print] [DIR...]   (default: lib init sidecar)"""
import pathlib
import re
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def module_of(path: pathlib.Path) -> str:
    return str(path.relative_to(REPO).with_suffix(""))


def resolve(name: str, where: pathlib.Path):
    for d in (where.parent, REPO / "lib"):
        if (d / name).is_file():
            return d / name
    return None


def graph(dirs):
    edges = {}
    for d in dirs:
        for f in sorted((REPO / d).glob("*.[ch]")):
            mod = module_of(f)
            edges.setdefault(mod, set())
            for name in INCLUDE.findall(f.read_text(errors="replace")):
                target = resolve(name, f)
                if target is None:
                    continue  # a system or dependency header
                dep = module_of(target)
                if dep != mod:
                    edges[mod].add(dep)
    return edges


def find_circle(edges):
    """A list of modules forming a circle (first == last), or None."""
    state, stack = {}, []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for n in sorted(edges.get(m, ())):
            if state.get(n) == "open":
                return stack[stack.index(n):] + [n]
            if n not in state:
                found = visit(n)
                if found:
                    return found
        stack.pop()
        state[m] = "done"
        return None

    for m in sorted(edges):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def main(argv):
    show = "--print" in argv
    dirs = [a for a in argv if not a.startswith("--")] or ["lib", "init", "sidecar"]
    edges = graph(dirs)
    failed = False
    upward = [(m, d) for m, deps in edges.items() for d in deps
              if m.startswith("lib/") and not d.startswith("lib/")]
    for m, d in sorted(upward):
        print(f"include-graph: {m} includes from {d}: lib/ holds what both programs use, never their own modules")
        failed = True
    circle = find_circle(edges)
    if circle:
        print("include-graph: a circle: " + " -> ".join(circle))
        failed = True
    if show:
        for m in sorted(edges):
            print(f"{m}: {' '.join(sorted(edges[m])) or '-'}")
    if not failed:
        print(f"include-graph: {len(edges)} modules, {sum(len(v) for v in edges.values())} includes between "
              "them, no circle")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
