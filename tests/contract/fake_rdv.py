"""A head's rendezvous as the tests play it (or a stranger on the head's port): holds every
connection and, once told to speak (at once with speak=True), writes SERVING to each, held or new
(and FINISHED with finished=True), then closes it. With token, it speaks version 2 as the head
does (lib/ray/rdvauth.c), written here from the wire format alone: it reads the worker's hello
and tags each answer with HMAC-SHA256(key, "RAYBOOT-RDV/2\\n" nonce WORD "\\n" cluster-id), where
key is HMAC-SHA256(token, "RAYBOOT-RDV/2 cluster\\n" cluster-name) and the cluster's name is
"namespace/job" as the pods' plans give it ("" when they do not know it); a stranger is one with
another token, or the head of another cluster (another name) with the same token."""
import hashlib
import hmac
import socket
import threading

SERVING = b"RAYBOOT-RDV/1 SERVING\n"
FINISHED = b"RAYBOOT-RDV/1 FINISHED\n"
HELLO_PREFIX = b"RAYBOOT-RDV/2 "
HELLO_BYTES = len(HELLO_PREFIX) + 32 + 1
FAKE_GCS_CLUSTER_ID = (b"\x01" * 28).hex()  # fake_gcs.py's, as rayboot notes it


def cluster_key(token: str, cluster_name: str = "") -> bytes:
    return hmac.new(token.encode(), b"RAYBOOT-RDV/2 cluster\n" + cluster_name.encode(), hashlib.sha256).digest()


def tagged(token: str, nonce: bytes, word: str, cluster_id: str = "", cluster_name: str = "") -> bytes:
    msg = b"RAYBOOT-RDV/2\n" + nonce + word.encode() + b"\n" + (cluster_id.encode() if word == "FINISHED" else b"")
    tag = hmac.new(cluster_key(token, cluster_name), msg, hashlib.sha256).hexdigest()
    return f"RAYBOOT-RDV/2 {word} ".encode() + tag.encode() + b"\n"


def read_hello(conn) -> bytes:
    """The worker's nonce, from its hello."""
    conn.settimeout(5)
    got = b""
    while len(got) < HELLO_BYTES:
        chunk = conn.recv(HELLO_BYTES - len(got))
        if not chunk:
            raise OSError("closed before its hello")
        got += chunk
    assert got.startswith(HELLO_PREFIX) and got.endswith(b"\n"), got
    return bytes.fromhex(got[len(HELLO_PREFIX):-1].decode())


class FakeRendezvous:
    def __init__(self, speak=False, token=None, finished=False, cluster_id=FAKE_GCS_CLUSTER_ID, cluster_name=""):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.told = 0
        self.held = []
        self.speaking = speak
        self.token = token
        self.finished = finished
        self.cluster_id = cluster_id
        self.cluster_name = cluster_name
        self.lock = threading.Lock()
        threading.Thread(target=self._serve, daemon=True).start()

    def _answer(self, conn) -> bytes:
        if self.token is None:
            return SERVING + (FINISHED if self.finished else b"")
        nonce = read_hello(conn)
        answer = tagged(self.token, nonce, "SERVING", cluster_name=self.cluster_name)
        if self.finished:
            answer += tagged(self.token, nonce, "FINISHED", self.cluster_id, self.cluster_name)
        return answer

    def _tell(self, conn):
        try:
            conn.sendall(self._answer(conn))
        except OSError:
            pass
        conn.close()
        self.told += 1

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                if self.speaking:
                    self._tell(conn)
                else:
                    self.held.append(conn)

    def speak(self):
        with self.lock:
            self.speaking = True
            for conn in self.held:
                self._tell(conn)
            self.held = []

    def close(self):
        self.sock.close()
        for conn in self.held:
            conn.close()
