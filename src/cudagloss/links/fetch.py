"""What the checker reads of one response: as little as the verdict needs, or a whole page.

The client hands over raw bytes (transfer coding undone, content coding not); they are decoded
here through wire.BoundedBody, so the caps bound the decoded bytes as well as the bytes read.
Only an error status or a 200 HTML page (a possible soft 404) has its body read for the
verdict, up to max_body; a page asked for (the quote check) is read whole up to max_page
decoded bytes.

The connection is kept for the next request when the rest of the response has arrived, or is
small (a Content-Length of at most DRAIN bytes) and arrives within DRAIN_WAIT_S; else it is
closed. Many servers (Python's http.server among them) write the head and the body in two
sends with Nagle's algorithm on: the body then waits for our ACK of the head, which Linux
delays by up to 40 ms. So once the head is in and more is wanted, the pending ACK is sent at
once (TCP_QUICKACK): without it, reading a body cost 40 ms, and not reading it cost a new
connection for the next URL (bench/RESULTS.md, links, the http.server rows).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from dataclasses import dataclass

import aiohttp

from cudagloss.links.client import failure, within
from cudagloss.links.status import Page
from cudagloss.links.stylesheets import link_header
from cudagloss.links.wire import BoundedBody, Headers, media_type

PAGE_RAW_SLACK = 64 * 1024
"""Raw bytes read for a page past its cap (a compressed body's framing, its trailer)."""
DRAIN = 16 * 1024
DRAIN_WAIT_S = 1.0
"""A body the verdict does not need is still read, to keep the connection, when its
Content-Length is at most DRAIN bytes and it arrives within DRAIN_WAIT_S (else: closed)."""
_QUICKACK = getattr(socket, "TCP_QUICKACK", None)  # Linux only


@dataclass(frozen=True)
class Reply:
    status: int
    headers: Headers
    body: bytes
    """At most max_body decoded bytes: what the verdict reads (b"" where it needs none)."""
    page: Page | None = None


async def reply(response: aiohttp.ClientResponse, url: str, max_body: int, max_page: int | None) -> Reply:
    """The response's status, headers and what the verdict needs of its body; its page too where
    max_page is given and the answer is 2xx. The response is released (or its connection closed)."""
    try:
        status = response.status
        headers = Headers(list(response.raw_headers))
        if not response.content.is_eof():
            _ack_now(response)
        if max_page is not None and 200 <= status < 300:
            page = await _page(response, headers, url, max_page)
            return Reply(status, headers, page.body[:max_body] if page else b"", page)
        kind = headers.get("content-type")
        if not ((status >= 400 and status != 429) or (status == 200 and "html" in kind)):
            await _drain(response)
            return Reply(status, headers, b"")
        body = BoundedBody(headers.get("content-encoding"), max_body)
        await _read(response, body, max_body)
        return Reply(status, headers, body.content())
    finally:
        if response.content.is_eof():
            response.release()  # all of it has arrived: the connection serves the next request
        else:
            response.close()


async def _page(response: aiohttp.ClientResponse, headers: Headers, url: str, cap: int) -> Page | None:
    """The body decoded up to cap bytes (truncated if it went on); None where its coding is one
    we did not ask for (nothing readable to hand on)."""
    body = BoundedBody(headers.get("content-encoding"), cap + 1)  # one byte more tells "went past"
    ended = await _read(response, body, cap + cap // 16 + PAGE_RAW_SLACK)
    if body.opaque:
        return None
    content_type, charset = media_type(headers.get("content-type"))
    data = body.content()
    truncated = len(data) > cap or not ended
    sheets = link_header(headers.get("link"), url)
    return Page(url, content_type, charset, data[:cap], truncated, sheets)


async def _read(response: aiohttp.ClientResponse, body: BoundedBody, raw_cap: int) -> bool:
    """Feed body until it is full, raw_cap bytes have been read, or the body ends; True if it ended."""
    raw = 0
    while True:
        try:
            chunk = await response.content.readany()
        except Exception as exc:
            raise failure(exc) from exc
        if not chunk:
            return True
        raw += len(chunk)
        body.feed(chunk)
        if body.full or raw >= raw_cap:
            return response.content.at_eof()


def _ack_now(response: aiohttp.ClientResponse) -> None:
    """Acknowledge what has arrived now rather than after the delayed-ACK timer (Linux: setting
    TCP_QUICKACK sends an ACK that is pending), so a server holding the rest of the response
    for that ACK (Nagle) sends it at once."""
    connection = response.connection
    transport = connection.transport if connection is not None else None
    sock = transport.get_extra_info("socket") if transport is not None else None
    if sock is not None and _QUICKACK is not None:
        with contextlib.suppress(OSError):  # not TCP after all: nothing to hurry
            sock.setsockopt(socket.IPPROTO_TCP, _QUICKACK, 1)


async def _drain(response: aiohttp.ClientResponse) -> None:
    """Read and drop a small body the verdict does not need, so the connection can be kept;
    any trouble or wait past DRAIN_WAIT_S only means the connection is closed."""
    length = response.content_length
    if response.content.is_eof() or length is None or length > DRAIN:
        return
    with contextlib.suppress(asyncio.TimeoutError, aiohttp.ClientError, OSError):
        await within(DRAIN_WAIT_S, _read_to_end(response))


async def _read_to_end(response: aiohttp.ClientResponse) -> None:
    while await response.content.readany():
        pass
