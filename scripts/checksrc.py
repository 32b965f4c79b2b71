#!/usr/bin/env python3
"""HACKING.md's rules that a machine can check, in the C (`make lint`), after curl's checksrc:

1. No banned call: the C library's ways of reading a number, formatting or copying that do not
   bound or check (`atoi`, `strtod`, `sscanf`, `sprintf`, `strcpy`, ...), and the shell
   (`system`, `popen`). "One way to read an integer": lib/base/number.
2. A secret is wiped with `explicit_bzero`: no hand-rolled loop through a `volatile` pointer, no
   `memset` of a buffer whose name says it holds a secret (a compiler may drop either as a dead
   store, or a reader may not see that it was meant).
3. Public names carry the module's prefix: a function that is not `static` in lib/LAYER/x.c is
   named `x` or `x_...` (or one of PREFIX_ALIASES' prefixes, each with its reason).
4. No function over 80 lines.
5. fork() only in lib/base/helper.c (a helper running our code: started, stopped and reaped one
   way) and lib/base/proc.c (proc_spawn: a child that execs).

Comments and string literals are blanked before anything is matched. Prints FILE:LINE: what is
wrong, and exits 1 if anything is.

Usage: checksrc.py [FILE.c|FILE.h ...]   (default: every C file under lib/, init/, sidecar/)
"""
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# The shipped code. Not fuzz/: a harness's oracle reads the input a second way on purpose
# (fuzz_cgroup.c's strtoull checks cgroup.c's own reading), so it must not be the same way.
SOURCE_DIRS = ("lib", "init", "sidecar")
FUNCTION_LINES_MAX = 80

NUMBER = "lib/base/number.h (number_parse, number_parse_trimmed, number_parse_millis)"
BANNED = {
    "atoi": NUMBER, "atol": NUMBER, "atoll": NUMBER, "atof": NUMBER,
    "strtol": NUMBER, "strtoul": NUMBER, "strtoll": NUMBER, "strtoull": NUMBER,
    "strtod": NUMBER, "strtof": NUMBER, "strtold": NUMBER,
    "sscanf": NUMBER + " on the field you found", "scanf": NUMBER, "fscanf": NUMBER, "vsscanf": NUMBER,
    "sprintf": "text_format (lib/base/text.h) or snprintf", "vsprintf": "text_format or vsnprintf",
    "strcpy": "text_copy (lib/base/text.h)", "strcat": "text_format (lib/base/text.h)",
    "strncpy": "text_copy (lib/base/text.h)", "strncat": "text_format (lib/base/text.h)",
    "gets": "fgets", "strtok": "a bounded scan (lib/base/lines.h)",
    "tmpnam": "mkstemp", "mktemp": "mkstemp",
    "system": "execve with an argv array", "popen": "execve with an argv array",
}
BANNED_CALL = re.compile(r"(?<![\w.>])(" + "|".join(sorted(BANNED)) + r")\s*\(")
# A pointer to volatile bytes being written through: the hand-rolled wipe.
VOLATILE_WIPE = re.compile(r"\bvolatile\s+(?:unsigned\s+char|signed\s+char|char|uint8_t|u?int\w*)\s*\*")
SECRET_NAME = r"\w*(?:secret|token|passw|cred|key|auth|hmac)\w*"
SECRET_MEMSET = re.compile(r"\bmemset\s*\(\s*(?:&|\(void\s*\*\))?\s*[\w.>-]*?\b" + SECRET_NAME + r"\b", re.I)
FORK = re.compile(r"(?<![\w.>])v?fork\s*\(")
FORK_HOMES = ("lib/base/helper.c", "lib/base/proc.c")
# A function definition: its head (no ';', '{', '}', '=' or '#' in it), then '{' at column 0.
DEFINITION = re.compile(r"^([A-Za-z_][^;{}=#]*?)\b([A-Za-z_]\w*)\s*\(([^;{}]*?)\)\s*\n\{", re.M)

# Public names of a module that are not its file's stem, and why (HACKING: when a rule makes the
# code worse, say why and break it).
PREFIX_ALIASES = {
    "lib/base/flags.c": ("flag_",),  # one flag at a time: flag_next, flag_refuse_value
    "lib/base/sha256.c": ("hmac_",),  # HMAC-SHA256 (RFC 2104) is its own construction on sha256
    "lib/net/address.c": ("port_",),  # port_parse: the port of an address, also read alone
    "lib/net/grpc_frame.c": ("grpc_",),  # grpc's framing, split from grpc.c for the fuzzer
    "lib/net/protobuf.c": ("pb_",),  # the wire format's usual short name
    "lib/plan/plandata.c": ("plan_",),  # struct plan's own init, free and names
    "lib/plan/pluginargs.c": ("plugin_args_",),  # struct plugin_args's
    "lib/ray/gcswait_loop.c": ("gcswait_",),  # gcswait's loop, split from gcswait.c
    "lib/ray/rdvmsg.c": ("rendezvous_",),  # the rendezvous messages both sides speak
}


def blank(text):
    """TEXT with comments, string and character literals replaced by spaces, newlines kept, so
    that line numbers hold and nothing in prose or a message is taken for code."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j - 1]) + (c if j - 1 > i else ""))
            i = j
            continue
        else:
            out.append(c)
            i += 1
            continue
        out.append(re.sub(r"[^\n]", " ", text[i:j]))
        i = j
    return "".join(out)


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def body_end(code, start):
    """The position of the '}' that closes the '{' just before START."""
    depth = 1
    for i in range(start, len(code)):
        if code[i] == "{":
            depth += 1
        elif code[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    return len(code)


def module_prefixes(rel):
    """The prefixes a public function of REL may carry: None when REL is no lib/ module."""
    parts = Path(rel).parts[-3:]  # lib/LAYER/x.c, also in a copy of the tree elsewhere
    if len(parts) != 3 or parts[0] != "lib" or not parts[2].endswith(".c"):
        return None
    return (Path(rel).stem + "_",) + PREFIX_ALIASES.get("/".join(parts), ())


def check(path, rel):
    code = blank(path.read_text(encoding="utf-8", errors="replace"))
    problems = []
    for m in BANNED_CALL.finditer(code):
        problems.append((line_of(code, m.start()), f"{m.group(1)}() is banned: use {BANNED[m.group(1)]}"))
    for m in VOLATILE_WIPE.finditer(code):
        problems.append((line_of(code, m.start()), "a hand-rolled wipe through a volatile pointer: use explicit_bzero"))
    if not rel.endswith(FORK_HOMES):
        for m in FORK.finditer(code):
            problems.append((line_of(code, m.start()), "fork outside lib/base/helper.c and proc.c: start a helper "
                             "with helper_start, a program with proc_spawn"))
    for m in SECRET_MEMSET.finditer(code):
        problems.append((line_of(code, m.start()), "a secret cleared with memset: use explicit_bzero"))
    prefixes = module_prefixes(rel)
    for m in DEFINITION.finditer(code):
        head, name = m.group(1), m.group(2)
        if head.lstrip().startswith(("typedef", "return", "else")) or name in ("if", "for", "while", "switch"):
            continue
        line = line_of(code, m.start(2))
        end = body_end(code, m.end())
        length = code.count("\n", m.end(), end) - 1
        if length > FUNCTION_LINES_MAX:
            problems.append((line, f"{name}() is {length} lines long (at most {FUNCTION_LINES_MAX}): split it"))
        public = not re.search(r"\bstatic\b", head)
        if public and prefixes and name != Path(rel).stem and not name.startswith(prefixes):
            problems.append((line, f"{name}() is public but lacks its module's prefix ({' or '.join(prefixes)})"))
    return [(rel, line, what) for line, what in sorted(problems)]


def default_files():
    for d in SOURCE_DIRS:
        yield from sorted((REPO / d).rglob("*.[ch]"))


def main(argv):
    files = [Path(a).resolve() for a in argv] if argv else list(default_files())
    problems = []
    for f in files:
        try:
            rel = str(f.relative_to(REPO))
        except ValueError:
            rel = str(f)
        problems += check(f, rel)
    for rel, line, what in problems:
        print(f"checksrc: {rel}:{line}: {what}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
