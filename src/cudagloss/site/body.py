"""A term's body as its page shows it: each `measured(...)` directive replaced by the
value it names, as a link to the row of the measurement page it came from, each
`cite(...)` by the source it names, linked, with the day it was checked, each
`compare(...)` by what the samples say of two timings, and each `worked(...)` by its steps."""

from __future__ import annotations

from collections.abc import Sequence

from cudagloss.model.corpus import FactValue
from cudagloss.model.directives import expand
from cudagloss.model.link_checks import LinkChecks
from cudagloss.model.measurements import MeasurementSet
from cudagloss.model.term import Term
from cudagloss.site.directives import handlers
from cudagloss.site.memo import Memo

Cited = tuple[tuple[str, str], ...]


def render_body(
    term: Term,
    measurements: MeasurementSet | None,
    page_uri: str,
    memo: Memo[tuple[str, Cited]],
    checks: LinkChecks | None = None,
    facts: Sequence[FactValue] = (),
) -> tuple[str, Cited]:
    """A term's body with its directives replaced by their values and sources, and the
    (experiment, result) pairs it cited; raises AuthorTextError (the check stage has
    refused a body that would). `mkdocs serve` asks again after every edit, so it is
    memoised on what it reads."""
    key = (
        term.body,
        repr(term.measurements),
        repr(term.sources),
        repr(term.worked),
        repr(facts) if term.worked else None,
        measurements.fingerprint if measurements else None,
        page_uri,
        (checks.day, tuple(checks.by_url.get(s.url) for s in term.sources)) if checks else None,
    )

    def render() -> tuple[str, Cited]:
        handle, citer = handlers(term, measurements, page_uri, checks, facts)
        return expand(term.body, handle), tuple(citer.used)

    return memo.get(key, render)
