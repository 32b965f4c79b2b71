#!/usr/bin/env python3
"""Reads other processes' /proc/PID/environ and /proc/PID/mem (every readable mapping listed in
/proc/PID/maps) as whoever runs it, and says for each PID whether a secret (read from stdin, so
that it is in no argv) is there. Prints one JSON object: PID -> {"environ": ..., "mem": ...}, each
"token", "clean" or "denied: <why>"; "mem_bytes": how many bytes of memory were read.

    python3 proc_reader.py PID... < secret"""
import json
import sys

CHUNK = 1 << 20
SKIP = ("[vvar]", "[vvar_vclock]", "[vsyscall]")  # not readable through /proc/PID/mem


def look_environ(pid: int, secret: bytes) -> str:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return "token" if secret in f.read() else "clean"
    except OSError as e:
        return f"denied: {e.strerror}"


def regions(pid: int) -> list:
    out = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            fields = line.split()
            if fields[1].startswith("r") and not (len(fields) > 5 and fields[5] in SKIP):
                start, end = (int(x, 16) for x in fields[0].split("-"))
                out.append((start, end))
    return out


def look_mem(pid: int, secret: bytes) -> tuple:
    """(verdict, bytes read); chunks overlap by len(secret) - 1, so no match is cut in two."""
    total = 0
    try:
        maps = regions(pid)
        mem = open(f"/proc/{pid}/mem", "rb", buffering=0)
    except OSError as e:
        return f"denied: {e.strerror}", 0
    with mem:
        for start, end in maps:
            at, tail = start, b""
            while at < end:
                try:
                    mem.seek(at)
                    data = mem.read(min(CHUNK, end - at))
                except OSError:
                    break  # a page that cannot be read (a guard, a hole in a file mapping)
                if not data:
                    break
                total += len(data)
                if secret in tail + data:
                    return "token", total
                tail = data[-(len(secret) - 1):]
                at += len(data)
    return "clean", total


def main():
    secret = sys.stdin.buffer.read().strip()
    assert len(secret) >= 16, "a secret that short would match by chance"
    report = {}
    for pid in map(int, sys.argv[1:]):
        mem, read = look_mem(pid, secret)
        report[pid] = {"environ": look_environ(pid, secret), "mem": mem, "mem_bytes": read}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
