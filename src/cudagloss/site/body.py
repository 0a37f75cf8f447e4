"""A term's body as its page shows it: each `measured(...)` directive replaced by the
value it names, as a link to the row of the measurement page it came from, each
`cite(...)` by the source it names, linked, with the day it was checked, each
`compare(...)` by what the samples say of two timings, and each `worked(...)` by its steps."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from cudagloss.model.corpus import FactValue
from cudagloss.model.directives import expand
from cudagloss.model.link_checks import LinkChecks
from cudagloss.model.measurements import MeasurementSet
from cudagloss.model.term import Term
from cudagloss.site.charts import ChartView
from cudagloss.site.diagrams import files_key
from cudagloss.site.directives import handlers
from cudagloss.site.memo import Memo

Cited = tuple[tuple[str, str], ...]
Rendered = tuple[str, Cited, tuple[ChartView, ...]]


def render_body(
    term: Term,
    measurements: MeasurementSet | None,
    page_uri: str,
    memo: Memo[Rendered],
    checks: LinkChecks | None = None,
    facts: Sequence[FactValue] = (),
    root: Path | None = None,
) -> Rendered:
    """A term's body with its directives replaced by their values and sources (a chart or diagram
    by its mark, cudagloss.site.charts), the (experiment, result) pairs it cited and its charts and
    diagrams; raises AuthorTextError (the check stage has refused a body that would). `mkdocs
    serve` asks again after every edit, so it is memoised on what it reads; root: where diagram
    files are read from."""
    key = (
        term.body,
        repr(term.measurements),
        repr(term.sources),
        repr(term.charts),
        (repr(term.diagrams), root, files_key(root, term)) if root is not None and term.diagrams else None,
        repr(term.worked),
        repr(facts) if term.worked else None,
        measurements.fingerprint if measurements else None,
        page_uri,
        (checks.day, tuple(checks.by_url.get(s.url) for s in term.sources)) if checks else None,
    )

    def render() -> Rendered:
        handle, citer = handlers(term, measurements, page_uri, checks, facts, root)
        return expand(term.body, handle), tuple(citer.used), tuple(citer.charts)

    return memo.get(key, render)
