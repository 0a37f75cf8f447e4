"""Check stage of the link checker: each URL once, concurrently, with httpx.

Bounds everywhere, because the other end is not ours: requests in flight (global and per
host), connect/read/total time, redirects (followed by hand, so the chain is recorded and
loops are caught), body bytes read, and retries (exponential backoff with jitter,
honouring Retry-After up to a cap). No cookies are kept or sent, no credentials either:
the cookie jar refuses every cookie, the environment's proxies and .netrc are ignored,
and a URL carrying a user name or password is invalid.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import re
import socket
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import Any
from urllib.parse import urljoin, urlsplit

from . import __version__
from .links import Hop, LinkResult, LinkStatus, is_checkable

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
PERMANENT = frozenset({301, 308})
_SOFT_404 = re.compile(rb"<title[^>]*>[^<]*(404|not found|page not found|no longer exists)[^<]*</title>", re.I)


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


def _retry_after(value: str | None, now: float) -> float | None:
    """Seconds to wait from a Retry-After header (seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now)


def _host(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


def _is_dns_failure(exc: BaseException) -> bool:
    while exc is not None:
        if isinstance(exc, socket.gaierror):
            return True
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return False


POOL_SIZE = 4
"""Connections per httpx client. httpcore's pool does work quadratic in its connections on
every request (measured: most of the CPU time at 32 connections to one host), so a host
allowed more requests in flight gets several small pools instead of one large one."""


class _Pool:
    """One httpx client and how many requests it has in flight."""

    def __init__(self, client: Any) -> None:
        self.client, self.busy = client, 0


class LinkChecker:
    """Checks URLs; one instance holds the limits and the clients for one run. Use it as an
    async context manager, which closes the clients."""

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
        await asyncio.gather(*(pool.client.aclose() for pool in pools))

    def _client(self, size: int) -> Any:
        """A client with no cookies, no credentials and nothing from the environment."""
        import httpx

        o = self.options
        if self._tls is None:  # one certificate store for every pool: loading it costs ~15 ms
            self._tls = httpx.create_ssl_context(trust_env=False)
        return httpx.AsyncClient(
            verify=self._tls,
            follow_redirects=False,
            timeout=httpx.Timeout(o.read_timeout, connect=o.connect_timeout),
            headers={"User-Agent": o.user_agent, "Accept": "text/html,application/xhtml+xml,*/*;q=0.8"},
            cookies=CookieJar(policy=DefaultCookiePolicy(allowed_domains=[])),
            trust_env=False,
            limits=httpx.Limits(max_connections=size, max_keepalive_connections=size),
        )

    def _pool(self, host: str) -> _Pool:
        """The least busy of the host's pools (created on first use)."""
        shard = self._pools.get(host)
        if shard is None:
            allowed = min(self.options.per_host, self.options.concurrency)
            count = -(-allowed // POOL_SIZE)
            shard = self._pools[host] = [_Pool(self._client(-(-allowed // count))) for _ in range(count)]
        return min(shard, key=lambda pool: pool.busy)

    async def check_all(self, urls: Iterable[str]) -> dict[str, LinkResult]:
        """Each distinct URL checked once, concurrently."""
        unique = list(dict.fromkeys(urls))
        results = await asyncio.gather(*(self.check(url) for url in unique))
        return dict(zip(unique, results, strict=True))

    async def check(self, url: str) -> LinkResult:
        started = time.monotonic()
        parts = urlsplit(url)
        if not is_checkable(url):
            return LinkResult(url, LinkStatus.INVALID, "not an http(s) URL with a host")
        if parts.username or parts.password:
            return LinkResult(url, LinkStatus.INVALID, "the URL carries credentials; they are never sent")
        host = _host(url)
        per_host = self._hosts.setdefault(host, asyncio.Semaphore(self.options.per_host))
        async with self._global, per_host:
            pool = self._pool(host)
            pool.busy += 1
            try:
                result = await asyncio.wait_for(self._with_retries(pool.client, url), self.options.total_timeout)
            except asyncio.TimeoutError:
                result = LinkResult(url, LinkStatus.TIMEOUT, f"no answer within {self.options.total_timeout:g} s")
            finally:
                pool.busy -= 1
        return replace(result, elapsed_s=round(time.monotonic() - started, 3))

    async def _with_retries(self, client: Any, url: str) -> LinkResult:
        o = self.options
        attempt = 0
        while True:
            attempt += 1
            try:
                result = await self._follow(client, url)
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

    async def _follow(self, client: Any, url: str) -> LinkResult:
        """One attempt: requests and redirects until a final answer."""
        import httpx

        chain: list[Hop] = []
        seen = {url}
        current = url
        while True:
            try:
                status, headers, body = await self._request(client, current)
            except httpx.TimeoutException as exc:
                raise _Attempt(LinkResult(url, LinkStatus.TIMEOUT, f"timed out ({type(exc).__name__})")) from None
            except (httpx.TransportError, httpx.InvalidURL) as exc:
                if _is_dns_failure(exc):
                    detail = f"DNS lookup of {_host(current)} failed"
                else:
                    detail = f"connection failed ({type(exc).__name__}: {exc})".rstrip(": )") + ")"
                raise _Attempt(LinkResult(url, LinkStatus.BROKEN, detail, chain=tuple(chain))) from None
            if status in REDIRECT_STATUSES and headers.get("location"):
                target = urljoin(current, headers["location"])
                chain.append(Hop(status, target))
                if target in seen:
                    return LinkResult(url, LinkStatus.BROKEN, "redirect loop", status, target, tuple(chain))
                if len(chain) > self.options.max_redirects:
                    detail = f"more than {self.options.max_redirects} redirects"
                    return LinkResult(url, LinkStatus.BROKEN, detail, status, target, tuple(chain))
                if not is_checkable(target):
                    return LinkResult(url, LinkStatus.INVALID, f"redirects to {target}", status, target, tuple(chain))
                seen.add(target)
                current = target
                continue
            return self._verdict(url, current, status, headers, body, chain)

    async def _request(self, client: Any, url: str) -> tuple[int, Any, bytes]:
        """HEAD, then a GET reading at most max_body bytes when HEAD is refused or cannot
        tell (an error status, or a 200 HTML page that may be a soft 404)."""
        head = await client.head(url)
        kind = head.headers.get("content-type", "")
        needs_get = (head.status_code >= 400 and head.status_code != 429) or (
            head.status_code == 200 and "html" in kind
        )
        if not needs_get:
            return head.status_code, head.headers, b""
        body = bytearray()
        async with client.stream("GET", url) as response:
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) >= self.options.max_body:
                    break
            return response.status_code, response.headers, bytes(body[: self.options.max_body])

    def _verdict(self, url: str, final: str, status: int, headers: Any, body: bytes, chain: list[Hop]) -> LinkResult:
        hops = tuple(chain)
        permanent = bool(hops) and all(h.status in PERMANENT for h in hops)
        if 200 <= status < 300:
            soft = bool(_SOFT_404.search(body))
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
            return LinkResult(
                url, kind, detail, status, final if hops else None, hops, permanent, soft or home, notes=notes
            )
        if status in (401, 403):
            wall = "cf-mitigated" in headers or "captcha" in body.lower().decode(errors="replace")
            reason = ": a bot wall" if wall else ": access refused to the checker, not proof of breakage"
            detail = f"HTTP {status}{reason}"
            return LinkResult(url, LinkStatus.BLOCKED, detail, status, final if hops else None, hops)
        if status in RETRY_STATUSES:
            wait = _retry_after(headers.get("retry-after"), time.time())
            kind = LinkStatus.RATE_LIMITED if status == 429 else LinkStatus.BROKEN
            result = LinkResult(url, kind, f"HTTP {status}", status, final if hops else None, hops)
            raise _Attempt(result, wait)
        return LinkResult(url, LinkStatus.BROKEN, f"HTTP {status}", status, final if hops else None, hops)


def check_urls(urls: Iterable[str], options: CheckerOptions | None = None) -> dict[str, LinkResult]:
    """The synchronous entry point: every URL's result."""

    async def run() -> dict[str, LinkResult]:
        async with LinkChecker(options) as checker:
            return await checker.check_all(urls)

    return asyncio.run(run())


def looks_offline(results: dict[str, LinkResult]) -> bool:
    """No URL got any HTTP answer and every failure was a DNS lookup: there is no network
    here, which says nothing about the sources."""
    if not results:
        return False
    checked = [r for r in results.values() if r.status is not LinkStatus.INVALID]
    return bool(checked) and all(r.http_status is None and r.detail.startswith("DNS lookup") for r in checked)
