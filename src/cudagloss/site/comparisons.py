"""The table behind each `compare(...)` of a term's body: for each card that measured both
timings, the two medians, the ratio the prose rounds ('about 53× faster than'), the samples
and the test's p, so a reader finds every number of the phrase on the page (issue 38)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from cudagloss.model.compare import compare_timings
from cudagloss.model.directives import AuthorTextError, parse_directives
from cudagloss.model.display import format_value
from cudagloss.model.measurements import CitationError, MeasurementSet, resolve_pair
from cudagloss.model.term import Term
from cudagloss.site.directives import judgement, ratio_text


@dataclass(frozen=True, slots=True)
class ComparisonRow:
    """One compare() on one card (or one GPU model's cards taken together)."""

    first: str
    second: str
    card: str
    gpu: str
    medians: str
    ratio: str
    """The ratio of the medians as the prose rounds it ('53×'), or '' where the test shows no difference."""
    verdict: str
    samples: str
    p: str


def comparison_rows(term: Term, measurements: MeasurementSet | None) -> tuple[ComparisonRow, ...]:
    """Every compare() of the body, card by card, in the body's order; one the check stage
    would refuse is left out (the check reports it)."""
    try:
        directives = [d for d in parse_directives(term.body) if d.name == "compare"]
    except AuthorTextError:
        return ()
    rows: list[ComparisonRow] = []
    seen: set[tuple[tuple[str, str], ...]] = set()
    for d in directives:
        first, second = d.values[0], d.values[1]
        if (first, second) in seen:
            continue
        seen.add((first, second))
        try:
            nodes = resolve_pair(term, measurements, first, second)
        except CitationError:
            continue
        for n in nodes:
            a, b = n.values[first], n.values[second]
            word, ratio = judgement(a, b)
            c = compare_timings(b.samples, a.samples)
            rows.append(
                ComparisonRow(
                    first=".".join(first),
                    second=".".join(second),
                    card=n.node,
                    gpu=n.gpu,
                    medians=f"{format_value(a)} and {format_value(b)}",
                    ratio=f"{ratio_text(ratio)}×" if word and ratio < math.inf else "",
                    verdict=f"{word} than" if word else "not shown to differ from",
                    samples=f"{len(a.samples)} and {len(b.samples)}",
                    p=f"{c.test.p:.2g}",
                )
            )
    return tuple(rows)
