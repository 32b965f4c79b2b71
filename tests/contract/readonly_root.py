"""Runs a program with the root filesystem read-only, as a pod with `readOnlyRootFilesystem: true`
sees it: a private mount namespace (it goes away with the process), "/" remounted read-only in
it, and only the directories named as writable left writable (bind mounts, like a pod's
emptyDir). /proc, /sys and /dev are mounts of their own and stay as they are. Needs root.

Usage: readonly_root.py WRITABLE_DIR... -- PROGRAM ARG...
Exits 97 if "/" is still writable after the remount, so a test cannot pass by accident."""
import ctypes
import os
import sys

CLONE_NEWNS = 0x00020000
MS_RDONLY, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 0x1, 0x20, 0x1000, 0x4000, 0x40000

libc = ctypes.CDLL(None, use_errno=True)
libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]
libc.unshare.argtypes = [ctypes.c_int]


def check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def main(argv) -> None:
    sep = argv.index("--")
    writable, program = argv[1:sep], argv[sep + 1:]
    check(libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    # Nothing done here may leak back to the host's mount table.
    check(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate /")
    for d in writable:
        check(libc.mount(d.encode(), d.encode(), None, MS_BIND, None), f"mount --bind {d}")
    check(libc.mount(None, b"/", None, MS_REMOUNT | MS_BIND | MS_RDONLY, None), "mount -o remount,bind,ro /")
    if os.access("/", os.W_OK) or not all(os.access(d, os.W_OK) for d in writable):
        print("readonly_root.py: the remount did not take", file=sys.stderr)
        sys.exit(97)
    os.execv(program[0], program)


if __name__ == "__main__":
    main(sys.argv)
