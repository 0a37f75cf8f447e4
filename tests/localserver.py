"""A local HTTP server on 127.0.0.1 for the tests, and the quiet handlers they answer with."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class Quiet(BaseHTTPRequestHandler):
    """Logs nothing to stderr."""

    def log_message(self, *args: object) -> None:
        pass

    def reply(self, status: int, body: bytes, kind: str, headers: dict[str, str] | None = None) -> None:
        """One whole answer: status, Content-Type, any other headers, Content-Length and body."""
        self.send_response(status)
        self.send_header("Content-Type", kind)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Files(SimpleHTTPRequestHandler):
    """Python's own file server (head and body in separate sends), logging nothing."""

    def log_message(self, *args: object) -> None:
        pass


class Ok(Quiet):
    """Answers HEAD and GET with 200 and an empty body; a subclass may count or wait first."""

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self.do_HEAD()


class Redirect(Quiet):
    """Answers every GET and HEAD with 302 to target followed by the asked path (a partial gives target)."""

    def __init__(self, *args: object, target: str, **kwargs: object) -> None:
        self.target = target
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def do_GET(self) -> None:
        self.send_response(302)
        self.send_header("Location", self.target + self.path)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_HEAD = do_GET


@contextmanager
def running(handler: Callable[..., BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve with handler (a handler class, or a partial of one) on a free port; yields the base URL."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@contextmanager
def serving_folder(folder: Path) -> Iterator[str]:
    """folder's files served by Python's http.server on a free port; yields the base URL."""
    with running(functools.partial(Files, directory=str(folder))) as url:
        yield url
