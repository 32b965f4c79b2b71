#!/usr/bin/env python3
"""The documentation still matches the tree and the binaries (`make lint`).

1. Every relative link in the repository's Markdown files resolves to a file or directory, and a
   #anchor into a Markdown file names one of its headings (GitHub's slugs).
2. Every environment variable that `rayboot --help` or `rayboot-sidecar --help` names is
   documented somewhere in docs/.
3. Every RAYBOOT_ variable docs/configuration.md documents is still named by a --help or by the
   C sources, so nothing documented is gone.

Usage: check-docs.py [RAYBOOT RAYBOOT_SIDECAR]   (default build/bin/rayboot build/bin/rayboot-sidecar)
"""
import os
import re
import subprocess
import sys
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


def main(argv):
    binaries = argv[1:] or [str(REPO / "build/bin/rayboot"), str(REPO / "build/bin/rayboot-sidecar")]
    link_errors, links, files = check_links()
    var_errors, named, documented = check_variables(binaries)
    for e in link_errors + var_errors:
        print(f"check-docs: {e}", file=sys.stderr)
    if link_errors or var_errors:
        return 1
    print(f"check-docs: {links} relative links in {files} Markdown files resolve; the {named} variables "
          f"--help names are documented in docs/; the {documented} RAYBOOT_ variables of "
          "docs/configuration.md are all still read")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
