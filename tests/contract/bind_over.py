"""Runs a program with one path of the host covered by another (a bind mount in a private mount
namespace that goes away with the process), as when a container runtime mounts its own file over
/etc/resolv.conf. Needs root.

Usage: bind_over.py SOURCE TARGET -- PROGRAM ARG..."""
import os
import sys

from readonly_root import CLONE_NEWNS, MS_BIND, MS_PRIVATE, MS_REC, check, libc


def main(argv) -> None:
    sep = argv.index("--")
    (source, target), program = argv[1:sep], argv[sep + 1:]
    check(libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    check(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate /")
    check(libc.mount(source.encode(), target.encode(), None, MS_BIND, None), f"mount --bind {source} {target}")
    os.execv(program[0], program)


if __name__ == "__main__":
    main(sys.argv)
