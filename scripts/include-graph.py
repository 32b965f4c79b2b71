#!/usr/bin/env python3
"""The include graph of rayboot's C, module by module (lib/plan/plan.c and lib/plan/plan.h are the
module lib/plan/plan), resolved the way the compiler does (the including file's directory, then
each lib/ layer, then init/ and sidecar/, as the Makefile's -I flags). Exits 1 (`make lint` runs it) naming:
- a circle;
- lib/ including from init/ or sidecar/ (lib/ holds what both programs use);
- a lib/ layer including from a layer it may not use (LAYERS below; lib/LAYER/README.md says the
  same in words).
--print lists each module with what it includes.

Usage: scripts/include-graph.py [--print] [DIR...]   (default: lib init sidecar)"""
import pathlib
import re
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

# Each layer of lib/ and the layers it may include from besides itself: base uses nothing, confine
# and net use base, plan uses base and net, ray uses base, confine and net. plan and ray never meet.
LAYERS = {
    "base": set(),
    "confine": {"base"},
    "net": {"base"},
    "plan": {"base", "net"},
    "ray": {"base", "confine", "net"},
}


def module_of(path: pathlib.Path) -> str:
    return str(path.relative_to(REPO).with_suffix(""))


def resolve(name: str, where: pathlib.Path):
    """As the unit tests' build finds it (-Ilib/LAYER... -Iinit -Isidecar), so that lib/ naming a
    header of init/ or sidecar/ is seen even though the release build would not find it."""
    for d in (where.parent, *(REPO / "lib" / layer for layer in LAYERS), REPO / "init", REPO / "sidecar"):
        if (d / name).is_file():
            return d / name
    return None


def graph(dirs):
    edges = {}
    for d in dirs:
        for f in sorted((REPO / d).rglob("*.[ch]")):
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


def layer_of(mod: str):
    """The lib/ layer a module is in ("lib/net/dns" -> "net"), None outside lib/, "?" for a file
    of lib/ in no known layer."""
    parts = mod.split("/")
    if parts[0] != "lib":
        return None
    return parts[1] if len(parts) == 3 and parts[1] in LAYERS else "?"


def layer_errors(edges):
    errors = []
    for m, deps in sorted(edges.items()):
        mine = layer_of(m)
        if mine is None:
            continue
        if mine == "?":
            errors.append(f"{m} is in no layer of lib/ ({', '.join(LAYERS)}): put it in one")
            continue
        for d in sorted(deps):
            theirs = layer_of(d)
            if theirs is None:
                errors.append(f"{m} includes from {d}: lib/ holds what both programs use, never their own modules")
            elif theirs != mine and theirs not in LAYERS[mine]:
                may = ", ".join(sorted(LAYERS[mine])) or "nothing outside itself"
                errors.append(f"{m} includes from {d}: lib/{mine} may use {may}, not lib/{theirs}")
    return errors


def duplicate_names():
    """Headers are included by file name from every layer (-Ilib/base -Ilib/net ...): two with one
    name would be a silent choice of the first."""
    seen, errors = {}, []
    for layer in LAYERS:
        for f in sorted((REPO / "lib" / layer).glob("*.h")):
            if f.name in seen:
                errors.append(f"{f.relative_to(REPO)} and {seen[f.name].relative_to(REPO)} share a name")
            seen.setdefault(f.name, f)
    return errors


def main(argv):
    show = "--print" in argv
    dirs = [a for a in argv if not a.startswith("--")] or ["lib", "init", "sidecar"]
    edges = graph(dirs)
    failed = False
    for e in duplicate_names() + layer_errors(edges):
        print(f"include-graph: {e}")
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
              "them, no circle, every lib/ layer includes only from those below it")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
