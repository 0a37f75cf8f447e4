"""Where a reader is sent for a source, and what the page says of its quote.

A source with a quote links to the sentence itself (a text fragment, model.fragments); one
with an archived copy carries Robust Links attributes (the original, the copy, its date), so
a reader's tools can find the page as we cited it; and once the link checker has found the
URL broken ARCHIVE_AFTER runs in a row, the title links the archived copy and the original
is shown beside it. Counts and quote results come from the build's link report where there
is one (it is newer), else from the stamps in the term. Model layer: no site imports.
"""

from __future__ import annotations

from dataclasses import dataclass

from cudagloss.model.addresses import url_host_problem
from cudagloss.model.fragments import text_fragment_url
from cudagloss.model.link_checks import (
    ARCHIVE_AFTER,
    QUOTE_FOUND,
    QUOTE_MISSING,
    LinkChecks,
)
from cudagloss.model.term import PENDING, Source
from cudagloss.model.urls import url_problem


@dataclass(frozen=True)
class SourceLink:
    href: str
    """What the title links to: the page (at the quote, where there is one), or its archived copy."""
    original: str
    """The source's own URL."""
    archived_url: str | None
    archived_on: str | None
    archive_shown: bool
    """href is the archived copy: the URL was found broken ARCHIVE_AFTER runs in a row."""
    quote_phrase: str
    """'' (no quote), 'quote checked 2026-12-05', 'quote not found on 2026-12-05', ..."""


def citable_copy(url: str | None) -> str | None:
    """url, where it is an address a reader may be sent to in place of the page (a public
    http(s) address, as a source's own URL must be); else None. `make check` refuses any
    other in a term, but a link report, or a file not checked, is read too."""
    if url is None or url_problem(url) is not None or url_host_problem(url) is not None:
        return None
    return url


def source_link(source: Source, checks: LinkChecks | None) -> SourceLink:
    check = checks.by_url.get(source.url) if checks is not None else None
    # The copy and its day from one place, the source's own stamps (another term's copy of the same
    # URL is stamped here too by the next `make links`): never a copy linked without its date.
    archived_on = str(source.archived_on) if source.archived_on != PENDING else None
    archived = citable_copy(source.archived_url) if archived_on is not None else None
    failed = check.failed_checks if check is not None and check.failed_checks is not None else source.failed_checks
    shown = archived is not None and failed >= ARCHIVE_AFTER
    target = archived if shown and archived is not None else source.url
    href = text_fragment_url(target, source.quote) if source.quote else target
    return SourceLink(href, source.url, archived, archived_on, shown, _quote_phrase(source, checks))


def _quote_phrase(source: Source, checks: LinkChecks | None) -> str:
    if not source.quote:
        return ""
    check = checks.by_url.get(source.url) if checks is not None else None
    said = dict(check.quotes).get(source.quote) if check is not None else None
    stamped = str(source.quote_checked_on)
    if said is not None and checks is not None:
        day = checks.day.isoformat()
        if said == QUOTE_FOUND:
            return f"quote checked {day}"
        prefix = f"quote checked {stamped}; " if stamped != PENDING else ""
        if said == QUOTE_MISSING:
            return f"{prefix}quote not found on the page on {day}"
        return f"{prefix}quote could not be looked for on {day}"
    return f"quote checked {stamped}" if stamped != PENDING else "quote not yet checked"
