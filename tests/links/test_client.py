"""The link checker's HTTP client (links/client.py: aiohttp, as the checker sets it up) against
real servers on 127.0.0.1.

Connection reuse: the server counts the TCP connections it accepts, so reuse is measured where
it happens; it also misbehaves on keep-alive in the ways real servers do (closing a kept
connection when the next request comes, sending bytes after a response), and each URL must
still get its own verdict. TLS: a certificate no authority signed is refused, and one the
client is told to trust carries checks (soft 404s included) over one kept connection. Addresses:
the client itself (below the checker's look at the URL) refuses, when connecting, a loopback
address and a name that resolves to one, unless CUDAGLOSS_LOCAL_SOURCES allows it.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

pytest.importorskip("idna")

from cudagloss.links import client
from cudagloss.links.checker import CheckerOptions, LinkChecker, check_urls
from cudagloss.links.status import LinkResult, LinkStatus
from cudagloss.model.addresses import LOCAL_ENV


def _answer(status: int, body: bytes = b"ok", extra: bytes = b"") -> bytes:
    head = f"HTTP/1.1 {status} X\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n\r\n"
    return head.encode() + body + extra


class KeepAliveServer:
    """Answers each request on a connection in turn until a route says to stop."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.connections = 0
        self.requests: list[str] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self._lock:
                self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            self._answer_each(conn)
        except OSError:  # the checker closed a connection whose answer it did not need to the end
            pass
        finally:
            conn.close()

    def _answer_each(self, conn: socket.socket) -> None:
        buffer, served = b"", 0
        conn.settimeout(10)
        while True:
            while b"\r\n\r\n" not in buffer:
                data = conn.recv(65536)
                if not data:
                    return
                buffer += data
            head, buffer = buffer.split(b"\r\n\r\n", 1)
            path = head.split(b" ")[1].decode()
            with self._lock:
                self.requests.append(path)
            if path.startswith("/once/") and served:
                return  # a kept connection closed as the next request comes, unanswered
            served += 1
            if path.startswith("/big/"):  # the status tells; most of the body is still to come
                conn.sendall(_answer(200, b"x" * (4 << 20)))
            elif path.startswith("/extra/"):  # bytes after the response: not a connection to keep
                conn.sendall(_answer(200, extra=b"HTTP/1.1 404 X\r\nContent-Length: 0\r\n\r\n"))
            elif path.startswith("/missing/"):
                conn.sendall(_answer(404, b"<title>gone</title>"))
            else:
                conn.sendall(_answer(200))

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def server() -> Iterator[KeepAliveServer]:
    s = KeepAliveServer()
    yield s
    s.close()


def _check(urls: list[str], options: CheckerOptions) -> tuple[dict[str, LinkResult], int]:
    async def run() -> tuple[dict[str, LinkResult], int]:
        async with LinkChecker(options) as checker:
            return await checker.check_all(urls), checker.connections_opened

    return asyncio.run(run())


def test_one_host_is_checked_over_as_many_connections_as_it_allows_in_flight(server: KeepAliveServer) -> None:
    urls = [f"{server.url}/ok/{i}" for i in range(60)] + [f"{server.url}/missing/{i}" for i in range(20)]
    results, opened = _check(urls, CheckerOptions(concurrency=32, per_host=4, retries=0))
    assert all(results[u].status is LinkStatus.OK for u in urls[:60])
    assert all(results[u].status is LinkStatus.BROKEN and results[u].http_status == 404 for u in urls[60:])
    assert len(server.requests) == 80  # one GET per URL
    assert server.connections == opened <= 4


def test_a_response_not_read_to_its_end_closes_its_connection(server: KeepAliveServer) -> None:
    urls = [f"{server.url}/big/{i}" for i in range(6)]
    results, opened = _check(urls, CheckerOptions(concurrency=1, per_host=1, retries=0))
    assert {r.status for r in results.values()} == {LinkStatus.OK}
    assert server.connections == opened == 6  # 4 MiB unread each: never waited for, never reused


def test_a_kept_connection_the_server_closed_is_retried_once_on_a_new_one(server: KeepAliveServer) -> None:
    urls = [f"{server.url}/once/{i}" for i in range(5)]
    results, _ = _check(urls, CheckerOptions(concurrency=1, per_host=1, retries=0))
    assert {r.status for r in results.values()} == {LinkStatus.OK}, [r.detail for r in results.values()]
    assert all(r.attempts == 1 for r in results.values())  # not the checker's retries: no backoff spent
    # each URL after the first was tried on the kept connection, then on a new one
    assert (server.connections, len(server.requests)) == (5, 9)


def test_bytes_after_a_response_are_never_read_as_the_next_urls_answer(server: KeepAliveServer) -> None:
    urls = [f"{server.url}/{kind}/{i}" for i in range(5) for kind in ("extra", "ok")]
    results, opened = _check(urls, CheckerOptions(concurrency=1, per_host=1, retries=0))
    assert {r.status for r in results.values()} == {LinkStatus.OK}  # the smuggled 404 answered nothing
    # each /extra connection is dropped; each /ok after the first reuses one and hands it to the next /extra
    assert opened == server.connections == 6


class TlsHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        body = b"<title>Page Not Found</title>" if self.path == "/nf" else b"<title>A page</title>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """An HTTPS server with a fresh self-signed certificate for 127.0.0.1; (its URL, the certificate)."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a test certificate")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"),
            *("-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1"),
            *("-addext", "subjectAltName=IP:127.0.0.1"),
        ],
        check=True,
        capture_output=True,
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), TlsHandler)
    httpd.daemon_threads = True
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"https://127.0.0.1:{httpd.server_address[1]}", cert
    httpd.shutdown()
    httpd.server_close()


def test_a_certificate_no_authority_signed_is_refused(tls_server: tuple[str, Path]) -> None:
    url = f"{tls_server[0]}/ok"
    r = check_urls([url], CheckerOptions(retries=0))[url]
    assert r.status is LinkStatus.BROKEN and "certificate verify failed" in r.detail


def test_https_with_a_trusted_certificate_is_checked_over_one_kept_connection(
    tls_server: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    base, cert = tls_server
    made = client.tls_context

    def trusting() -> ssl.SSLContext:
        context = made()  # the checker's own context, with the test certificate as one more authority
        context.load_verify_locations(cert)
        return context

    monkeypatch.setattr(client, "tls_context", trusting)
    urls = [f"{base}/ok/{i}" for i in range(5)] + [f"{base}/nf"]
    results, opened = _check(urls, CheckerOptions(per_host=1, retries=0))
    assert {results[u].status for u in urls} == {LinkStatus.OK}
    assert [results[u].soft_404 for u in urls] == [False] * 5 + [True]
    assert opened == 1


async def _get_directly(url: str) -> None:
    """One GET through the client alone: no URL check in front of it."""
    wire = client.Client(connect_timeout=60.0, read_timeout=60.0, limit=1, per_host=1)
    try:
        response = await wire.get(url, {})
        response.close()
    finally:
        await wire.close()


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_the_client_refuses_a_loopback_address_when_connecting(
    server: KeepAliveServer, monkeypatch: pytest.MonkeyPatch, host: str
) -> None:
    """An IP literal never reaches a resolver (the socket factory refuses it); a name resolving to
    loopback is refused by the resolver. Allowed, the same URL is fetched: the refusal is the rule's."""
    url = server.url.replace("127.0.0.1", host) + "/ok/1"
    monkeypatch.delenv(LOCAL_ENV)
    with pytest.raises(client.PrivateAddress, match=r"127\.0\.0\.1, a loopback address|no public address"):
        asyncio.run(_get_directly(url))
    assert server.connections == 0 and server.requests == []
    monkeypatch.setenv(LOCAL_ENV, "127.0.0.0/8,::1/128")
    asyncio.run(_get_directly(url))
    assert server.requests == ["/ok/1"]


class TwoSends(BaseHTTPRequestHandler):
    """http.server as it comes: the head and the body in two sends, Nagle's algorithm on."""

    protocol_version = "HTTP/1.1"
    accepted: ClassVar[list[int]] = []

    def setup(self) -> None:
        TwoSends.accepted.append(1)
        super().setup()

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        body = b"fine" if self.path.startswith("/ok") else b"<title>Not here</title>"
        self.send_response(200 if self.path.startswith("/ok") else 404)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_a_small_body_sent_after_its_head_is_read_to_keep_the_connection() -> None:
    """The verdict needs no body of a 200, but a connection is kept only once its response is read
    to the end: a small one that comes after the head is read (and a 404's, which the verdict reads)."""
    TwoSends.accepted.clear()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), TwoSends)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{httpd.server_address[1]}"
        urls = [f"{base}/ok/{i}" for i in range(8)] + [f"{base}/missing/{i}" for i in range(4)]
        results, opened = _check(urls, CheckerOptions(per_host=1, retries=0, read_timeout=60.0, total_timeout=120.0))
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert [results[u].status for u in urls] == [LinkStatus.OK] * 8 + [LinkStatus.BROKEN] * 4
    assert opened == len(TwoSends.accepted) == 1
