"""Check stage of the link checker: each URL once, concurrently, with httpx.

Bounds everywhere, because the other end is not ours: requests in flight (global and per
host), connect/read/total time, redirects (followed by hand, so the chain is recorded and
loops are caught), body bytes read and decoded, and retries (exponential backoff with jitter,
honouring a strict Retry-After up to a cap). Requests go straight to httpx's transport: no
client, so no cookie jar, auth, .netrc, proxy from the environment or Location parsing by
httpx; only our own headers, checked once more before the wire. A URL carrying a user name
or password is invalid, and so is a redirect to one: not followed, with or without them (a
stripped request is not the one the server asked for). Whatever one server sends is that
URL's result (wire.py reads it as hostile); nothing ends the run.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urljoin, urlsplit

from cudagloss import __version__
from cudagloss.errors import shown
from cudagloss.links.status import Hop, LinkResult, LinkStatus
from cudagloss.links.wire import (
    BodyDecodeError,
    BoundedBody,
    CredentialRefused,
    host_of,
    is_dns_failure,
    looks_not_found,
    redacted,
    refuse_credentials,
    retry_after,
)
from cudagloss.model.urls import url_problem

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
PERMANENT = frozenset({301, 308})
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
    max_redirects: int = 5
    max_body: int = 64 * 1024
    retries: int = 2
    backoff: float = 0.5
    max_retry_after: float = 10.0
    user_agent: str = f"cudagloss-linkcheck/{__version__} (CUDA glossary source checker)"


class _Attempt(Exception):
    """A failure worth retrying (connection trouble, 429, 5xx), with what to report if it persists."""

    def __init__(self, result: LinkResult, wait: float | None = None) -> None:
        super().__init__(result.detail)
        self.result, self.wait = result, wait


POOL_SIZE = 4
"""Connections per httpx transport. httpcore's pool does work quadratic in its connections on
every request (measured: most of the CPU time at 32 connections to one host), so a host
allowed more requests in flight gets several small pools instead of one large one."""


class _Pool:
    """One httpx transport (a connection pool) and how many requests it has in flight."""

    def __init__(self, transport: Any) -> None:
        self.transport, self.busy = transport, 0


class LinkChecker:
    """Checks URLs; one instance holds the limits and the connection pools for one run. Use it as an
    async context manager, which closes the pools."""

    def __init__(self, options: CheckerOptions | None = None) -> None:
        self.options = options or CheckerOptions()
        self._global = asyncio.Semaphore(self.options.concurrency)
        self._hosts: dict[str, asyncio.Semaphore] = {}
        self._pools: dict[str, list[_Pool]] = {}
        self._tls: Any = None

    async def __aenter__(self) -> LinkChecker:
        return self

    async def __aexit__(self, *exc: object) -> None:
        pools = [pool for shard in self._pools.values() for pool in shard]
        self._pools = {}
        # a pool that fails to close (a peer gone mid-TLS-shutdown) must not undo the results
        await asyncio.gather(*(pool.transport.aclose() for pool in pools), return_exceptions=True)

    def _transport(self, size: int) -> Any:
        """A connection pool with nothing from the environment (no proxy, no certificates
        named there); requests reach it without any client in between."""
        import httpx

        if self._tls is None:  # one certificate store for every pool: loading it costs ~15 ms
            self._tls = httpx.create_ssl_context(trust_env=False)
        limits = httpx.Limits(max_connections=size, max_keepalive_connections=size)
        return httpx.AsyncHTTPTransport(verify=self._tls, trust_env=False, limits=limits)

    @asynccontextmanager
    async def _exchange(self, transport: Any, method: str, url: str) -> AsyncIterator[Any]:
        """One request with our headers only, its response streamed (unread, undecoded)."""
        import httpx

        o = self.options
        headers = {
            "User-Agent": o.user_agent,
            "Accept": "text/html,application/xhtml+xml,*/*;q=0.8",
            "Accept-Encoding": ACCEPT_ENCODING,
        }
        timeout = httpx.Timeout(o.read_timeout, connect=o.connect_timeout)
        request = httpx.Request(method, url, headers=headers, extensions={"timeout": timeout.as_dict()})
        refuse_credentials(request)
        response = await transport.handle_async_request(request)
        try:
            yield response
        finally:
            await response.aclose()

    def _pool(self, host: str) -> _Pool:
        """The least busy of the host's pools (created on first use)."""
        shard = self._pools.get(host)
        if shard is None:
            allowed = min(self.options.per_host, self.options.concurrency)
            count = -(-allowed // POOL_SIZE)
            shard = self._pools[host] = [_Pool(self._transport(-(-allowed // count))) for _ in range(count)]
        return min(shard, key=lambda pool: pool.busy)

    async def check_all(self, urls: Iterable[str]) -> dict[str, LinkResult]:
        """Each distinct URL checked once, concurrently."""
        unique = list(dict.fromkeys(urls))
        results = await asyncio.gather(*(self.check(url) for url in unique))
        return dict(zip(unique, results, strict=True))

    async def check(self, url: str) -> LinkResult:
        """url's result, whatever the URL and whatever its server sends: this never raises
        (the broad except is the last line; known failures are classified further in)."""
        problem = url_problem(url)
        if problem is not None:
            return LinkResult(url, LinkStatus.INVALID, problem)
        try:
            return await self._check(url)
        except Exception as exc:  # the last line: one URL's trouble is never the run's
            return LinkResult(url, LinkStatus.BROKEN, shown(f"checker error ({type(exc).__name__}: {exc})"))

    async def _check(self, url: str) -> LinkResult:
        host = host_of(url)
        per_host = self._hosts.setdefault(host, asyncio.Semaphore(self.options.per_host))
        async with self._global, per_host:
            pool = self._pool(host)
            pool.busy += 1
            try:
                result = await asyncio.wait_for(self._with_retries(pool.transport, url), self.options.total_timeout)
            except asyncio.TimeoutError:
                result = LinkResult(url, LinkStatus.TIMEOUT, f"no answer within {self.options.total_timeout:g} s")
            finally:
                pool.busy -= 1
        return result

    async def _with_retries(self, transport: Any, url: str) -> LinkResult:
        o = self.options
        attempt = 0
        while True:
            attempt += 1
            try:
                result = await self._follow(transport, url)
                return replace(result, attempts=attempt)
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

    async def _follow(self, transport: Any, url: str) -> LinkResult:
        """One attempt: requests and redirects until a final answer."""
        import httpx

        chain: list[Hop] = []
        seen = {url}
        current = url
        while True:
            try:
                status, headers, body = await self._request(transport, current)
            except httpx.TimeoutException as exc:
                raise _Attempt(LinkResult(url, LinkStatus.TIMEOUT, f"timed out ({type(exc).__name__})")) from None
            except (CredentialRefused, httpx.InvalidURL, httpx.UnsupportedProtocol, httpx.LocalProtocolError) as exc:
                detail = shown(f"cannot be requested ({type(exc).__name__}: {exc})")
                return LinkResult(url, LinkStatus.INVALID, detail, chain=tuple(chain))
            except BodyDecodeError as exc:
                return LinkResult(url, LinkStatus.BROKEN, shown(str(exc)), chain=tuple(chain))
            except (httpx.TransportError, httpx.HTTPError, httpx.StreamError) as exc:
                if is_dns_failure(exc):
                    detail = f"DNS lookup of {host_of(current)} failed"
                else:
                    detail = shown(f"connection failed ({type(exc).__name__}: {exc}".rstrip(": ") + ")")
                raise _Attempt(LinkResult(url, LinkStatus.BROKEN, detail, chain=tuple(chain))) from None
            location = headers.get("location", "").strip()
            if status in REDIRECT_STATUSES and location:
                try:
                    target = urljoin(current, location)
                except ValueError:  # urlsplit refuses some (an unclosed IPv6 bracket, ...)
                    target = location
                problem = url_problem(target)
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
                current = target
                continue
            return self._verdict(url, current, status, headers, body, chain)

    async def _request(self, transport: Any, url: str) -> tuple[int, Any, bytes]:
        """One GET per URL: its body (at most max_body raw bytes, decoded into at most max_body
        bytes) is read only where the status cannot tell alone (an error status, or a 200 HTML
        page that may be a soft 404); otherwise the response is closed unread. A HEAD first
        would cost a second request for every HTML page and every error, which is most of a
        glossary's sources. Bodies are streamed raw: httpx never decodes one here."""
        cap = self.options.max_body
        async with self._exchange(transport, "GET", url) as response:
            kind = response.headers.get("content-type", "")
            needs_body = (response.status_code >= 400 and response.status_code != 429) or (
                response.status_code == 200 and "html" in kind
            )
            if not needs_body:
                return response.status_code, response.headers, b""
            body = BoundedBody(response.headers.get("content-encoding", ""), cap)
            raw = 0
            async for chunk in response.aiter_raw():
                raw += len(chunk)
                body.feed(chunk)
                if body.full or raw >= cap:
                    break
            return response.status_code, response.headers, body.content()

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
