"""The link checker's HTTP client: aiohttp, held to the checker's rules by what is around it.

aiohttp carries the protocol (framing, keep-alive, TLS); what makes it safe for hostile servers
is set here and in checker.py: no cookie jar (DummyCookieJar), no proxy or .netrc from the
environment (trust_env=False), no decoding by the client (auto_decompress=False: wire.BoundedBody
decodes under the cap), no redirects followed by it, and every address it connects to checked:
a resolver that drops the private answers of a name (model.addresses) and a socket factory that
refuses, at connect time, any address that is not public, whatever led there (an IP literal
never reaches a resolver). Its errors come out as WireError, WireTimeout or PrivateAddress.

Two sessions: one whose resolver and socket factory allow no local network at all, and one
that allows those CUDAGLOSS_LOCAL_SOURCES names. A page is local where its host is a local
address, or a name that resolves to no public one; only such a page is fetched through the
second, and only it may redirect the checker to a local address: a public page may not send the
checker inward through a name any more than through an address, the name judged on what it
resolves to when connected. Sessions apart, so that a connection pooled for an allowed local
source is never reused for a public page's redirect.
"""

from __future__ import annotations

import asyncio
import re
import socket
import ssl
from collections.abc import Coroutine
from typing import Any, TypeVar

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from yarl import URL

from cudagloss.links.wire import Unrequestable, target_of
from cudagloss.model.addresses import Network, address_problem, local_networks, url_host_problem

T = TypeVar("T")
KEEPALIVE_S = 5.0
"""An idle connection older than this is closed rather than reused (servers drop them)."""
MAX_HEADERS = 128
MAX_LINE = 32 * 1024
"""The most headers (trailers count too), and bytes of one status or header line, in a response:
aiohttp's 8,190 bytes a line would call broken a page that sends a large Content-Security-Policy
or Link header (browsers take far more); 128 of 32 KiB bound what one response may hold."""
_SENDABLE = re.compile(r"[ -~]*")
"""A header value we send: printable ASCII only, so no value can end its line early or smuggle another."""
_TIMEOUT = getattr(asyncio, "timeout", None)  # Python 3.11+: no task per use


class WireTimeout(Exception):
    """No connection or no bytes within the time allowed (not a TimeoutError, so that it is
    never confused with the caller's own deadline)."""


class WireError(Exception):
    """The connection failed or the peer broke HTTP/1.1; the cause is chained."""


class PrivateAddress(OSError):
    """The host resolved only to addresses a source may not lead to (model.addresses), or the
    address about to be connected to is one: no connection was made. (An OSError, so that
    aiohttp passes it on as a connection failure, chained.)"""


async def within(seconds: float, coro: Coroutine[Any, Any, T]) -> T:
    """coro's result, or asyncio.TimeoutError once seconds have passed."""
    if _TIMEOUT is None:  # pragma: no cover - Python 3.10
        return await asyncio.wait_for(coro, seconds)
    async with _TIMEOUT(seconds):
        return await coro


async def public_addresses(
    host: str, port: int, family: int = socket.AF_UNSPEC, local: tuple[Network, ...] | None = None
) -> list[ResolveResult]:
    """What host resolves to, less every address a source may not lead to (local: the networks
    allowed, CUDAGLOSS_LOCAL_SOURCES's by default); PrivateAddress if nothing is left
    (socket.gaierror if the lookup fails)."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM, family=family)
    found: list[ResolveResult] = []
    refused = ""
    for fam, _, proto, _, sockaddr in infos:
        problem = address_problem(str(sockaddr[0]), local)
        if problem is not None:
            refused = refused or problem
            continue
        found.append(
            {"hostname": host, "host": str(sockaddr[0]), "port": port, "family": fam, "proto": proto, "flags": 0}
        )
    if not found:
        raise PrivateAddress(f"{host} resolves to no public address ({refused or 'none at all'}): not connected")
    return found


class PublicResolver(AbstractResolver):
    """A name's public addresses only (aiohttp asks this for every name it connects to); local:
    the networks allowed besides (None: CUDAGLOSS_LOCAL_SOURCES's; (): none)."""

    def __init__(self, local: tuple[Network, ...] | None = None) -> None:
        self.local = local

    async def resolve(self, host: str, port: int = 0, family: int = socket.AF_INET) -> list[ResolveResult]:
        return await public_addresses(host, port, family, self.local)

    async def close(self) -> None:
        pass


class Client:
    """One aiohttp session for a run: connections kept per origin, at most per_host each.
    Made on first use (aiohttp wants a running loop); close() ends it."""

    def __init__(self, connect_timeout: float, read_timeout: float, limit: int, per_host: int) -> None:
        self._timeout = aiohttp.ClientTimeout(
            total=None, connect=None, sock_connect=connect_timeout, sock_read=read_timeout
        )
        self._limit, self._per_host = limit, per_host
        self._session: aiohttp.ClientSession | None = None
        self._public_only: aiohttp.ClientSession | None = None
        """For redirect hops from a page that was not local: no local network allowed at all."""
        self._tls: ssl.SSLContext | None = None
        self.opened = 0
        """Connections opened so far (how well reuse works, for tests and benchmarks)."""

    def _socket(self, addr_info: tuple[Any, ...], local: tuple[Network, ...] | None = None) -> socket.socket:
        """The last look before connecting, at the very address connected to."""
        family, kind, proto, _, sockaddr = addr_info
        problem = address_problem(str(sockaddr[0]), local)
        if problem is not None:
            raise PrivateAddress(f"the address to connect to {problem}: not connected")
        sock = socket.socket(family, kind, proto)
        self.opened += 1
        return sock

    def _open(self, local: tuple[Network, ...] | None) -> aiohttp.ClientSession:
        connector = aiohttp.TCPConnector(
            limit=self._limit,
            limit_per_host=self._per_host,
            keepalive_timeout=KEEPALIVE_S,
            resolver=PublicResolver(local),
            socket_factory=lambda info: self._socket(info, local),
        )
        return aiohttp.ClientSession(
            connector=connector,
            cookie_jar=aiohttp.DummyCookieJar(),
            trust_env=False,
            auto_decompress=False,
            timeout=self._timeout,
            max_line_size=MAX_LINE,
            max_field_size=MAX_LINE,
            max_headers=MAX_HEADERS,
        )

    async def request(self, url: str, headers: dict[str, str], *, inward: bool) -> tuple[aiohttp.ClientResponse, bool]:
        """get(url, headers), and whether its page is local (its host a local address, or a name
        with no public address: then asked through the session that allows local networks).
        inward False (a redirect from a page that was not local): public addresses only."""
        if inward and url_host_problem(url, ()) is not None:
            return await self.get(url, headers), True
        try:
            return await self.get(url, headers, public_only=True), False
        except PrivateAddress:
            if not inward or not local_networks():
                raise
        return await self.get(url, headers), True

    async def get(self, url: str, headers: dict[str, str], *, public_only: bool = False) -> aiohttp.ClientResponse:
        """GET url with exactly these headers; the response's head read, its body not (the
        caller releases it). public_only: connect to public addresses only, whatever
        CUDAGLOSS_LOCAL_SOURCES allows (a redirect hop from a page that was not local).
        Raises WireError, WireTimeout, PrivateAddress or Unrequestable."""
        (scheme, _, _), host_header, path = target_of(url)
        if not all(_SENDABLE.fullmatch(v) for v in headers.values()):
            raise Unrequestable("a header value that HTTP cannot carry")
        target = URL(f"{scheme}://{host_header}{path}", encoded=True)
        if public_only:
            if self._public_only is None:
                self._public_only = self._open(())
            session = self._public_only
        else:
            if self._session is None:
                self._session = self._open(None)
            session = self._session
        tls: ssl.SSLContext | bool = True
        if scheme == "https":
            if self._tls is None:  # loading the certificates costs ~15 ms: once, and only for https
                self._tls = tls_context()
            tls = self._tls
        try:
            return await session.get(target, headers=headers, allow_redirects=False, ssl=tls)
        except Exception as exc:
            raise failure(exc) from exc

    async def close(self) -> None:
        for session in (self._session, self._public_only):
            if session is not None:
                await session.close()
        self._session = self._public_only = None


def failure(exc: BaseException) -> Exception:
    """The checker's reading of an error from aiohttp (or its body reads)."""
    cause: BaseException | None = exc
    for _ in range(16):  # a chain of causes is short; a cycle would not end
        if cause is None:
            break
        if isinstance(cause, PrivateAddress):
            return PrivateAddress(str(cause))
        cause = cause.__cause__ or cause.__context__
    if isinstance(exc, asyncio.TimeoutError):  # aiohttp's own (sock_connect, sock_read), never the run's
        return WireTimeout("connect" if isinstance(exc, aiohttp.ConnectionTimeoutError) else "read")
    if isinstance(exc, aiohttp.InvalidURL):
        return Unrequestable(f"{type(exc).__name__}: {exc}")
    if isinstance(exc, aiohttp.ClientResponseError):  # the server broke HTTP/1.1
        return WireError(f"not a valid HTTP/1.1 response ({exc.message})")
    if isinstance(exc, (aiohttp.ClientError, OSError)):  # (before ValueError: a certificate error is both)
        return WireError(f"{type(exc).__name__}: {exc}")
    if isinstance(exc, ValueError):  # what aiohttp refuses to send
        return Unrequestable(f"{type(exc).__name__}: {exc}")
    return exc if isinstance(exc, Exception) else WireError(str(exc))


def tls_context() -> ssl.SSLContext:
    """Certificates from certifi where installed, else the system's; HTTP/1.1 only."""
    try:
        import certifi

        context = ssl.create_default_context(cafile=certifi.where())
    except ImportError:  # pragma: no cover - certifi is installed with the checker
        context = ssl.create_default_context()
    context.set_alpn_protocols(["http/1.1"])
    return context
