"""Raw-socket HTTP servers on 127.0.0.1 that misbehave on purpose, for the link checker tests.

http.server cannot send a malformed status line, a NUL in a header or a body that lies about
its encoding, so each route here is a script writing bytes to the socket itself. Every request
head is recorded, raw, so a test can assert what the checker sent (no Authorization, no
Cookie, no user name), and so is each path whose script ended because the checker hung up (a
test waits for that instead of timing the checker). One request per connection; every script
stops within SCRIPT_LIMIT_S.
"""

from __future__ import annotations

import select
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

SCRIPT_LIMIT_S = 20.0
"""No script keeps a thread alive longer than this, whatever the client does."""
NO_HEAD = "(no request head)"
"""What hung_up records for a connection closed before its request head was whole."""


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    head: bytes
    """Everything up to the blank line, as it came off the wire."""


Script = Callable[[Request, socket.socket], None]


def raw(data: bytes) -> Script:
    """Send exactly these bytes, then close."""

    def script(request: Request, conn: socket.socket) -> None:
        conn.sendall(data)

    return script


def response(status: int, headers: Mapping[str, str | bytes] | None = None, body: bytes = b"") -> bytes:
    """A well-formed HTTP/1.1 response (header values may be bytes, to send any octet)."""
    lines = [f"HTTP/1.1 {status} X".encode()]
    for name, value in {"Connection": "close", "Content-Length": str(len(body)), **(headers or {})}.items():
        lines.append(name.encode() + b": " + (value if isinstance(value, bytes) else value.encode("latin-1")))
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def page(get: Script, head: bytes | None = None) -> Script:
    """A clean HTML 200 to HEAD (so the checker goes on to GET), then `get`."""
    head_answer = head if head is not None else response(200, {"Content-Type": "text/html"})

    def script(request: Request, conn: socket.socket) -> None:
        if request.method == "HEAD":
            conn.sendall(head_answer)
        else:
            get(request, conn)

    return script


def trickle(prefix: bytes, unit: bytes, every_s: float = 0.05) -> Script:
    """Send prefix, then unit every every_s seconds until the client goes or the limit comes."""

    def script(request: Request, conn: socket.socket) -> None:
        conn.sendall(prefix)
        end = time.monotonic() + SCRIPT_LIMIT_S
        while time.monotonic() < end:
            conn.sendall(unit)
            time.sleep(every_s)

    return script


def silent(request: Request, conn: socket.socket) -> None:
    """Read the request, answer nothing, hold the connection until the client hangs up."""
    end = time.monotonic() + SCRIPT_LIMIT_S
    while time.monotonic() < end:
        if select.select([conn], [], [], 0.05)[0] and not conn.recv(4096):
            raise ConnectionAbortedError("the client hung up")


class HostileServer:
    """Serves routes (path -> script) on a free port of 127.0.0.1 in daemon threads; use as a
    context manager. Unknown paths get a clean 404."""

    def __init__(self, routes: Mapping[str, Script]) -> None:
        self.routes = dict(routes)
        self.requests: list[Request] = []
        self.hung_up: list[str] = []
        """The path of each request whose script ended because the client went away."""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._sock = socket.create_server(("127.0.0.1", 0), backlog=128)
        self._sock.settimeout(0.1)
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"

    def __enter__(self) -> HostileServer:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()

    def seen(self, path: str) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.path == path]

    def wait_hung_up(self, paths: set[str], within_s: float = 60.0) -> set[str]:
        """Wait until the client has hung up on a request of each path (a script notices at its
        next read or write); the paths it has not hung up on when within_s runs out."""
        end = time.monotonic() + within_s
        while True:
            with self._lock:
                left = paths - set(self.hung_up)
            if not left or time.monotonic() > end:
                return left
            time.sleep(0.02)

    def _accept(self) -> None:
        with self._sock:
            while not self._stop.is_set():
                try:
                    conn, _ = self._sock.accept()
                except TimeoutError:
                    continue
                threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        request: Request | None = None
        with conn:
            try:
                conn.settimeout(SCRIPT_LIMIT_S)
                head = b""
                while b"\r\n\r\n" not in head and len(head) < 65536:
                    got = conn.recv(4096)
                    if not got:  # the client went away before its request was whole
                        with self._lock:
                            self.hung_up.append(NO_HEAD)
                        return
                    head += got
                head = head.split(b"\r\n\r\n", 1)[0]
                method, _, rest = head.partition(b" ")
                path = rest.split(b" ", 1)[0].decode("latin-1")
                request = Request(method.decode("latin-1"), path, head)
                with self._lock:
                    self.requests.append(request)
                script = self.routes.get(path, raw(response(404)))
                script(request, conn)
            except OSError:  # the checker hung up (as it should, on a trickle or a bomb)
                if request is not None:
                    with self._lock:
                        self.hung_up.append(request.path)
