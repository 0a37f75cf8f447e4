"""Check stage of the link checker: each URL once, concurrently, over aiohttp (client.py).

Bounds everywhere, because the other end is not ours: requests in flight (global and per
host), connect/read/total time, redirects (followed by hand, so the chain is recorded and
loops are caught), body bytes read and decoded (fetch.py, wire.BoundedBody), and retries
(exponential backoff with jitter, honouring a strict Retry-After up to a cap). No cookie jar,
auth, .netrc or proxy from the environment, only our own headers, checked once more before the
wire; no connection to an address a source may not lead to (checked as it is connected to). A
URL carrying a user name or password is invalid, and so is a redirect to one: not followed,
with or without them (a stripped request is not the one the server asked for). Whatever one
server sends is that URL's result (wire.py reads it as hostile); nothing ends the run.

Why aiohttp, not httpx: measured on bench/links.py's asyncio server (one host, 32 in flight,
2 CPUs; GET each URL, body read as raw bytes, best of 3), httpx 0.29 spent 1.0-3.4 ms of CPU per
URL (anyio and httpcore's pool bookkeeping: 1.3-3.4 ms with one pool, 0.8-1.0 ms with eight
small pools, 0.8-1.3 ms with one per connection) and took 1.25x the ideal at 50 ms latency and
5-32x at 5 ms; aiohttp 3.14 spent 0.09-0.12 ms per URL and took 1.06x at 50 ms, 1.3x at 5 ms.
It is also asyncio's own, so the per-URL deadline is a plain asyncio.timeout.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import deque
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urljoin, urlsplit

from cudagloss import __version__
from cudagloss.errors import shown
from cudagloss.links.status import Hop, LinkResult, LinkStatus, Page
from cudagloss.links.wire import (
    BodyDecodeError,
    CredentialRefused,
    Unrequestable,
    host_of,
    is_dns_failure,
    looks_not_found,
    redacted,
    refuse_credentials,
    retry_after,
)
from cudagloss.model.addresses import redirect_inward, url_host_problem
from cudagloss.model.report_limits import REDIRECTS_MAX
from cudagloss.model.urls import url_problem

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
PERMANENT = frozenset({301, 308})
STAGGER_S = 0.002
"""A host's workers start this far apart, so its connections are not opened all at once: a
burst overflowed the listen queue of a server with a small one (http.server's is 5), and each
connection dropped there waited a second for TCP to try again (bench/RESULTS.md, links)."""
ACCEPT_ENCODING = "gzip, deflate"
"""Only the codings wire.py decodes under the body cap."""


@dataclass(frozen=True)
class CheckerOptions:
    concurrency: int = 32
    per_host: int = 4
    connect_timeout: float = 5.0
    read_timeout: float = 10.0
    total_timeout: float = 30.0
    """Per URL, over every attempt and redirect."""
    max_redirects: int = REDIRECTS_MAX
    max_body: int = 64 * 1024
    max_page: int = 8 * 1024 * 1024
    """Decoded bytes of a page asked for whole (check(..., page=True)); past it, Page.truncated."""
    retries: int = 2
    backoff: float = 0.5
    max_retry_after: float = 10.0
    user_agent: str = f"cudagloss-linkcheck/{__version__} (CUDA glossary source checker)"


class _Attempt(Exception):
    """A failure worth retrying (connection trouble, 429, 5xx), with what to report if it persists."""

    def __init__(self, result: LinkResult, wait: float | None = None) -> None:
        super().__init__(result.detail)
        self.result, self.wait = result, wait


class LinkChecker:
    """Checks URLs; one instance holds the limits and the connections for one run. Use it as an
    async context manager, which closes them."""

    def __init__(self, options: CheckerOptions | None = None) -> None:
        from cudagloss.links import client, fetch  # aiohttp and ssl only once there is something to check

        self.options = o = options or CheckerOptions()
        self._wire, self._fetch = client, fetch
        self._global = asyncio.Semaphore(o.concurrency)
        self._hosts: dict[str, asyncio.Semaphore] = {}
        self._client = client.Client(o.connect_timeout, o.read_timeout, max(o.concurrency, o.per_host), o.per_host)
        self._headers = {
            "User-Agent": o.user_agent,
            "Accept": "text/html,application/xhtml+xml,*/*;q=0.8",
            "Accept-Encoding": ACCEPT_ENCODING,
        }

    async def __aenter__(self) -> LinkChecker:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._client.close()

    @property
    def connections_opened(self) -> int:
        """TCP connections opened so far: with keep-alive, far fewer than requests to one host."""
        return self._client.opened

    async def check_all(
        self,
        urls: Iterable[str],
        done: Callable[[str, LinkResult], None] | None = None,
        *,
        pages: Collection[str] = (),
    ) -> dict[str, LinkResult]:
        """Each distinct URL checked once, concurrently; done(url, result) as each finishes. A URL
        in pages is checked as check(url, page=True) is.

        A few workers per host (as many as it may have in flight) take its URLs in turn, rather
        than a task per URL all queued on the limits: at 10,000 URLs that queue was a measurable
        part of the run's CPU time. Each check still takes the host's and the run's slots. The
        workers of a host start STAGGER_S apart (a few milliseconds in all)."""
        unique = list(dict.fromkeys(urls))
        wanted = frozenset(pages)
        queues: dict[str, deque[str]] = {}
        for url in unique:
            try:
                host = host_of(url)
            except ValueError:  # not a URL at all: check() says so at once
                host = ""
            queues.setdefault(host, deque()).append(url)
        results: dict[str, LinkResult] = {}

        async def worker(host: str, queue: deque[str], start: float) -> None:
            if start:
                await asyncio.sleep(start)
            while queue:
                url = queue.popleft()
                results[url] = result = await self.check(url, host, page=url in wanted)
                if done is not None:
                    done(url, result)

        per_host = max(1, self.options.per_host)
        await asyncio.gather(
            *(worker(h, q, i * STAGGER_S) for h, q in queues.items() for i in range(min(len(q), per_host)))
        )
        return {url: results[url] for url in unique}

    async def check(
        self, url: str, host: str | None = None, *, page: bool = False, cap: int = 0, inward: bool = True
    ) -> LinkResult:
        """url's result, whatever the URL and whatever its server sends: this never raises
        (the broad except is the last line; known failures are classified further in).
        host: host_of(url), where the caller has it already. page: where the final answer is
        2xx, its whole body (up to cap, else max_page, decoded bytes) comes back as result.page.
        inward False: public addresses only (what a page that is not local links to)."""
        problem = url_problem(url) or url_host_problem(url, None if inward else ())
        if problem is not None:
            return LinkResult(url, LinkStatus.INVALID, problem)
        size = (cap or self.options.max_page) if page else None
        try:
            return await self._check(url, host_of(url) if host is None else host, size, inward)
        except Exception as exc:  # the last line: one URL's trouble is never the run's
            return LinkResult(url, LinkStatus.BROKEN, shown(f"checker error ({type(exc).__name__}: {exc})"))

    async def _check(self, url: str, host: str, page: int | None, inward: bool) -> LinkResult:
        per_host = self._hosts.get(host) or self._hosts.setdefault(host, asyncio.Semaphore(self.options.per_host))
        # the host's turn first: a URL waiting for its host holds none of the run's slots meanwhile
        async with per_host, self._global:
            try:
                return await self._wire.within(self.options.total_timeout, self._with_retries(url, page, inward))
            except asyncio.TimeoutError:
                return LinkResult(url, LinkStatus.TIMEOUT, f"no answer within {self.options.total_timeout:g} s")

    async def _with_retries(self, url: str, page: int | None, inward: bool) -> LinkResult:
        o = self.options
        attempt = 0
        while True:
            attempt += 1
            try:
                result = await self._follow(url, page, inward)
                return result if attempt == 1 else replace(result, attempts=attempt)
            except _Attempt as failed:
                if attempt > o.retries:
                    return replace(failed.result, attempts=attempt)
                delay = o.backoff * 2 ** (attempt - 1) * (1 + random.random() / 2)
                if failed.wait is not None:
                    if failed.wait > o.max_retry_after:
                        detail = f"{failed.result.detail}; Retry-After {failed.wait:g} s is over the cap"
                        return replace(failed.result, detail=detail, attempts=attempt)
                    delay = max(delay, failed.wait)
                await asyncio.sleep(delay)

    async def _follow(self, url: str, page: int | None, inward: bool) -> LinkResult:
        """One attempt: requests and redirects until a final answer. A page is local where its
        host is a local address or a name with no public address; a redirect from a page that
        is not may lead only to public addresses, judged on the name's literal form first and
        then on what it resolves to as it is connected to (client.Client.request)."""
        wire = self._wire
        chain: list[Hop] = []
        seen = {url}
        current = url
        # inward: the source may be local where CUDAGLOSS_LOCAL_SOURCES allows (not a public page's sheet)
        while True:
            try:
                status, headers, body, got, local = await self._request(current, page, not inward)
            except wire.WireTimeout as exc:
                raise _Attempt(LinkResult(url, LinkStatus.TIMEOUT, f"timed out ({exc})")) from None
            except wire.PrivateAddress as exc:  # refused there when connecting: not followed, not retried
                detail = shown(str(exc) if inward else f"a public page redirects to {redacted(current)}, where {exc}")
                return LinkResult(url, LinkStatus.INVALID, detail, chain=tuple(chain))
            except (CredentialRefused, Unrequestable) as exc:
                detail = shown(f"cannot be requested ({type(exc).__name__}: {exc})")
                return LinkResult(url, LinkStatus.INVALID, detail, chain=tuple(chain))
            except BodyDecodeError as exc:
                return LinkResult(url, LinkStatus.BROKEN, shown(str(exc)), chain=tuple(chain))
            except wire.WireError as exc:
                if is_dns_failure(exc):
                    detail = f"DNS lookup of {host_of(current)} failed"
                else:
                    detail = shown(f"connection failed ({exc})")
                raise _Attempt(LinkResult(url, LinkStatus.BROKEN, detail, chain=tuple(chain))) from None
            location = headers.get("location", "").strip()
            if status in REDIRECT_STATUSES and location:
                try:
                    target = urljoin(current, location)
                except ValueError:  # urlsplit refuses some (an unclosed IPv6 bracket, ...)
                    target = location
                problem = url_problem(target) or url_host_problem(target) or redirect_inward(current, target, local)
                # a valid target is printable and free of credentials as it is; any other is shown safely
                where = target if problem is None else shown(redacted(target))
                chain.append(Hop(status, where))
                if target in seen:
                    return LinkResult(url, LinkStatus.BROKEN, "redirect loop", status, where, tuple(chain))
                if len(chain) > self.options.max_redirects:
                    detail = f"more than {self.options.max_redirects} redirects"
                    return LinkResult(url, LinkStatus.BROKEN, detail, status, where, tuple(chain))
                if problem is not None:
                    detail = f"redirects to {shown(redacted(target), 80)}, which is invalid: {shown(problem, 100)}"
                    return LinkResult(url, LinkStatus.INVALID, detail, status, where, tuple(chain))
                seen.add(target)
                current, inward = target, inward and local
                continue
            result = self._verdict(url, current, status, headers, body, chain)
            return result if got is None else replace(result, page=replace(got, local=local))

    async def _request(
        self, url: str, page: int | None, public_only: bool
    ) -> tuple[int, Any, bytes, Page | None, bool]:
        """One GET per URL (fetch.py says what of its body is read), and whether its page is
        local (client.Client.request). A HEAD first would cost a second request for every HTML
        page and every error, which is most of a glossary's sources."""
        headers = dict(self._headers)
        refuse_credentials(url, headers)
        response, local = await self._client.request(url, headers, inward=not public_only)
        o = self.options
        got = await self._fetch.reply(response, url, o.max_body, page)
        return got.status, got.headers, got.body, got.page, local

    def _verdict(self, url: str, final: str, status: int, headers: Any, body: bytes, chain: list[Hop]) -> LinkResult:
        hops = tuple(chain)
        moved = final if hops else None
        permanent = bool(hops) and all(h.status in PERMANENT for h in hops)
        if 200 <= status < 300:
            soft = looks_not_found(body)
            home = bool(hops) and urlsplit(final).path in ("", "/") and urlsplit(url).path not in ("", "/")
            notes = []
            if soft:
                notes.append("answers 200 but its title says the page was not found (likely a soft 404)")
            if home:
                notes.append("redirects to the site's home page (likely a soft 404)")
            kind = LinkStatus.REDIRECTED if hops else LinkStatus.OK
            detail = f"-> {final}" if hops else ""
            if permanent:
                detail += " (permanent: cite the new URL)"
            return LinkResult(url, kind, detail, status, moved, hops, permanent, soft or home, notes=notes)
        if status in (401, 403):
            wall = "cf-mitigated" in headers or "captcha" in body.lower().decode(errors="replace")
            reason = ": a bot wall" if wall else ": access refused to the checker, not proof of breakage"
            detail = f"HTTP {status}{reason}"
            return LinkResult(url, LinkStatus.BLOCKED, detail, status, moved, hops)
        if status in RETRY_STATUSES:
            wait = retry_after(headers.get("retry-after"), time.time())
            kind = LinkStatus.RATE_LIMITED if status == 429 else LinkStatus.BROKEN
            raise _Attempt(LinkResult(url, kind, f"HTTP {status}", status, moved, hops), wait)
        return LinkResult(url, LinkStatus.BROKEN, f"HTTP {status}", status, moved, hops)


def check_urls(urls: Iterable[str], options: CheckerOptions | None = None) -> dict[str, LinkResult]:
    """The synchronous entry point: every URL's result."""

    async def run() -> dict[str, LinkResult]:
        async with LinkChecker(options) as checker:
            return await checker.check_all(urls)

    return asyncio.run(run())
