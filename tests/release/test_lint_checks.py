"""The repository's own checks (`make lint`) can fail: each is run on a planted violation in a
temporary copy, and on the tree as it is."""
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
    return 1;
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
                 "widget.c:31: widget_long() is 83 lines long (at most 80)"):
        assert any(what in line for line in found), f"{what!r} not in:\n{r.stderr}"
    assert len(found) == 6, r.stderr  # nothing in the comment, the string or quiet()
