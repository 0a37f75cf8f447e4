"""What one run of `cudagloss links` writes beside each source: the stamps, decided per URL.

A URL may be cited by several terms; what the run found of it (reachable on a day, each quote
found on the page or not, an archived copy, broken this time) is one UrlStamps, and
source_plan turns it into the fields to set in one source of one term file (stamp.py writes
them). The rules, in one place:

    checked_on        the day the URL was found reachable; never moved back
    quote_checked_on  the day this source's quote was found on the page; a quote not found
                      leaves it as it was (content drift is reported, never stamped)
    archived_url/_on  the archive's snapshot, written once: a source that has one keeps it
    failed_checks     one more for each run that finds the URL broken or invalid, back to 0 once
                      it is reachable again; a run that cannot tell (timeout, bot wall) leaves it
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass

from cudagloss.model.limits import COUNT_MAX

KEYS = ("checked_on", "quote_checked_on", "archived_url", "archived_on", "failed_checks")
"""The fields of a source that the link checker writes."""


@dataclass(frozen=True)
class UrlStamps:
    """What this run found of one URL."""

    reachable_on: dt.date | None = None
    quotes_found: frozenset[str] = frozenset()
    """The quotes found on the page (each as an author wrote it)."""
    archived_url: str | None = None
    archived_on: dt.date | None = None
    failed: bool = False
    """Found broken or invalid this run."""


def as_date(value: object) -> dt.date | None:
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError:
        return None


def source_plan(source: Mapping[str, object], found: UrlStamps | dt.date) -> list[tuple[str, object]]:
    """The (field, value) pairs to set in one source (its mapping as the file holds it) from
    what the run found of its URL (a bare date: found reachable that day, nothing more)."""
    if isinstance(found, dt.date):
        found = UrlStamps(reachable_on=found)
    out: list[tuple[str, object]] = []
    day = found.reachable_on
    if day is not None:
        old = as_date(source.get("checked_on"))
        if old is None or day > old:
            out.append(("checked_on", day))
        quote = source.get("quote")
        if isinstance(quote, str) and quote in found.quotes_found:
            old_quote = as_date(source.get("quote_checked_on"))
            if old_quote is None or day > old_quote:
                out.append(("quote_checked_on", day))
    failures = source.get("failed_checks", 0)
    count = failures if isinstance(failures, int) and not isinstance(failures, bool) else 0
    if found.failed:
        out.append(("failed_checks", min(count + 1, COUNT_MAX)))
    elif day is not None and count and "failed_checks" in source:
        out.append(("failed_checks", 0))
    if found.archived_url and found.archived_on and not source.get("archived_url"):
        out += [("archived_url", found.archived_url), ("archived_on", found.archived_on)]
    return out
