"""Link results: the closed set of verdicts the link checker gives a source URL.

As in lychee and Sphinx's linkcheck, a result is one of a few kinds, and only real
breakage (broken, invalid) fails a run: a bot wall answering 403 or a rate limit answering
429 says nothing about whether the page exists.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


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
class Page:
    """A page's body as it was served, for what reads its text (the quote check): asked for
    only where a source carries a quote, and dropped once that check is done."""

    url: str
    """The final URL, after redirects."""
    content_type: str
    """The media type, lower case, without parameters ("" when the server sent none)."""
    charset: str | None
    """The Content-Type's charset parameter, lower case, as the server wrote it."""
    body: bytes
    """Undone from its Content-Encoding; at most the checker's max_page bytes."""
    truncated: bool
    """The body went on past max_page: what is here is its start."""
    stylesheets: tuple[tuple[str, str], ...] = ()
    """The stylesheets its Link header names: (URL resolved, media)."""
    local: bool = False
    """Its host is a local address or a name with no public one (client.Client.request): only
    then may what it links to (its stylesheets) be local too."""


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
    notes: list[str] = field(default_factory=list)
    page: Page | None = field(default=None, compare=False, repr=False)
    """The body of a 2xx answer, where it was asked for (LinkChecker.check(..., page=True))."""


def looks_offline(results: dict[str, LinkResult]) -> bool:
    """No URL got any HTTP answer and every failure was a DNS lookup: there is no network
    here, which says nothing about the sources."""
    if not results:
        return False
    checked = [r for r in results.values() if r.status is not LinkStatus.INVALID]
    return bool(checked) and all(r.http_status is None and r.detail.startswith("DNS lookup") for r in checked)
