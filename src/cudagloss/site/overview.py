"""The glossary at a glance: what was measured on which GPUs and when (the home page says it),
and the device limits of each GPU model side by side ("GPU at a glance").

Both are drawn from the measurement records alone, so they grow with the fleet: one line per
GPU model however many nodes measured it, one column per model on the limits page, each value
the one number the prose would show (display.one_number), linked to its row.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from markupsafe import Markup

from cudagloss.model.corpus import Corpus
from cudagloss.model.directives import expand
from cudagloss.model.display import one_number
from cudagloss.model.measurements import MeasurementSet
from cudagloss.model.urls import (
    measurement_src_uri,
    measurements_index_uri,
    relative_href,
    result_anchor,
    term_src_uri,
)
from cudagloss.site import escape
from cudagloss.site.directives import handlers
from cudagloss.site.environment import href
from cudagloss.site.fleet import MeasuredBy, measured_by
from cudagloss.text.markdown import neutralize_html

GLANCE_URI = "gpus.md"
"""The GPU at a glance page, beside the home page."""
LIMITS = "device-limits"
"""The experiment whose results the page tabulates."""


@dataclass(frozen=True, slots=True)
class Measured:
    """What the home page says of the measurements: by GPU model, how many experiments, the
    newest run, and where to read on."""

    models: tuple[MeasuredBy, ...]
    """By GPU model, as the byline counts them (site.fleet): distinct cards, named while few."""
    experiments: int
    measured: int
    newest: str
    glance: Markup | None
    index: Markup
    runs: int = 0
    """Good runs kept, every card's and experiment's together (a card's re-runs count here, never as cards)."""


@dataclass(frozen=True, slots=True)
class Highlight:
    """A term's measured surprise on the home page: its name, its page, and the sentence with
    the values the measurements gave."""

    name: str
    href: Markup
    text: Markup


@dataclass(frozen=True, slots=True)
class GlanceRow:
    description: str
    cells: tuple[Markup, ...]


@dataclass(frozen=True, slots=True)
class GlancePage:
    """Context of gpus.md.j2: the device limits, one column per GPU model."""

    columns: tuple[str, ...]
    rows: tuple[GlanceRow, ...]
    experiment: Markup
    command: str


def measured(measurements: MeasurementSet | None, from_uri: str) -> Measured | None:
    """The home page's account of the fleet, or None for a glossary without measurements."""
    if measurements is None:
        return None
    every = [
        (run.node, run.gpu, m.recorded_on) for record in measurements for run in record.measured for m in run.good_runs
    ]
    models = measured_by(every)
    ran = {record.id for record in measurements if record.measured}
    glance = measurements.get(LIMITS)
    return Measured(
        models,
        experiments=len(list(measurements)),
        measured=len(ran),
        newest=max((day for _, _, day in every), default=""),
        glance=href(relative_href(GLANCE_URI, from_uri)) if glance and glance.measured else None,
        index=href(relative_href(measurements_index_uri(), from_uri)),
        runs=len(every),
    )


HIGHLIGHTS = 6
"""Surprises the home page shows: a few, in reading order; each page keeps its own."""


def highlights(corpus: Corpus, from_uri: str) -> tuple[Highlight, ...]:
    """The first HIGHLIGHTS terms' `highlight`, in reading order, their directives replaced by
    the values they cite (linked from this page) as a body's are, raw HTML shown as text."""
    found: list[Highlight] = []
    for t in corpus.reading_order():
        if t.term.highlight and len(found) < HIGHLIGHTS:
            handle, _ = handlers(t.term, corpus.measurements, from_uri, corpus.link_checks)
            text = neutralize_html(expand(t.term.highlight, handle))
            found.append(Highlight(t.term.name, href(relative_href(term_src_uri(t.slug), from_uri)), Markup(text)))
    return tuple(found)


def glance(measurements: MeasurementSet | None) -> GlancePage | None:
    """The device limits per GPU model, or None where no card has measured them."""
    record = measurements.get(LIMITS) if measurements else None
    if record is None or not record.measured:
        return None
    count = Counter(run.gpu for run in record.measured)
    models = sorted(count, key=lambda gpu: (-count[gpu], gpu))
    page = relative_href(measurement_src_uri(LIMITS), GLANCE_URI)
    names = list(dict.fromkeys(r.name for run in record.measured if run.good for r in run.good.results))
    rows = []
    for name in names:
        values = record.values(name)
        described = next((r.description for _, r in values if r is not None and r.description), name)
        cells = []
        for gpu in models:
            mine = [(run, r) for run, r in values if run.gpu == gpu]
            shown = one_number([(run.gpu, r) for run, r in mine])
            anchor = escape.ident(result_anchor(mine[shown.first][0].node, name))
            cells.append(Markup(f"[{escape.text(shown.text)}]({page}#{anchor})"))
        rows.append(GlanceRow(described, tuple(cells)))
    columns = tuple(f"{gpu} ({count[gpu]} card{'s' if count[gpu] != 1 else ''})" for gpu in models)
    return GlancePage(columns, tuple(rows), href(page), f"make verify EXPERIMENT={LIMITS}")
