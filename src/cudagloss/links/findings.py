"""What a run of `cudagloss links` found, beyond each URL's result: the quotes judged on the
pages, and the archived copies found; and what that means for the stamps.

The check stage fills it as URLs finish (so an interrupted run keeps what it found); the
stamp stage reads stamps() from it; the report tells it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from cudagloss.links.archive import ArchiveRun
from cudagloss.links.quotes import QuoteResult, QuoteStatus
from cudagloss.links.source_stamps import UrlStamps
from cudagloss.links.status import LinkResult


@dataclass
class Findings:
    results: dict[str, LinkResult] = field(default_factory=dict)
    """Each URL's result (its page dropped once its quotes are judged)."""
    quotes: dict[str, dict[str, QuoteResult]] = field(default_factory=dict)
    """URL -> quote (as an author wrote it) -> what the page said of it."""
    archive: ArchiveRun = field(default_factory=lambda: ArchiveRun({}, {}))

    def quote_count(self, status: QuoteStatus) -> int:
        return sum(1 for judged in self.quotes.values() for r in judged.values() if r.status is status)

    def stamps(self, today: dt.date) -> dict[str, UrlStamps]:
        """What to write beside each source checked: source_stamps.py says how."""
        out = {}
        for url, r in self.results.items():
            found = frozenset(q for q, j in self.quotes.get(url, {}).items() if j.status is QuoteStatus.FOUND)
            snap = self.archive.found.get(url)
            out[url] = UrlStamps(
                reachable_on=today if r.status.reachable else None,
                quotes_found=found if r.status.reachable else frozenset(),
                archived_url=snap.url if snap else None,
                archived_on=snap.day if snap else None,
                failed=r.status.fails,
            )
        return out
