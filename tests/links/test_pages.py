"""Pages asked for whole (LinkChecker.check(url, page=True), check_all(pages=...)), what the quote
check reads: served by a real http.server on 127.0.0.1 as whole bodies, gzip, chunked, over the
cap, with a charset, after a redirect; decoded through BoundedBody, never past max_page."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import Iterator

import pytest

pytest.importorskip("idna")

from cudagloss.links.checker import CheckerOptions, LinkChecker
from cudagloss.links.status import LinkResult, LinkStatus
from localserver import Quiet, running

PAGE = "<html><head><title>Warps</title></head><body>" + "A warp is 32 threads. " * 400 + "</body></html>"
BIG = b"<p>" + b"x" * 300_000 + b"</p>"
CAP = 100_000
OPTIONS = CheckerOptions(max_page=CAP, retries=0, connect_timeout=60.0, read_timeout=60.0, total_timeout=120.0)


class Pages(Quiet):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        path = self.path
        if path == "/whole":
            self._send(PAGE.encode(), {"Content-Type": "text/html"})
        elif path == "/gzip":
            self._send(gzip.compress(PAGE.encode()), {"Content-Type": "text/html", "Content-Encoding": "gzip"})
        elif path == "/chunked":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            data = PAGE.encode()
            for i in range(0, len(data), 1000):
                piece = data[i : i + 1000]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.write(b"0\r\n\r\n")
        elif path == "/big":
            self._send(BIG, {"Content-Type": "text/html"})
        elif path == "/big-gzip":
            self._send(gzip.compress(BIG), {"Content-Type": "text/html", "Content-Encoding": "gzip"})
        elif path == "/latin":
            body = "<p>Café crème</p>".encode("latin-1")
            self._send(body, {"Content-Type": 'Text/HTML; Charset="ISO-8859-1"'})
        elif path == "/pdf":
            self._send(b"%PDF-1.7 warp", {"Content-Type": "application/pdf"})
        elif path == "/moved":
            self._send(b"", {"Location": "/whole"}, status=301)
        elif path == "/missing":
            self._send(b"<title>Not here</title>", {"Content-Type": "text/html"}, status=404)
        else:
            self._send(b"", {}, status=404)

    def _send(self, body: bytes, headers: dict[str, str], status: int = 200) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with running(Pages) as url:
        yield url


def _one(url: str) -> LinkResult:
    async def run() -> LinkResult:
        async with LinkChecker(OPTIONS) as checker:
            return await checker.check(url, page=True)

    return asyncio.run(run())


@pytest.mark.parametrize(("path", "kind", "charset"), [("/whole", "text/html", None), ("/gzip", "text/html", None)])
def test_a_page_is_served_whole_and_decoded(server: str, path: str, kind: str, charset: str | None) -> None:
    r = _one(server + path)
    assert r.status is LinkStatus.OK and r.page is not None
    assert (r.page.url, r.page.content_type, r.page.charset) == (server + path, kind, charset)
    assert r.page.body == PAGE.encode() and not r.page.truncated


def test_a_chunked_page_is_joined_and_its_charset_read(server: str) -> None:
    r = _one(f"{server}/chunked")
    assert r.page is not None and r.page.body == PAGE.encode() and not r.page.truncated
    assert (r.page.content_type, r.page.charset) == ("text/plain", "utf-8")


@pytest.mark.parametrize("path", ["/big", "/big-gzip"])
def test_a_page_over_the_cap_is_cut_there_and_says_so(server: str, path: str) -> None:
    r = _one(server + path)
    assert r.status is LinkStatus.OK and r.page is not None
    assert r.page.truncated and r.page.body == BIG[:CAP]


def test_the_media_type_and_charset_are_lower_case_without_quotes(server: str) -> None:
    r = _one(f"{server}/latin")
    assert r.page is not None and (r.page.content_type, r.page.charset) == ("text/html", "iso-8859-1")
    assert r.page.body.decode("latin-1") == "<p>Café crème</p>"


def test_any_content_type_is_read(server: str) -> None:
    r = _one(f"{server}/pdf")
    assert r.page is not None and r.page.content_type == "application/pdf" and r.page.body == b"%PDF-1.7 warp"


def test_after_a_redirect_the_page_is_the_final_urls(server: str) -> None:
    r = _one(f"{server}/moved")
    assert r.status is LinkStatus.REDIRECTED and r.page is not None
    assert r.page.url == f"{server}/whole" and r.page.body == PAGE.encode()


def test_only_the_pages_asked_for_are_read_and_never_an_error_page(server: str) -> None:
    urls = [f"{server}/whole", f"{server}/gzip", f"{server}/missing"]

    async def run() -> dict[str, LinkResult]:
        async with LinkChecker(OPTIONS) as checker:
            return await checker.check_all(urls, pages={f"{server}/whole", f"{server}/missing"})

    results = asyncio.run(run())
    whole = results[f"{server}/whole"].page
    assert whole is not None and whole.body == PAGE.encode()
    assert results[f"{server}/gzip"].page is None  # not asked for: read only as far as the verdict needs
    missing = results[f"{server}/missing"]
    assert missing.status is LinkStatus.BROKEN and missing.page is None  # asked for, but not a 2xx answer
