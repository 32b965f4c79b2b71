"""The prober's seccomp allowlist (lib/confine/sandbox.c) is the smallest that works (issue 9).

Every rule is either EXERCISED: a test build of rayboot without it (build/knockout/NAME/rayboot,
`make` builds it from the release objects with only lib/confine/sandbox.c compiled again) runs a scenario
that takes the rule's path, and its prober is killed by SIGSYS, named in rayboot's log, with the
documented exit code; or RARE: kept for a path no test here can take, with the reason. The release
binary runs every scenario to its end without a SIGSYS, which is also what shows that the calls
dropped from the list (exit, rt_sigprocmask, ioctl TIOCGWINSZ) were never needed.

Scenarios are in seccomp_scenario.py; each runs in its own network and PID namespaces.

The worker's watch on its head's rendezvous (init/rdvwatch.c) has a filter of its own, five rules
named watch-CALL: each is knocked out the same way (build/knockout/watch-CALL/rayboot) and the
worker, joined to a release head, reports its watch killed by SIGSYS on the path that needs it."""
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import time

import pytest

from test_rendezvous_finished import free_port, head, watch_pid

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
SANDBOX_C = REPO / "lib" / "confine" / "sandbox.c"
KNOCKOUT = REPO / "build" / "knockout"
SIGSYS_LINE = "was killed by SIGSYS: it made a system call outside its seccomp allowlist"
TEST_BUILD_MARKER = b"rayboot seccomp test build, not for release"

# rule -> (scenario, the build variant's extra, rayboot's exit code when the prober dies there).
# 70 (EX_SOFTWARE): the prober died while the worker waited for its head; rayboot exits saying so.
# 0: the run's own outcome stands and a warning names the SIGSYS: the prober died on its way out
# after a graceful SIGTERM (exit_group), or in the head's wait for its workers (mremap), after which
# the head runs its command anyway.
EXERCISED = {
    "socket-AF_INET-SOCK_DGRAM-0": ("dns-udp", "", 70),
    "socket-AF_INET-SOCK_STREAM-0": ("dns-udp", "", 70),
    "socket-AF_INET-SOCK_STREAM-IPPROTO_TCP": ("dns-udp", "", 70),
    "socket-AF_INET6-SOCK_DGRAM-0": ("ipv6", "", 70),
    "socket-AF_INET6-SOCK_STREAM-0": ("ipv6", "", 70),
    "socket-AF_INET6-SOCK_STREAM-IPPROTO_TCP": ("ipv6", "", 70),
    "connect": ("dns-udp", "", 70),
    "fcntl-F_GETFL": ("dns-udp", "", 70),
    "fcntl-F_SETFL": ("dns-udp", "", 70),
    "fcntl-F_SETFD": ("dns-udp", "", 70),
    "setsockopt-TCP_NODELAY": ("dns-udp", "", 70),
    "getsockopt": ("dns-udp", "", 70),
    "getsockname": ("dns-udp", "", 70),
    "poll": ("dns-udp", "", 70),
    "sendto": ("dns-udp", "", 70),
    "recvfrom": ("dns-udp", "", 70),
    "writev": ("dns-tcp-many", "", 70),
    "close": ("dns-udp", "", 70),
    "mmap": ("dns-udp", "", 70),
    "munmap": ("dns-udp", "", 70),
    "madvise": ("not-serving", "", 70),
    "mremap": ("big-cluster", "", 0),
    "brk": ("dns-tcp-many", "", 70),
    # brk answered ENOMEM in this build, as when the heap cannot grow: malloc's metadata then comes
    # from mmap(PROT_NONE) + mprotect(PROT_READ|PROT_WRITE).
    "mprotect": ("dns-tcp-many", "+nobrk", 70),
    "restart_syscall": ("stopped", "", 70),
    "exit_group": ("dns-udp", "", 0),
}

RARE = {
    "clock_gettime": "musl reads the clock through the vDSO, which answers without a syscall on this "
                     "machine's clocksource; the vDSO itself makes the real syscall when the clocksource "
                     "has no vDSO support (xen, hpet, acpi_pm: common on cloud VMs) or no vDSO is mapped, "
                     "and no test here can switch the host's clocksource",
}

# What each scenario must show with the full allowlist, so that it really takes its paths.
SCENARIO_PROOF = {
    "dns-udp": lambda r: ["udp", "gcs.test", 1] in r["dns"] and "node 127.0.0.1 left the cluster" in r["stderr"],
    "dns-tcp-many": lambda r: ["tcp", "gcs.test", 1] in r["dns"],
    "ipv6": lambda r: ["udp", "gcs.test", 28] in r["dns"] and "SERVING at ::1" in r["stderr"],
    "not-serving": lambda r: "(150 failed attempts)" in r["stderr"],
    "big-cluster": lambda r: "20000 of 1 workers joined" in r["stderr"] and "the command exited (0)" in r["stderr"],
    "stopped": lambda r: r["stopped_prober"] and "SERVING at 127.0.0.1 after" in r["stderr"]
                         and "(0 failed attempts)" in r["stderr"],
}


def allowlist_rules() -> list:
    """The rule names in lib/confine/sandbox.c's prober_rules, in order."""
    text = SANDBOX_C.read_text()
    body = text[text.index("prober_rules[] = {"):]
    body = body[:body.index("\n};")]
    pattern = r'^\s*ALLOW(?:\((\w+)\)|_IF2?\("([^"]+)"|_SOCKET\("([^"]+)")'
    return [next(g for g in m if g) for m in re.findall(pattern, body, re.M)]


def variant(rule: str) -> str:
    return rule + EXERCISED[rule][1]


def run_scenario(binary: pathlib.Path, scenario: str, tmp_path: pathlib.Path) -> dict:
    workdir = tmp_path / f"{scenario}-{binary.parent.name}"
    workdir.mkdir()
    out = subprocess.run(["unshare", "--net", "--pid", "--fork", "--kill-child", "--mount-proc",
                          sys.executable, str(HERE / "seccomp_scenario.py"), scenario, str(binary), str(workdir)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.fixture(scope="session")
def knockouts():
    """Builds every knockout variant (and the control for +nobrk) in one make run."""
    names = sorted({variant(r) for r in EXERCISED} | {"none+nobrk"})
    targets = [f"build/knockout/{n}/rayboot" for n in names]
    out = subprocess.run(["make", "-j2", "-C", str(REPO), *targets], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    return {n: KNOCKOUT / n / "rayboot" for n in names}


def test_every_rule_is_proven_needed_or_named_rare():
    rules = allowlist_rules()
    assert len(rules) == len(set(rules)), rules
    assert len(rules) >= 20, f"the rule parser found only {rules}"
    assert not set(EXERCISED) & set(RARE)
    assert set(rules) == set(EXERCISED) | set(RARE), (
        f"not covered: {sorted(set(rules) - set(EXERCISED) - set(RARE))}; "
        f"no longer in the list: {sorted(set(EXERCISED) | set(RARE) - set(rules))}")
    assert all(len(reason) > 40 for reason in RARE.values())


def test_every_rule_has_its_reason_in_the_source_and_the_docs():
    text = SANDBOX_C.read_text()
    body = text[text.index("prober_rules[] = {"):text.index("\n};", text.index("prober_rules[] = {"))]
    for line in body.splitlines():
        if re.match(r"\s*ALLOW", line):
            assert re.search(r"/\* \S.{10,} \*/\s*$", line), f"no one-line reason: {line.strip()}"
    doc = (REPO / "docs" / "security.md").read_text()
    section = doc[doc.index("\n## The prober's seccomp allowlist"):]
    section = section[:section.index("\n#", 10)]
    for rule in allowlist_rules():
        assert f"| `{rule}` |" in section, f"docs/security.md's allowlist table has no row for {rule}"


def test_release_binaries_are_not_test_builds(rayboot_bin, sidecar_bin, knockouts):
    assert TEST_BUILD_MARKER not in rayboot_bin.read_bytes()
    assert TEST_BUILD_MARKER not in sidecar_bin.read_bytes()
    assert TEST_BUILD_MARKER in knockouts["none+nobrk"].read_bytes()


@pytest.mark.parametrize("scenario", sorted(SCENARIO_PROOF))
def test_release_allowlist_runs_the_scenario(rayboot_bin, scenario, tmp_path):
    r = run_scenario(rayboot_bin, scenario, tmp_path)
    assert r["code"] == 0 and r["ray_started"], r
    assert "SIGSYS" not in r["stderr"], r["stderr"]
    assert SCENARIO_PROOF[scenario](r), r


def test_malloc_without_brk_works_with_the_allowlist(knockouts, tmp_path):
    """The control for the mprotect knockout: brk failing is survivable with the full list."""
    r = run_scenario(knockouts["none+nobrk"], "dns-tcp-many", tmp_path)
    assert r["code"] == 0 and r["ray_started"] and "SIGSYS" not in r["stderr"], r
    assert SCENARIO_PROOF["dns-tcp-many"](r), r


@pytest.mark.parametrize("rule", sorted(EXERCISED))
def test_rule_is_needed(knockouts, rule, tmp_path):
    scenario, _, code = EXERCISED[rule]
    r = run_scenario(knockouts[variant(rule)], scenario, tmp_path)
    assert SIGSYS_LINE in r["stderr"], f"without {rule}, {scenario} still works: the rule is not needed\n{r}"
    assert r["code"] == code, r


# ---- the worker's watch (init/rdvwatch.c) ----------------------------------------------------------

RDVWATCH_C = REPO / "init" / "rdvwatch.c"
WATCH_SIGSYS = "the watch on the head's rendezvous ended: killed by SIGSYS"
# rule -> the path that takes it: at once (connected to a serving head, the watch confines itself,
# frees the filter's memory, polls and reads SERVING), stopped (SIGSTOP and SIGCONT while it
# polls), finished (the head's command ends: it exits).
WATCH_EXERCISED = {
    "watch-poll": "at-once",
    "watch-recvfrom": "at-once",
    "watch-restart_syscall": "stopped",
    "watch-exit_group": "finished",
}
WATCH_RARE = {
    "watch-munmap": "seccomp_release frees the filter's memory once it is loaded; musl's malloc unmaps a "
                    "group only when building the filter needed a new one, which depends on the heap rayboot "
                    "had when it forked the watch: its knockout ran to its end here, so no test can take it",
}


def watch_rules() -> list:
    text = RDVWATCH_C.read_text()
    body = text[text.index("rdvwatch_rules[] = {"):]
    body = body[:body.index("\n};")]
    return ["watch-" + m for m in re.findall(r"^\s*WATCH_ALLOW\((\w+)\)", body, re.M)]


@pytest.fixture(scope="session")
def watch_knockouts():
    targets = [f"build/knockout/{rule}/rayboot" for rule in sorted(WATCH_EXERCISED)]
    out = subprocess.run(["make", "-j2", "-C", str(REPO), *targets], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    return {rule: KNOCKOUT / rule / "rayboot" for rule in WATCH_EXERCISED}


def test_every_watch_rule_is_proven_needed_or_named_rare():
    rules = watch_rules()
    assert len(rules) >= 4, f"the rule parser found only {rules}"
    assert set(rules) == set(WATCH_EXERCISED) | set(WATCH_RARE), rules
    assert all(len(reason) > 40 for reason in WATCH_RARE.values())


def run_watch_path(run, gcs, tmp_path, path, binary=None):
    """A release head, a worker (binary) joined to it, its watch taken down PATH. The worker's log."""
    rdv, done = free_port(), tmp_path / "done"
    h = head(run, gcs, rdv, done)
    h.wait_for_log("is SERVING")
    w = run({"RAYBOOT_ROLE": "worker", "RAYBOOT_HEAD_ADDRESS": f"127.0.0.1:{gcs.port}",
             "RAYBOOT_POD_IP": "127.0.0.1", "RAYBOOT_RENDEZVOUS_PORT": str(rdv)}, ["--log-format=json"],
            binary=binary)
    w.wait_for_log("started ray")
    pid = watch_pid(w)
    time.sleep(0.5)
    if path == "stopped":
        os.kill(pid, signal.SIGSTOP)
        time.sleep(0.2)
        os.kill(pid, signal.SIGCONT)
        time.sleep(0.5)
    done.touch()
    assert w.wait(15) == 0, w.stderr  # through the rendezvous or, its watch dead, the key
    return w.stderr


@pytest.mark.parametrize("path", ["at-once", "stopped", "finished"])
def test_release_watch_takes_every_path_without_sigsys(run, gcs, tmp_path, path):
    stderr = run_watch_path(run, gcs, tmp_path, path)
    assert "SIGSYS" not in stderr, stderr
    assert "the head's command finished (told by its rendezvous)" in stderr, stderr


@pytest.mark.parametrize("rule", sorted(WATCH_EXERCISED))
def test_watch_rule_is_needed(run, gcs, tmp_path, watch_knockouts, rule):
    stderr = run_watch_path(run, gcs, tmp_path, WATCH_EXERCISED[rule], binary=watch_knockouts[rule])
    assert WATCH_SIGSYS in stderr, f"without {rule} the watch still works: the rule is not needed\n{stderr}"
