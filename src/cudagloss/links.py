"""Link results: the closed set of verdicts the link checker gives a source URL.

As in lychee and Sphinx's linkcheck, a result is one of a few kinds, and only real
breakage (broken, invalid) fails a run: a bot wall answering 403 or a rate limit answering
429 says nothing about whether the page exists.
"""

from __future__ import annotations

import enum
import functools
import re
import unicodedata
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from .linkwire import shown


class LinkStatus(enum.Enum):
    OK = "ok"
    REDIRECTED = "redirected"
    BLOCKED = "blocked"
    RATE_LIMITED = "rate-limited"
    TIMEOUT = "timeout"
    BROKEN = "broken"
    INVALID = "invalid"

    @property
    def fails(self) -> bool:
        """Only these make `make links` exit non-zero."""
        return self in (LinkStatus.BROKEN, LinkStatus.INVALID)

    @property
    def reachable(self) -> bool:
        """Found reachable: the source gets that day's checked-on stamp."""
        return self in (LinkStatus.OK, LinkStatus.REDIRECTED)


@dataclass(frozen=True)
class Hop:
    """One redirect: the status that sent us on, and where to."""

    status: int
    location: str


@dataclass(frozen=True)
class LinkResult:
    """What checking one URL found."""

    url: str
    status: LinkStatus
    detail: str = ""
    http_status: int | None = None
    final_url: str | None = None
    chain: tuple[Hop, ...] = ()
    permanent: bool = False
    """Every hop was a permanent redirect (301/308): the source should cite final_url."""
    soft_404: bool = False
    """Answered 200, but looks like an error page or a redirect to the site's home page."""
    attempts: int = 1
    elapsed_s: float = 0.0
    notes: list[str] = field(default_factory=list)


MAX_URL_LENGTH = 2048
"""Longer than any URL worth citing (sitemaps stop at 2,048 too); a longer one, from an
author or a server's Location header, is refused before it reaches a request line."""

_HOST_LABEL = re.compile(r"(?!-)[A-Za-z0-9_-]{1,63}(?<!-)")


def _bad_char(url: str) -> str | None:
    """The first character no URL may hold literally: controls, spaces and invisible
    formatting (bidi overrides, zero-width), which would hide what is really requested."""
    for ch in url:
        if ch == "\\" or unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp"):
            return ch
    return None


def _host_problem(host: str) -> str | None:
    if ":" in host:
        return None  # an IPv6 literal, which urlsplit has already checked between its brackets
    if len(host) > 253:
        return "its host name is longer than 253 characters"
    for label in host.removesuffix(".").split("."):
        if not label.isascii():
            if len(label) > 63 or not all(ch.isalnum() or ch in "-_" for ch in label):
                return "its host name holds a character no host name may hold"
        elif not _HOST_LABEL.fullmatch(label):
            return "its host name is malformed (an empty, over-long or badly formed label)"
    return None


@functools.lru_cache(maxsize=1 << 14)
def url_problem(url: str) -> str | None:
    """Why url cannot be checked (None when it can): only absolute http(s) URLs with a
    well-formed host and port, no credentials, no invisible or control characters, and a
    sane length. Never raises, whatever the text."""
    if not isinstance(url, str) or not url:
        return "not a URL"
    if len(url) > MAX_URL_LENGTH:
        return f"longer than {MAX_URL_LENGTH} characters"
    bad = _bad_char(url)
    if bad is not None:
        return f"holds the character U+{ord(bad):04X}, which a URL must percent-encode"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return f"malformed ({shown(str(exc), 100)})"
    if parts.scheme not in ("http", "https"):
        return "not an http(s) URL"
    if "@" in parts.netloc:
        return "the URL carries credentials; they are never sent"
    if not parts.hostname:
        return "not an http(s) URL with a host"
    if port == 0:
        return "port 0 cannot be connected to"
    return _host_problem(parts.hostname)


def is_checkable(url: str) -> bool:
    """Only absolute, well-formed http(s) URLs with a host are checked; anything else is invalid."""
    return url_problem(url) is None


def looks_offline(results: dict[str, LinkResult]) -> bool:
    """No URL got any HTTP answer and every failure was a DNS lookup: there is no network
    here, which says nothing about the sources."""
    if not results:
        return False
    checked = [r for r in results.values() if r.status is not LinkStatus.INVALID]
    return bool(checked) and all(r.http_status is None and r.detail.startswith("DNS lookup") for r in checked)
