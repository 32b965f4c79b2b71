#!/usr/bin/env python3
"""The documentation still matches the tree and the binaries (`make lint`).

1. Every relative link in the repository's Markdown files resolves to a file or directory, and a
   #anchor into a Markdown file names one of its headings (GitHub's slugs).
2. Every environment variable that `rayboot --help` or `rayboot-sidecar --help` names is
   documented somewhere in docs/.
3. Every RAYBOOT_ variable docs/configuration.md documents is still named by a --help or by the
   C sources, so nothing documented is gone.
4. Code -> docs: every variable the C sources look up (env_lookup*, getenv) is in
   docs/configuration.md and in the --help of each binary that reads it (its own directory, or a
   lib/ module whose name it carries; NOT_SETTINGS and DELEGATED say what is left out and why);
   every flag the command lines accept likewise; every exit code a program's sources use (those
   of lib/base/exitcode.h and the headers' PREFIX_EXIT_*) is in its --help's and
   docs/configuration.md's list of exit codes (EXIT_DOCS).
5. The README's bench tables: each figure equals its bench/results/*.json figure (FIGURES),
   rounded as the README writes it.
6. tests/FAULTS.md: every test file and test function it cites exists.
7. Every `path` in backticks in the Markdown whose first part is a directory of the repository
   exists (as a file, a directory, or a module's .c).

Usage: check-docs.py [RAYBOOT RAYBOOT_SIDECAR]   (default build/bin/rayboot build/bin/rayboot-sidecar)
"""
import json
import os
import re
import subprocess
import sys
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SKIP_DIRS = {"build", "node_modules", "__pycache__"}
SOURCE_DIRS = ("init", "lib", "sidecar")

LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REF_LINK = re.compile(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:|^//")
# A variable: upper-case words joined by '_', a part may be a placeholder (<TASK>) or '*'.
VAR = re.compile(r"(?<![A-Za-z0-9_<*])([A-Z][A-Z0-9]*(?:_(?:[A-Z0-9]+|<[A-Z]+>|\*))+)(?![A-Za-z0-9_>])")
RAYBOOT_VAR = re.compile(r"(?<![A-Za-z0-9_])RAYBOOT_[A-Z0-9_]*[A-Z0-9]")


def markdown_files():
    """The repository's own Markdown: tracked or new, not what .gitignore hides (build/, caches)."""
    try:
        out = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard",
                              "--", "*.md"], capture_output=True, text=True, check=True, timeout=30)
        names = sorted(set(n for n in out.stdout.split("\0") if n))
        yield from (REPO / n for n in names if (REPO / n).is_file())
        return
    except (OSError, subprocess.SubprocessError):
        pass
    for root, dirs, files in os.walk(REPO):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".md"):
                yield Path(root) / name


def prose_lines(text):
    """(line number, line) outside fenced code blocks, with code spans blanked."""
    fence = None
    for n, line in enumerate(text.splitlines(), 1):
        m = re.match(r"^\s*(```+|~~~+)", line)
        if m:
            if fence is None:
                fence = m.group(1)[0] * 3
            elif m.group(1).startswith(fence):
                fence = None
            continue
        if fence is None:
            yield n, line


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation but '-' and '_' dropped, spaces to '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip())
    text = text.replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


_anchors = {}


def anchors(path):
    if path not in _anchors:
        seen = {}
        found = set()
        for _, line in prose_lines(path.read_text(encoding="utf-8")):
            m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
            if not m:
                continue
            base = slug(m.group(2))
            k = seen.get(base, 0)
            seen[base] = k + 1
            found.add(base if k == 0 else f"{base}-{k}")
        _anchors[path] = found
    return _anchors[path]


def check_links():
    errors, count = [], 0
    files = list(markdown_files())
    for md in files:
        rel = md.relative_to(REPO)
        for n, line in prose_lines(md.read_text(encoding="utf-8")):
            plain = CODE_SPAN.sub("", line)
            targets = LINK.findall(plain)
            m = REF_LINK.match(plain)
            if m:
                targets.append(m.group(1))
            for target in targets:
                if SCHEME.match(target):
                    continue
                count += 1
                path_part, _, anchor = target.partition("#")
                dest = (md.parent / path_part).resolve() if path_part else md
                if not dest.exists():
                    errors.append(f"{rel}:{n}: link {target}: {path_part} does not exist")
                    continue
                if anchor and dest.is_file() and dest.suffix == ".md" and anchor not in anchors(dest):
                    errors.append(f"{rel}:{n}: link {target}: no heading #{anchor} in "
                                  f"{dest.relative_to(REPO)}")
    return errors, count, len(files)


def help_text(binary):
    if not os.access(binary, os.X_OK):
        sys.exit(f"check-docs: {binary} is missing: build it first (make all)")
    out = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=10)
    if out.returncode != 0:
        sys.exit(f"check-docs: {binary} --help exited {out.returncode}: {out.stderr.strip()}")
    return out.stdout


def as_pattern(name):
    """VC_<TASK>_HOSTS and VC_*_HOSTS match any spelling of the placeholder in the docs."""
    parts = [r"[A-Z0-9_<>*]+" if p.startswith("<") or p == "*" else re.escape(p) for p in name.split("_")]
    return re.compile(r"(?<![A-Za-z0-9_])" + "_".join(parts) + r"(?![A-Za-z0-9_])")


def check_variables(binaries):
    errors = []
    helps = {b: help_text(b) for b in binaries}
    docs_text = "\n".join(p.read_text(encoding="utf-8") for p in sorted((REPO / "docs").glob("*.md")))
    named = set()
    for binary, text in helps.items():
        for name in VAR.findall(text):
            named.add(name)
            if not as_pattern(name).search(docs_text):
                errors.append(f"{binary} --help names {name}, which no file in docs/ documents")
    sources = []
    for d in SOURCE_DIRS:
        for root, _, files in os.walk(REPO / d):
            sources += [(Path(root) / f).read_text(encoding="utf-8") for f in files if f.endswith((".c", ".h"))]
    known = "\n".join(list(helps.values()) + sources)
    config = REPO / "docs" / "configuration.md"
    documented = sorted(set(RAYBOOT_VAR.findall(config.read_text(encoding="utf-8"))))
    for name in documented:
        if not re.search(r"(?<![A-Za-z0-9_])" + name + r"(?![A-Za-z0-9_])", known):
            errors.append(f"docs/configuration.md documents {name}, which no --help and no source names")
    return errors, len(named), len(documented)


# --- code -> docs -------------------------------------------------------------------------------
# What the binaries read and answer, found in the C sources, must be in their --help and in
# docs/configuration.md. Comments and strings are blanked first (scripts/checksrc.py's blank), so
# prose never counts as code.

sys.path.insert(0, str(Path(__file__).resolve().parent))
from checksrc import blank  # noqa: E402

LOOKUP = re.compile(r"\b(env_lookup\w*|secure_getenv|getenv)\s*\(")
ENV_NAME = re.compile(r"^[A-Z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+$")
STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
FLAG_TEST = re.compile(r"\bstrcmp\s*\(\s*\w+\s*(?:->|\.)\s*name\s*,\s*\"([^\"]+)\"\s*\)")
PLUGIN_FLAG = re.compile(r"^\s*\{\s*\"([A-Za-z]+)\"\s*,\s*VALUE_", re.M)
EXIT_DEFINE = re.compile(r"^#define\s+(\w*EXIT_\w+)\s+(\w+)", re.M)
# The binaries and their own directories; lib/ is both's where the binary carries the name.
PROGRAMS = {"rayboot": "init", "rayboot-sidecar": "sidecar"}
# Variables read that are not the user's to set, and why they are in no --help (docs/configuration.md
# names them all the same).
NOT_SETTINGS = {
    "HOME": "the ~ of ~/.ray/auth_token, which the --help names",
    "RAYBOOT_PROBER_SELFTEST": "a test hook: the confined prober makes a forbidden call (contract/test_pid1.py)",
    "RAY_CLOUD_INSTANCE_ID": "set for Ray unless the user set it: looked up only to keep the user's",
    "RAY_NODE_TYPE_NAME": "set for Ray unless the user set it: looked up only to keep the user's",
    "RAY_ADDRESS": "set for the command unless the user set it: looked up only to keep the user's",
    "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S": "set for Ray unless the user set it: looked up only to keep the user's",
}
# The sidecar's --help hands the plan's rules to `rayboot plan` ("the same rules as"): what
# lib/plan/ reads is rayboot's --help's to list, and the sidecar's only where it says more.
DELEGATED = {"rayboot-sidecar": ("lib/plan/",)}
# Flags that are looked for only to be refused with their own message.
REFUSED_FLAGS = {"clientServerPort"}
# Where each program's exit codes are listed: in its --help, the paragraph holding the first
# text; in docs/configuration.md, the paragraph (or table) holding the second. A subcommand with
# codes of its own has its own paragraphs (its file's codes are checked there).
EXIT_DOCS = {
    "init/": ("rayboot", "Exit codes:", "| code | meaning |"),
    "sidecar/drainclient.c": ("rayboot-sidecar", "rayboot-sidecar drain makes that call",
                              "`rayboot-sidecar drain` exits"),
    "sidecar/": ("rayboot-sidecar", "Exit codes:", "The sidecar exits"),
}


def c_sources():
    for d in SOURCE_DIRS:
        for path in sorted((REPO / d).rglob("*.[ch]")):
            text = path.read_text(encoding="utf-8")
            yield str(path.relative_to(REPO)), text, blank(text)


def call_args(code, start):
    """[(begin, end)] of the arguments of the call whose '(' is just before START."""
    depth, begin, out = 0, start, []
    for i in range(start, len(code)):
        c = code[i]
        if c in "([{":
            depth += 1
        elif c in ")]}" and depth > 0:
            depth -= 1
        elif c == ")" or (c == "," and depth == 0):
            out.append((begin, i))
            if c == ")":
                return out
            begin = i + 1
    return out


def names_in(text, shape=ENV_NAME):
    return [s for s in STRING.findall(text) if shape.match(s)]


def enclosing_function(code, pos):
    starts = [m for m in re.finditer(r"^[A-Za-z_][^;{}=#]*?\b(\w+)\s*\([^;{}]*?\)\s*\n\{", code[:pos], re.M)]
    return starts[-1].group(1) if starts else None


def resolve_name(arg, text, code, pos, defines):
    """The variable names an env lookup's name argument can be: a literal, a #define, an array's
    literals, or a parameter: the literals its function is called with in the same file."""
    arg_code, arg_text = code[arg[0]:arg[1]].strip(), text[arg[0]:arg[1]]
    if arg_code.startswith('"'):
        return names_in(arg_text, re.compile(r"^[A-Z][A-Za-z0-9_]*$"))  # HOME, HOSTNAME
    if arg_code in defines:
        return [defines[arg_code]]
    m = re.match(r"^(\w+)\s*\[", arg_code)
    if m:
        init = re.search(r"\b" + m.group(1) + r"\s*\[\s*\w*\s*\]\s*=\s*\{([^}]*)\}", text)
        return names_in(init.group(1)) if init else []
    func = enclosing_function(code, pos)
    if re.match(r"^\w+$", arg_code) and func:
        found = []
        for call in re.finditer(r"\b" + func + r"\s*\(", code):
            found += [n for b, e in call_args(code, call.end()) for n in names_in(text[b:e])]
        return found
    return []


def variables_read():
    """{name: set of files reading it}, and [where a lookup's name could not be told]."""
    sources = list(c_sources())
    defines = {m.group(1): m.group(2) for _, text, _ in sources
               for m in re.finditer(r'^#define\s+(\w+)\s+"([^"]*)"', text, re.M)}
    read, unknown = {}, []
    for rel, text, code in sources:
        if rel in ("lib/base/env.c", "lib/base/env.h"):
            continue
        for m in LOOKUP.finditer(code):
            args = call_args(code, m.end())
            arg = args[0] if m.group(1).endswith("getenv") else (args[1] if len(args) > 1 else None)
            names = resolve_name(arg, text, code, m.start(), defines) if arg else []
            if not names:
                unknown.append(f"{rel}:{code.count(chr(10), 0, m.start()) + 1}: which variable {m.group(1)} reads "
                               "cannot be told (a literal, a #define, an array of literals or a parameter "
                               "called with literals)")
            for name in names:
                read.setdefault(name, set()).add(rel)
    return read, unknown


def belongs(program, files, image):
    """Whether a variable or flag read in FILES is PROGRAM's to document."""
    own = [f for f in files if f.startswith(PROGRAMS[program] + "/")]
    shared = [f for f in files if f.startswith("lib/") and not f.startswith(DELEGATED.get(program, ("-",)))]
    return bool(own) or (bool(shared) and image)


def documents(text, name):
    return re.search(r"(?<![A-Za-z0-9_])" + re.escape(name) + r"(?![A-Za-z0-9_])", text) is not None


def check_read_variables(helps, config):
    read, errors = variables_read()
    for name, files in sorted(read.items()):
        if not documents(config, name):
            errors.append(f"{sorted(files)[0]} reads {name}, which docs/configuration.md does not document")
        if name in NOT_SETTINGS:
            continue
        for program, (binary, text) in helps.items():
            carried = name.encode() in Path(binary).read_bytes()
            if belongs(program, files, carried) and not documents(text, name):
                errors.append(f"{program} reads {name} ({', '.join(sorted(files))}), which its --help does not name")
    return errors, len(read)


def flags_read():
    """{flag: set of files}: what the command lines accept."""
    flags = {}
    for rel, text, code in c_sources():
        if not rel.startswith(tuple(d + "/" for d in PROGRAMS.values())):
            continue  # lib/'s names are not flags (sandbox.c's syscalls), but for the plugin's below
        for m in FLAG_TEST.finditer(code):
            flags.setdefault(text[m.start():m.end()].split('"')[1], set()).add(rel)
    plugin = "lib/plan/pluginargs.c"
    for m in PLUGIN_FLAG.finditer((REPO / plugin).read_text(encoding="utf-8")):
        flags.setdefault(m.group(1), set()).add(plugin)
    return {f: files for f, files in flags.items() if f not in REFUSED_FLAGS}


def check_flags(helps, config):
    errors, flags = [], flags_read()
    for flag, files in sorted(flags.items()):
        spelled = f"-{flag}" if len(flag) == 1 else f"--{flag}"
        if not re.search(re.escape(spelled) + r"(?![A-Za-z0-9-])", config):
            errors.append(f"{sorted(files)[0]} accepts {spelled}, which docs/configuration.md does not document")
        for program, (_, text) in helps.items():
            if belongs(program, files, program == "rayboot") and \
                    not re.search(r"(?<![A-Za-z0-9-])" + re.escape(spelled) + r"(?![A-Za-z0-9-])", text):
                errors.append(f"{program} accepts {spelled} ({', '.join(sorted(files))}), which its --help does not name")
    return errors, len(flags)


def exit_codes():
    """{constant: value} of lib/base/exitcode.h and of every header's PREFIX_EXIT_* constants."""
    defined = {}
    for rel, text, _ in c_sources():
        if rel == "lib/base/exitcode.h" or rel.endswith(".h"):
            for m in EXIT_DEFINE.finditer(text):
                if rel == "lib/base/exitcode.h" or not m.group(1).startswith("EXIT_"):
                    defined[m.group(1)] = m.group(2)
    for _ in range(3):  # DRAINCLIENT_EXIT_NO_SIDECAR is EXIT_WAIT_DEADLINE
        defined = {k: defined.get(v, v) for k, v in defined.items()}
    return {k: int(v) for k, v in defined.items() if v.isdigit()}


def paragraph(text, anchor, clause=False):
    """The blank-line-separated paragraph (or table) of TEXT holding ANCHOR, or None; with CLAUSE,
    only from ANCHOR to the end of its sentence or clause ('.' or ';' before a blank)."""
    for block in re.split(r"\n\s*\n", text):
        if anchor in block:
            rest = block[block.index(anchor):]
            return re.split(r"[.;](?:\s|$)", rest)[0] if clause else block
    return None


def exit_docs(rel):
    return next(v for k, v in EXIT_DOCS.items() if rel.startswith(k))


def names_code(block, code):
    return re.search(r"(?<![0-9])" + str(code) + r"(?![0-9])", block) is not None


def check_exit_codes(helps, config):
    codes, errors, used = exit_codes(), [], 0
    for rel, _, code in c_sources():
        if not rel.startswith(tuple(EXIT_DOCS)) or not rel.endswith(".c"):
            continue
        program, help_anchor, doc_anchor = exit_docs(rel)
        for name in sorted(set(re.findall(r"\b\w*EXIT_\w+\b", code)) & set(codes)):
            used += 1
            for where, text, anchor in ((f"{program} --help", helps[program][1], help_anchor),
                                        ("docs/configuration.md", config, doc_anchor)):
                block = paragraph(text, anchor, clause=where.endswith(".md") and not anchor.startswith("|"))
                if block is None:
                    errors.append(f"{where}: no paragraph with {anchor!r} to list {rel}'s exit codes")
                elif not names_code(block, codes[name]):
                    errors.append(f"{rel} exits {codes[name]} ({name}), which {where} does not list "
                                  f"(beside {anchor!r})")
    return sorted(set(errors)), used


# --- the README's figures against bench/results/*.json --------------------------------------------
# Each row of the README's bench tables, by its first cell: the json figure behind each number
# in the row, in the order they appear ("file:path[*scale]"), or None for a number that is no
# bench figure. A table holding one of these rows is a bench table: its every row must be here.
FIGURES = {
    "apply to every worker ALIVE in the GCS (n 5)": [
        "node:apply_ready.indexed.ready_s.n", "node:apply_ready.indexed.ready_s.median",
        "node:apply_ready.vcjob.ready_s.median", "node:apply_ready.kuberay.ready_s.median",
        "node:apply_ready.indexed.ratio_to_kuberay"],
    "rayboot's own part of that: head, worker (n 5)": [
        "node:apply_ready.indexed.rayboot_head_s.n", "node:apply_ready.indexed.rayboot_head_s.median*1000",
        "node:apply_ready.indexed.rayboot_worker_s.median*1000"],
    "a worker waiting 60 s for an absent head: CPU, from its cgroups (n 5)": [
        None, "node:waiting.rayboot.cpu_ms.n", "node:waiting.rayboot_held.cpu_ms.median",
        "node:waiting.rayboot.cpu_ms.median", "node:waiting.kuberay.cpu_ms.median"],
    "the same: peak memory (n 5)": [
        "node:waiting.rayboot.peak_kb.n", "node:waiting.rayboot.peak_kb.median*0.001",
        "node:waiting.kuberay.peak_kb.median*0.001"],
    "worker evicted (n 5)": [
        "node:evict.rayboot.gone_s.n", None, "node:evict.rayboot.gone_s.median", "node:evict.vcjob.gone_s.median",
        "node:evict.lws.gone_s.median", "node:evict.jobset.gone_s.median", None, "node:evict.kuberay.gone_s.median"],
    "worker evicted as it joins, 0.5 s after ALIVE (n 3)": [
        None, "node:evict.joining.vcjob.gone_s.n", "node:evict.joining.vcjob.gone_s.median",
        "node:evict.joining.kuberay+sidecar.gone_s.median", "node:evict.joining.kuberay.gone_s.median"],
    "head lost to whole again, no GCS fault tolerance (n 3)": [
        "node:head_lost.vcjob.whole_s.n", "node:head_lost.vcjob.whole_s.median",
        "node:head_lost.kuberay.whole_s.median"],
    "head lost, with GCS fault tolerance: the new GCS serving, every worker's Ray kept (n 3)": [
        "node:head_lost_ft.vcjob_ft.whole_s.n", "node:head_lost_ft.vcjob_ft.whole_s.median",
        "node:head_lost_ft.indexed_ft.whole_s.median", "node:head_lost_ft.kuberay_ft.whole_s.median"],
    "worker join after the head's GCS is SERVING, p50 (p99)": [
        "latest:join_latency_ms.rayboot.p50", "latest:join_latency_ms.rayboot.p99",
        "latest:join_latency_ms.kuberay.p50", "latest:join_latency_ms.kuberay.p99"],
    "waiting 60 s for an absent head: CPU / peak RSS": [
        "latest:wait_cost.rayboot.seconds", "latest:wait_cost.rayboot.cpu_ms", "latest:wait_cost.rayboot.peak_rss_kb",
        "latest:wait_cost.kuberay.cpu_ms", "latest:wait_cost.kuberay.peak_rss_kb"],
    "exec to exec of `ray`, head healthy": ["latest:startup_ms.rayboot", "latest:startup_ms.ray_health_check"],
    "stripped static binaries": ["latest:binary_bytes.rayboot", "latest:binary_bytes.rayboot_sidecar"],
    "1,000 waiting workers on 2 cores, join p99": [
        "latest:scale.workers", "latest:machine.cores", "latest:scale.join_p99_ms"],
    "deleted busy worker (grace 30 s)": [
        "latest:shutdown.grace_period_s", "latest:shutdown.rayboot.seconds", "latest:shutdown.rayboot.exit_code",
        "latest:shutdown.ray_start_block.seconds", "latest:shutdown.ray_start_block.exit_code"],
}
# A figure: digits (a ',' between thousands, a decimal part), not part of a word (p99, v1.5) or
# of a version (2.60.0).
FIGURE = re.compile(r"(?<![\w.,])\d{1,3}(?:,\d{3})*(?:\.\d+)?(?![\w.]*\d)(?!\.\d)")


def table_rows(text):
    """[(line number, cells)] of every Markdown table row, and the tables as lists of them."""
    tables, current = [], []
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("|") and not re.match(r"^\|\s*-", line):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            current.append((n, cells))
        elif not line.startswith("|"):
            if current:
                tables.append(current)
            current = []
    return tables + ([current] if current else [])


def bench_value(spec, results):
    where, _, scale = spec.partition("*")
    name, _, path = where.partition(":")
    value = results[name]
    for key in path.split("."):
        value = value[key]
    return Decimal(repr(value)) * Decimal(scale or "1")


def shown_as(value, figure):
    """VALUE rounded as FIGURE is written (half up, as many decimals), in FIGURE's spelling."""
    decimals = len(figure.partition(".")[2])
    rounded = value.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
    return f"{rounded:,.{decimals}f}"


def check_figures():
    readme = REPO / "README.md"
    results = {p.stem: json.loads(p.read_text()) for p in (REPO / "bench" / "results").glob("*.json")}
    errors, seen, checked = [], set(), 0
    for table in table_rows(readme.read_text(encoding="utf-8")):
        if not any(cells[0] in FIGURES for _, cells in table):
            continue
        for n, cells in table[1:]:
            if cells[0] not in FIGURES:
                errors.append(f"README.md:{n}: bench row {cells[0]!r} is not in check-docs.py's FIGURES")
                continue
            seen.add(cells[0])
            figures = FIGURE.findall(" | ".join(cells))
            specs = FIGURES[cells[0]]
            if len(figures) != len(specs):
                errors.append(f"README.md:{n}: {len(figures)} figures ({', '.join(figures)}), FIGURES names {len(specs)}")
                continue
            for figure, spec in zip(figures, specs, strict=True):
                if spec is None:
                    continue
                checked += 1
                want = shown_as(bench_value(spec, results), figure)
                if want != figure:
                    errors.append(f"README.md:{n}: {figure} in {cells[0]!r}, but bench/results/{spec} is {want}")
    errors += [f"README.md no longer has the bench row {row!r}: update FIGURES in scripts/check-docs.py"
               for row in FIGURES if row not in seen]
    return errors, checked


# --- tests/FAULTS.md against the tests ---------------------------------------------------------------
CITED_TEST = re.compile(r"`((?:[\w.-]+/)*[\w.-]+\.(?:py|c))?(?:::(\w+)(?:\[[^\]`]*\])?)?`")


def check_faults():
    faults, errors, cited = REPO / "tests" / "FAULTS.md", [], 0
    for n, line in enumerate(faults.read_text(encoding="utf-8").splitlines(), 1):
        for cell in line.split("|"):
            current = None
            for m in CITED_TEST.finditer(cell):
                path, name = m.group(1), m.group(2)
                if not path and not name:
                    continue
                current = path or current
                if current is None:
                    continue
                cited += 1
                test = REPO / "tests" / current  # tests/'s, or the repository's (fuzz/...)
                test = test if test.is_file() else REPO / current
                if not test.is_file():
                    errors.append(f"tests/FAULTS.md:{n}: cites {current}, which is in neither tests/ nor the tree")
                elif name and not re.search(r"^\s*(?:async\s+)?def " + name + r"\(", test.read_text(), re.M):
                    errors.append(f"tests/FAULTS.md:{n}: cites {current}::{name}, which {current} does not define")
    return errors, cited


# --- paths named in the Markdown ------------------------------------------------------------------
# A `path` in backticks whose first part is a directory of the repository is a file, a directory,
# or a module (path.c); placeholders (test_x.c, fuzz_NAME.c, LAYER, <...>, *) are not paths.
PLACEHOLDER = re.compile(r"(?:^|[/_])(?:x|NAME|LAYER|N)(?:[._/]|$)|[<>*{}$]")


def check_paths():
    tops = {p.name for p in REPO.iterdir() if p.is_dir() and not p.name.startswith(".") and p.name != "build"}
    errors, count = [], 0
    for md in markdown_files():
        for n, line in enumerate(md.read_text(encoding="utf-8").splitlines(), 1):
            for word in re.findall(r"`([^`\s]+)`", line):
                path = word.split("::")[0].rstrip(".,:;")
                if path.split("/")[0] not in tops or "/" not in path or PLACEHOLDER.search(path) or \
                        not re.match(r"^[\w.+-]+(?:/[\w.+-]*)+$", path):
                    continue
                count += 1
                if not any((REPO / (path + suffix)).exists() for suffix in ("", ".c")):
                    errors.append(f"{md.relative_to(REPO)}:{n}: names {path}, which is not in the tree")
    return errors, count


def check_code_to_docs(binaries):
    helps = {program: (binary, help_text(binary)) for program, binary in zip(PROGRAMS, binaries, strict=True)}
    config = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    var_errors, nvars = check_read_variables(helps, config)
    flag_errors, nflags = check_flags(helps, config)
    exit_errors, nexits = check_exit_codes(helps, config)
    return var_errors + flag_errors + exit_errors, (nvars, nflags, nexits)


def main(argv):
    binaries = argv[1:] or [str(REPO / "build/bin/rayboot"), str(REPO / "build/bin/rayboot-sidecar")]
    link_errors, links, files = check_links()
    var_errors, named, documented = check_variables(binaries)
    code_errors, (nvars, nflags, nexits) = check_code_to_docs(binaries)
    figure_errors, nfigures = check_figures()
    fault_errors, ncited = check_faults()
    path_errors, npaths = check_paths()
    errors = link_errors + var_errors + code_errors + figure_errors + fault_errors + path_errors
    for e in errors:
        print(f"check-docs: {e}", file=sys.stderr)
    if errors:
        return 1
    print(f"check-docs: {links} relative links in {files} Markdown files resolve; the {named} variables "
          f"--help names are documented in docs/; the {documented} RAYBOOT_ variables of "
          f"docs/configuration.md are all still read; the {nvars} variables and {nflags} flags the sources read "
          f"and their {nexits} uses of an exit code are in --help and docs/configuration.md; {nfigures} README figures equal "
          f"bench/results; the {ncited} tests tests/FAULTS.md cites exist; {npaths} paths named in the Markdown "
          "exist")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
