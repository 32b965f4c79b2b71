"""The repository's own checks (`make lint`) can fail: each is run on a planted violation in a
temporary copy, and on the tree as it is."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHECKSRC = REPO / "scripts" / "checksrc.py"


def checksrc(*files):
    return subprocess.run([sys.executable, str(CHECKSRC), *map(str, files)], capture_output=True, text=True,
                          timeout=60)


def test_checksrc_passes_on_the_tree():
    r = checksrc()
    assert r.returncode == 0, r.stderr


def test_checksrc_fails_on_each_planted_violation(tmp_path):
    lib = tmp_path / "lib" / "base"
    lib.mkdir(parents=True)
    planted = lib / "widget.c"
    planted.write_text("""/* A planted file: one of each thing HACKING.md forbids. */
#include <stdlib.h>
#include <string.h>

static int quiet(const char *s)
{
    /* atoi( in a comment and "sscanf(" in a string are not calls */
    return s[0] == 'x' ? 1 : 0;
}

int widget_count(const char *s)
{
    char buf[8];
    strcpy(buf, s);
    return atoi(buf) + quiet("sscanf(");
}

void widget_wipe(unsigned char *token_buf, size_t n)
{
    volatile unsigned char *v = token_buf;
    while (n--)
        *v++ = 0;
    memset(token_buf, 0, n);
}

int gadget_size(void)
{
    return fork() > 0;
}

int widget_long(void)
{
    int x = 0;
""" + "    x++;\n" * 81 + """    return x;
}
""")
    r = checksrc(planted)
    assert r.returncode == 1
    found = r.stderr.splitlines()
    for what in ("widget.c:14: strcpy() is banned", "widget.c:15: atoi() is banned",
                 "widget.c:20: a hand-rolled wipe through a volatile pointer: use explicit_bzero",
                 "widget.c:23: a secret cleared with memset: use explicit_bzero",
                 "widget.c:26: gadget_size() is public but lacks its module's prefix (widget_)",
                 "widget.c:28: fork outside lib/base/helper.c and proc.c: start a helper with helper_start",
                 "widget.c:31: widget_long() is 83 lines long (at most 80)"):
        assert any(what in line for line in found), f"{what!r} not in:\n{r.stderr}"
    assert len(found) == 7, r.stderr  # nothing in the comment, the string or quiet()


def tree_copy(dst):
    """The repository's tracked files (and new ones), without build/, into DST: the docs check run
    on a copy can be given a drifted doc without touching the tree."""
    out = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         capture_output=True, text=True, check=True, timeout=30)
    for name in filter(None, out.stdout.split("\0")):
        src = REPO / name
        if src.is_file():
            (dst / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst / name)
    return dst


def check_docs(root, rayboot_bin, sidecar_bin):
    return subprocess.run([sys.executable, str(root / "scripts" / "check-docs.py"), str(rayboot_bin),
                           str(sidecar_bin)], capture_output=True, text=True, timeout=120)


def edit(path, old, new):
    text = path.read_text()
    assert old in text, f"{old!r} is not in {path}"
    path.write_text(text.replace(old, new, 1))


def test_check_docs_fails_on_each_drifted_doc(tmp_path, rayboot_bin, sidecar_bin):
    root = tree_copy(tmp_path)
    r = check_docs(root, rayboot_bin, sidecar_bin)
    assert r.returncode == 0, r.stderr  # the tree as it is
    # A variable the code reads that no doc names; an exit code dropped from the table; a README
    # figure that is not the bench's; a test FAULTS.md cites that is gone; a file HACKING names.
    edit(root / "init" / "submit.c", 'env_lookup_nonempty(envp, "RAYBOOT_SUBMISSION_ID")',
         'env_lookup_nonempty(envp, "RAYBOOT_PLANTED")')
    edit(root / "docs" / "configuration.md", "| 73 |", "| 74 |")
    bench = json.loads((root / "bench" / "results" / "latest.json").read_text())
    p50 = bench["join_latency_ms"]["rayboot"]["p50"]
    planted = f"{p50 + 0.1:.1f}"
    edit(root / "README.md", f"| {p50:.1f} ms (", f"| {planted} ms (")
    (root / "tests" / "contract" / "test_submit.py").write_text("")
    edit(root / "HACKING.md", "`lib/plan/lws.c`", "`lib/plan/lvs.c`")
    r = check_docs(root, rayboot_bin, sidecar_bin)
    assert r.returncode == 1
    for what in ("init/submit.c reads RAYBOOT_PLANTED, which docs/configuration.md does not document",
                 "rayboot reads RAYBOOT_PLANTED (init/submit.c), which its --help does not name",
                 "init/install.c exits 73 (EXIT_CANT_CREATE), which docs/configuration.md does not list",
                 f": {planted} in ", f"but bench/results/latest:join_latency_ms.rayboot.p50 is {p50:.1f}",
                 "which contract/test_submit.py does not define",
                 "HACKING.md:", "names lib/plan/lvs.c, which is not in the tree"):
        assert what in r.stderr, f"{what!r} not in:\n{r.stderr}"


def test_check_leftovers_counts_only_what_the_suite_left(tmp_path):
    """A process of the checkout's build that was running when the suite began (a run killed by
    hand left it) is named but not counted; one started after fails the check, even under the
    same program."""
    build = tmp_path / "build"
    build.mkdir()
    sleeper = build / "sleeper"
    shutil.copy("/bin/sleep", sleeper)
    before = tmp_path / "before"
    script = [sys.executable, str(REPO / "scripts" / "check-leftovers.py")]
    earlier = subprocess.Popen([str(sleeper), "60"])
    later = None
    try:
        r = subprocess.run([*script, "--record", str(before), str(build)], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and f"process {earlier.pid}:" in r.stderr, r.stderr
        r = subprocess.run([*script, "--since", str(before), str(build)], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and "not counted" in r.stderr, r.stderr
        later = subprocess.Popen([str(sleeper), "60"])
        r = subprocess.run([*script, "--since", str(before), str(build)], capture_output=True, text=True, timeout=60)
        assert r.returncode == 1, r.stderr
        assert f"check-leftovers: process {later.pid}: {sleeper} 60\n" in r.stderr, r.stderr
        assert "the suite left 1 thing behind" in r.stderr, r.stderr
    finally:
        for p in (earlier, later):
            if p:
                p.kill()
                p.wait()
    r = subprocess.run([*script, "--since", str(tmp_path / "missing"), str(build)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2 and "--since" in r.stderr and "missing" in r.stderr, r.stderr
