"""What the checker reads of one response: as little as the verdict needs, or a whole page.

The client hands over raw bytes (transfer coding undone, content coding not); they are decoded
here through wire.BoundedBody, so the caps bound the decoded bytes as well as the bytes read.
Only an error status or a 200 HTML page (a possible soft 404) has its body read for the
verdict, up to max_body; a page asked for (the quote check) is read whole up to max_page
decoded bytes. The connection is kept for the next request only when the rest of the response
had already arrived; else it is closed: nothing is waited for that is not needed.
"""

from __future__ import annotations

from dataclasses import dataclass

import aiohttp

from cudagloss.links.client import failure
from cudagloss.links.status import Page
from cudagloss.links.wire import BoundedBody, Headers, media_type

PAGE_RAW_SLACK = 64 * 1024
"""Raw bytes read for a page past its cap (a compressed body's framing, its trailer)."""


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
        if max_page is not None and 200 <= status < 300:
            page = await _page(response, headers, url, max_page)
            return Reply(status, headers, page.body[:max_body] if page else b"", page)
        kind = headers.get("content-type")
        if not ((status >= 400 and status != 429) or (status == 200 and "html" in kind)):
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
    return Page(url=url, content_type=content_type, charset=charset, body=data[:cap], truncated=truncated)


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
