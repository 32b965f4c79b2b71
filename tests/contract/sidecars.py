"""rayboot-sidecar as the contract tests run it: in a PID namespace of its own (unshare --pid
--mount-proc: after SIGTERM it waits for the Ray processes it can see, and on this machine it
could otherwise see other tests'), on ports the kernel picks (both its ports set to 0), with
helpers for its two ports and for `rayboot-sidecar drain`."""
import json
import os
import pathlib
import re
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

# The address of the sidecar's own Ray node in the fake GCS.
SIDECAR_NODE_IP = "10.9.9.9"


def drain_hook(binary, port, *args, timeout=60, env=None, pid1=None, pid1_name="rayboot", pid1_blocks_after=None):
    """`rayboot-sidecar drain ARGS` against 127.0.0.1:PORT, whoever holds it: (exit code, JSON
    answer or None, stderr). With PID1 (a directory), the hook runs as a preStop hook sees its
    container: in a PID namespace of its own whose PID 1 is PID1/PID1_NAME (a shell under that name,
    which waits for the hook): rayboot, as in a pod whose Ray container runs rayboot, or ray, as in
    KubeRay's, where it is Ray's `ray start --block`. With PID1_BLOCKS_AFTER (seconds), that shell
    opens a file named ray_process_exit.log that long after the hook started, and holds it open, as
    `ray start` does once its wait for its node is over."""
    argv = [str(binary), "drain", *args]
    if pid1:
        shell = pathlib.Path(pid1) / pid1_name
        if not shell.exists():
            shell.symlink_to("/bin/sh")
        # The hook's argv comes in as the shell's own arguments; `exit` keeps the shell from exec'ing it.
        script = '"$@"; exit $?'
        if pid1_blocks_after is not None:
            script = (f'"$@" & hook=$!; sleep {pid1_blocks_after}; exec 3>"{pid1}/ray_process_exit.log"; '
                      'wait $hook; exit $?')
        argv = ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child", str(shell), "-c", script,
                pid1_name, *argv]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                         env={"PATH": "/usr/bin:/bin", "RAYBOOT_SIDECAR_DRAIN_PORT": str(port), **(env or {})})
    return out.returncode, json.loads(out.stdout) if out.stdout.strip() else None, out.stderr


class Sidecar:
    def __init__(self, binary, env, tmp_path):
        self.binary = binary
        self.env = env
        self.log = tmp_path / f"sidecar-{time.monotonic_ns()}.err"
        self.proc = subprocess.Popen(["unshare", "--pid", "--fork", "--mount-proc", "--kill-child", str(binary)],
                                     env=env, stdout=subprocess.DEVNULL, stderr=open(self.log, "w"))
        self.port = self.drain_port = None
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and self.port is None:
            m = re.search(r"serving on port (\d+): .*; drain on 127\.0\.0\.1:(\d+);", self.stderr)
            if m:
                self.port, self.drain_port = int(m.group(1)), int(m.group(2))
            elif self.proc.poll() is not None:
                raise AssertionError(f"the sidecar exited {self.proc.returncode}:\n{self.stderr}")
            time.sleep(0.02)
        assert self.port, self.stderr

    @property
    def stderr(self):
        return self.log.read_text()

    def pid(self):
        """The sidecar itself, the child of unshare."""
        for _ in range(100):
            try:
                kids = pathlib.Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text().split()
            except OSError:
                kids = []
            if kids:
                return int(kids[0])
            time.sleep(0.02)
        raise AssertionError("no sidecar process under unshare")

    def get(self, path, method="GET", timeout=15, port=None, source=None):
        """(status, body) of one request to the probes port (or PORT), from SOURCE if given."""
        if source:
            conn = socket.create_connection(("127.0.0.1", port or self.port), timeout=timeout,
                                            source_address=(source, 0))
            with conn:
                conn.sendall(f"{method} {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
                reply = b""
                while chunk := conn.recv(4096):
                    reply += chunk
            head, _, body = reply.partition(b"\r\n\r\n")
            return int(head.split()[1]), body.decode()
        req = urllib.request.Request(f"http://127.0.0.1:{port or self.port}{path}", method=method)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def post_drain(self, path="/drain", method="POST", timeout=30):
        """A raw request to the drain port."""
        return self.get(path, method=method, timeout=timeout, port=self.drain_port)

    def drain(self, *args, timeout=60, env=None, port=None, **pid1):
        """`rayboot-sidecar drain ARGS`, as a preStop exec hook runs it (with ENV added, on PORT if
        given, under PID 1 as drain_hook's pid1 arguments say): (exit code, JSON answer or None,
        stderr)."""
        return drain_hook(self.binary, port or self.drain_port, *args, timeout=timeout, env=env, **pid1)

    def terminate(self):
        os.kill(self.pid(), signal.SIGTERM)
        return self.proc.wait(timeout=20)

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()  # --kill-child takes the sidecar with it
            self.proc.wait(timeout=5)
