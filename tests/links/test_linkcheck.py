"""The link checker against real HTTP servers on 127.0.0.1, one free port per test module.

Each path of the server answers one way (200, redirect chains, 404, 429 with Retry-After,
a stall, a reset, a soft 404, ...); the exact verdict is asserted. No mocks: requests go
over real sockets through the checker's client (aiohttp, as links/client.py sets it up).
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

pytest.importorskip("idna")

from cudagloss.links.checker import CheckerOptions, check_urls
from cudagloss.links.status import LinkStatus, looks_offline

HITS: dict[str, int] = {}
SEEN_HEADERS: dict[str, dict[str, str]] = {}
IN_FLIGHT = {"now": 0, "most": 0, "target": 0}
IN_FLIGHT_CHANGED = threading.Condition()
STALL = threading.Event()
"""Set by the test that asks /stall once it has its verdict: until then /stall answers nothing."""
HUGE = {"written": 0}
HUGE_DONE = threading.Event()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:  # keep test output quiet
        pass

    def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self) -> None:
        self.route()

    def do_GET(self) -> None:
        self.route()

    def route(self) -> None:
        path = self.path
        HITS[path] = HITS.get(path, 0) + 1
        SEEN_HEADERS[path] = {k.lower(): v for k, v in self.headers.items()}
        html = {"Content-Type": "text/html"}
        if path == "/ok":
            self._send(200, b"<title>A page</title>", {**html, "Set-Cookie": "session=1"})
        elif path == "/cookie-check":
            self._send(200, b"ok", {"Content-Type": "text/plain"})
        elif path == "/moved":
            self._send(301, headers={"Location": "/moved2"})
        elif path == "/moved2":
            self._send(308, headers={"Location": "/ok"})
        elif path == "/found":
            self._send(302, headers={"Location": "/ok"})
        elif path == "/gone":
            self._send(410)
        elif path == "/missing":
            self._send(404, b"<title>Not here</title>", html)
        elif path == "/limited":
            self._send(429, headers={"Retry-After": "1"})
        elif path == "/limited-long":
            self._send(429, headers={"Retry-After": "3600"})
        elif path == "/flaky":
            # The first attempt (its one GET) fails; the retry succeeds.
            self._send(500 if HITS[path] <= 1 else 200, b"fine", {"Content-Type": "text/plain"})
        elif path == "/unavailable":
            self._send(503)
        elif path == "/no-head":
            if self.command == "HEAD":
                self._send(405)
            else:
                self._send(200, b"fine", {"Content-Type": "text/plain"})
        elif path == "/forbidden":
            self._send(403, b"<title>Just a moment...</title> captcha", html)
        elif path == "/stall":
            STALL.wait(120)  # held until released; the bound only ends a thread a failed test left
            with contextlib.suppress(OSError):  # the checker has hung up by then
                self._send(200)
        elif path == "/loop-a":
            self._send(302, headers={"Location": "/loop-b"})
        elif path == "/loop-b":
            self._send(302, headers={"Location": "/loop-a"})
        elif path == "/huge":
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(1 << 30))
            self.end_headers()
            if self.command == "GET":
                HUGE["written"] = 0
                try:
                    for _ in range(1 << 14):
                        self.wfile.write(b"x" * 65536)
                        HUGE["written"] += 65536
                except OSError:  # the checker hung up
                    pass
                finally:
                    HUGE_DONE.set()
        elif path == "/reset":
            # SO_LINGER 0 makes close() send a TCP reset instead of a clean close.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            self.connection.close()  # (the handler's own flush and close of its files then do nothing)
        elif path.startswith("/chain/"):
            left = int(path.rsplit("/", 1)[1])
            if left:
                self._send(302, headers={"Location": f"/chain/{left - 1}"})
            else:
                self._send(200, b"end", {"Content-Type": "text/plain"})
        elif path.startswith("/slow/"):
            with IN_FLIGHT_CHANGED:
                IN_FLIGHT["now"] += 1
                IN_FLIGHT["most"] = max(IN_FLIGHT["most"], IN_FLIGHT["now"])
                IN_FLIGHT_CHANGED.notify_all()
                # Held until as many are in flight as the test expects: a checker within its limit
                # gets there however slow the machine, one under it never (the bound ends the wait).
                IN_FLIGHT_CHANGED.wait_for(lambda: IN_FLIGHT["most"] >= IN_FLIGHT["target"], timeout=60)
            time.sleep(0.2)  # and held a little longer, for a checker over its limit to show it
            with IN_FLIGHT_CHANGED:
                IN_FLIGHT["now"] -= 1
            self._send(200, b"ok", {"Content-Type": "text/plain"})
        elif path == "/soft-404":
            self._send(200, b"<html><title>Page Not Found | Example</title></html>", html)
        elif path == "/to-home":
            self._send(302, headers={"Location": "/"})
        elif path == "/":
            self._send(200, b"<title>Home</title>", html)
        else:
            self._send(404)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 128  # the default listen backlog of 5 would cap the concurrency tests

    httpd = Server(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


FAST = CheckerOptions(read_timeout=60.0, connect_timeout=60.0, total_timeout=120.0, backoff=0.05, max_retry_after=2.0)
"""Short waits between retries; timeouts that only end a hang (each of these servers answers at once)."""


def one(url: str, options: CheckerOptions = FAST):  # type: ignore[no-untyped-def]
    return check_urls([url], options)[url]


def test_ok(server: str) -> None:
    r = one(f"{server}/ok")
    assert (r.status, r.http_status, r.chain, r.soft_404) == (LinkStatus.OK, 200, (), False)


def test_a_permanent_chain_is_redirected_with_the_new_url_suggested(server: str) -> None:
    r = one(f"{server}/moved")
    assert r.status is LinkStatus.REDIRECTED and r.final_url == f"{server}/ok"
    assert [h.status for h in r.chain] == [301, 308] and r.permanent
    assert "permanent: cite the new URL" in r.detail


def test_a_temporary_redirect_is_not_permanent(server: str) -> None:
    r = one(f"{server}/found")
    assert r.status is LinkStatus.REDIRECTED and not r.permanent


@pytest.mark.parametrize(("path", "code"), [("/missing", 404), ("/gone", 410)])
def test_not_found_and_gone_are_broken(server: str, path: str, code: int) -> None:
    r = one(server + path)
    assert (r.status, r.http_status) == (LinkStatus.BROKEN, code)


@pytest.mark.servers  # two waits of a second each
def test_429_honours_retry_after_then_reports_rate_limited(server: str) -> None:
    started = time.monotonic()
    r = one(f"{server}/limited")
    assert r.status is LinkStatus.RATE_LIMITED and r.attempts == 3
    assert time.monotonic() - started >= 2.0  # two waits of Retry-After: 1


def test_a_retry_after_over_the_cap_is_not_waited_for(server: str) -> None:
    r = one(f"{server}/limited-long")  # Retry-After: 3600 over a cap of 2 s
    assert r.status is LinkStatus.RATE_LIMITED and "over the cap" in r.detail
    assert r.attempts == 1  # no second request, so no wait before one


def test_a_500_then_200_is_ok_after_a_retry(server: str) -> None:
    r = one(f"{server}/flaky")
    assert r.status is LinkStatus.OK and r.attempts == 2


def test_503_after_every_retry_is_broken(server: str) -> None:
    r = one(f"{server}/unavailable")
    assert (r.status, r.http_status, r.attempts) == (LinkStatus.BROKEN, 503, 3)


def test_head_405_falls_back_to_get(server: str) -> None:
    assert one(f"{server}/no-head").status is LinkStatus.OK


def test_403_is_blocked_not_broken(server: str) -> None:
    r = one(f"{server}/forbidden")
    assert r.status is LinkStatus.BLOCKED and not r.status.fails and "bot wall" in r.detail


def test_a_stall_past_the_read_timeout_is_a_timeout(server: str) -> None:
    try:
        r = one(f"{server}/stall", CheckerOptions(read_timeout=0.5, total_timeout=5.0, retries=0))
    finally:
        STALL.set()
    assert r.status is LinkStatus.TIMEOUT


def test_a_redirect_loop_is_broken(server: str) -> None:
    r = one(f"{server}/loop-a")
    assert r.status is LinkStatus.BROKEN and r.detail == "redirect loop"


def test_a_huge_body_is_read_only_up_to_the_bound(server: str) -> None:
    HUGE_DONE.clear()
    r = one(f"{server}/huge", CheckerOptions(max_body=4096, read_timeout=60.0, total_timeout=120.0))
    assert r.status is LinkStatus.OK
    assert HUGE_DONE.wait(120), "the checker holds the connection without reading it"
    assert HUGE["written"] < 1 << 26, f"the server wrote {HUGE['written'] >> 20} MiB of the 1 GiB body"  # hung up


def test_a_reset_connection_is_broken_after_retries(server: str) -> None:
    r = one(f"{server}/reset")
    assert r.status is LinkStatus.BROKEN and r.http_status is None and r.attempts == 3


@pytest.mark.parametrize("path", ["/soft-404", "/to-home"])
def test_soft_404s_are_reported(server: str, path: str) -> None:
    r = one(server + path)
    assert r.status.reachable and r.soft_404 and r.notes


def test_no_cookie_or_credential_is_sent(server: str) -> None:
    results = check_urls([f"{server}/ok", f"{server}/cookie-check"], CheckerOptions(concurrency=1))
    assert all(r.status is LinkStatus.OK for r in results.values())
    sent = SEEN_HEADERS["/cookie-check"]
    assert "cookie" not in sent and "authorization" not in sent
    assert sent["user-agent"].startswith("cudagloss-linkcheck/")
    with_userinfo = server.replace("http://", "http://user:secret@") + "/ok"
    assert one(with_userinfo).status is LinkStatus.INVALID


def test_each_url_is_checked_once(server: str) -> None:
    HITS.pop("/gone", None)
    check_urls([f"{server}/gone"] * 5, FAST)
    assert HITS["/gone"] == 1  # one GET for five citations


def test_non_http_urls_are_invalid() -> None:
    results = check_urls(["ftp://example.com/x", "javascript:alert(1)", "https://"], FAST)
    assert {r.status for r in results.values()} == {LinkStatus.INVALID}


def test_no_network_is_detected_instead_of_every_source_broken() -> None:
    # .invalid never resolves (RFC 6761): as on a machine with no DNS at all.
    results = check_urls(["https://docs.example.invalid/a", "https://blog.example.invalid/b"], FAST)
    assert looks_offline(results)
    assert looks_offline({**results, "ftp://x": one("ftp://x")})  # invalid URLs do not count either way


@pytest.mark.parametrize(("hops", "status"), [(5, LinkStatus.REDIRECTED), (6, LinkStatus.BROKEN)])
def test_redirects_are_followed_up_to_the_bound(server: str, hops: int, status: LinkStatus) -> None:
    r = one(f"{server}/chain/{hops}", CheckerOptions(max_redirects=5, retries=0))
    assert r.status is status
    assert len(r.chain) == min(hops, 6)
    if status is LinkStatus.BROKEN:
        assert r.detail == "more than 5 redirects"


def _most_in_flight(urls: list[str], options: CheckerOptions, expected: int) -> int:
    IN_FLIGHT.update(most=0, target=expected)
    results = check_urls(urls, options)
    assert {r.status for r in results.values()} == {LinkStatus.OK}
    return IN_FLIGHT["most"]


def test_the_per_host_limit_bounds_requests_in_flight(server: str) -> None:
    urls = [f"{server}/slow/{i}" for i in range(24)]
    assert _most_in_flight(urls, CheckerOptions(concurrency=32, per_host=3), 3) == 3


def test_the_global_limit_bounds_requests_across_hosts(server: str) -> None:
    # 127.0.0.1 and localhost are two hosts to the checker and one server here.
    other = server.replace("127.0.0.1", "localhost")
    urls = [f"{base}/slow/{i}" for base in (server, other) for i in range(16)]
    assert _most_in_flight(urls, CheckerOptions(concurrency=5, per_host=4), 5) == 5


def test_a_host_allowed_many_requests_uses_them_all_across_its_pools(server: str) -> None:
    # More than one pool's worth of connections to one host (POOL_SIZE each): all are used.
    urls = [f"{server}/slow/{i}" for i in range(40)]
    assert _most_in_flight(urls, CheckerOptions(concurrency=20, per_host=20), 20) == 20
