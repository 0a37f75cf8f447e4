"""What the last link check found for each source, as a reader is told it.

A source's `checked_on` is the day the link checker last found it reachable, stamped into the
term's YAML. The publish job checks every source before it builds and hands the build that
run's report (`cudagloss links --format json`), so a page can say more than the stamp: that a
source was unreachable on the day of the build, or that it could not be checked (a bot wall,
a rate limit, a timeout), instead of a bare "not yet checked". Without a report a page says
what the stamp says. The result names are the link checker's closed set (links/status.py);
tests keep the two equal, so the model does not import the link checker.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from cudagloss.model.term import PENDING

REACHABLE = ("ok", "redirected")
FAILING = ("broken", "invalid")
UNDECIDED = {"blocked": "blocked the checker", "rate-limited": "rate-limited the checker", "timeout": "timed out"}
"""What an inconclusive result says of the source: nothing about whether the page exists."""
RESULTS = (*REACHABLE, *FAILING, *UNDECIDED)
"""Every result a report may hold (cudagloss.links.status.LinkStatus's values)."""
QUOTE_FOUND, QUOTE_MISSING, QUOTE_UNVERIFIABLE = "quote-found", "quote-missing", "quote-unverifiable"
QUOTE_RESULTS = (QUOTE_FOUND, QUOTE_MISSING, QUOTE_UNVERIFIABLE)
"""What a report may say of a quote (cudagloss.links.quotes.QuoteStatus's values)."""
ARCHIVE_AFTER = 2
"""Broken runs in a row after which a page links a source's archived copy, the original beside it:
one broken run may be a server's bad hour; two in a row (runs are days apart) is a page gone."""


@dataclass(frozen=True, slots=True)
class LinkCheck:
    """One URL's result in the report: a value of RESULTS, and what the run found beyond it."""

    result: str
    quotes: tuple[tuple[str, str], ...] = ()
    """(quote as the author wrote it, a value of QUOTE_RESULTS) pairs (a tuple: checks are hashed)."""
    failed_checks: int | None = None
    """Broken runs in a row, this one counted (None: a report from before it was counted)."""
    archived_url: str | None = None


@dataclass(frozen=True)
class LinkChecks:
    """A link check run: its day and each URL's result."""

    day: dt.date
    by_url: dict[str, LinkCheck] = field(default_factory=dict)

    def found_reachable(self, url: str) -> bool:
        check = self.by_url.get(url)
        return check is not None and check.result in REACHABLE


def checked(checked_on: object, url: str, checks: LinkChecks | None) -> bool:
    """Whether the source was ever found reachable: stamped, or reachable in this run's report."""
    return str(checked_on) != PENDING or (checks is not None and checks.found_reachable(url))


def checked_phrase(checked_on: object, url: str, checks: LinkChecks | None) -> str:
    """What a page says after a source: 'checked 2026-09-01', and where the run said more,
    'checked 2026-09-01; unreachable on 2026-12-04', 'unreachable when checked on 2026-12-04',
    'could not be checked on 2026-12-04: it timed out'; 'not yet checked' where no check ran."""
    stamp = str(checked_on)
    check = checks.by_url.get(url) if checks is not None else None
    if check is None or checks is None:
        return "not yet checked" if stamp == PENDING else f"checked {stamp}"
    day = checks.day.isoformat()
    if stamp != PENDING:
        return f"checked {stamp}; unreachable on {day}" if check.result in FAILING else f"checked {stamp}"
    if check.result in REACHABLE:
        return f"checked {day}"
    if check.result in FAILING:
        return f"unreachable when checked on {day}"
    return f"could not be checked on {day}: it {UNDECIDED.get(check.result, check.result)}"
