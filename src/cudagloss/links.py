"""Link results: the closed set of verdicts the link checker gives a source URL.

As in lychee and Sphinx's linkcheck, a result is one of a few kinds, and only real
breakage (broken, invalid) fails a run: a bot wall answering 403 or a rate limit answering
429 says nothing about whether the page exists.
"""

from __future__ import annotations

import enum
import functools
import ipaddress
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

_LABEL = r"[^\W_](?:[\w-]{0,61}[^\W_])?"
_HOST = re.compile(rf"(?:{_LABEL}\.)*{_LABEL}\.?")
"""Labels of letters, digits, '-' and '_' (not first or last), any script, 63 at most."""


def _bad_char(url: str) -> bool:
    """A character no URL may hold literally: spaces, controls and invisible formatting
    (bidi overrides, zero-width), which would hide what is really requested."""
    return any(ch.isspace() or unicodedata.category(ch).startswith("C") for ch in url)


@functools.lru_cache(maxsize=1 << 14)
def url_problem(url: str) -> str | None:
    """Why url is not an http(s) address to check or to send a reader to (None when it is),
    worded to follow the URL in an author's error or a checker's report. The one predicate
    of validation, the link checker and the page escaper. Never raises, whatever the text."""
    if not isinstance(url, str) or len(url) > MAX_URL_LENGTH:
        return f"is longer than {MAX_URL_LENGTH} characters" if isinstance(url, str) else "is not a URL"
    if _bad_char(url):
        return "contains a space or a control character (write a space as %20)"
    if "\\" in url:
        return "contains a backslash (browsers read it as '/')"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return f"is not a well-formed URL ({shown(str(exc), 100)})"
    if parts.scheme not in ("http", "https"):
        return "is not an http(s) URL"
    if "@" in parts.netloc:
        return "carries a user name or password"
    host = parts.hostname
    if not host:
        return "has no host name"
    if port == 0:
        return "has port 0"
    if "[" in parts.netloc:
        try:
            ipaddress.IPv6Address(host.split("%", 1)[0])
        except ValueError:
            return "has a malformed IPv6 address"
    elif len(host) > 253 or not _HOST.fullmatch(host):
        return "has a malformed host name"
    return None


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
