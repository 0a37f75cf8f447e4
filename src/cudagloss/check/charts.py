"""A term's charts as the check stage reports them, each mistake at its own field: a chart the
body never shows or shows under an id it lacks (the directive's own check), two charts of one
id, series without a label to tell them apart, a pattern that fits no result, results that are
not numbers or not of one unit, a reference line of another unit, and a number about a GPU typed
into a title or a label (the chart's numbers come from the measurements, its words from you).
"""

from __future__ import annotations

from collections.abc import Iterator

from cudagloss.check.markdown_fields import field_position
from cudagloss.check.typed_numbers import allowed, find, message
from cudagloss.errors import Diagnostic
from cudagloss.model.chart_spec import Chart
from cudagloss.model.charts import ChartError, resolve_chart
from cudagloss.model.corpus import Facts, LoadedTerm
from cudagloss.model.directives import scan
from cudagloss.model.measurements import MeasurementSet

GUIDE = "AUTHORING.md, 'Chart a sweep'"


def at(t: LoadedTerm, where: str, text: str, hint: str) -> Diagnostic:
    return Diagnostic(t.path, *field_position(t, where, 1, 1), f"{where}: {text}", hint)


def _texts(chart: Chart, where: str) -> Iterator[tuple[str, str]]:
    yield f"{where}.title", chart.title
    yield f"{where}.x", chart.x
    yield f"{where}.y", chart.y
    yield from ((f"{where}.series[{i}].label", s.label) for i, s in enumerate(chart.series))
    yield from ((f"{where}.lines[{i}].label", line.label) for i, line in enumerate(chart.lines))


def chart_diagnostics(t: LoadedTerm, measurements: MeasurementSet | None, facts: Facts) -> Iterator[Diagnostic]:
    """Every mistake in t's charts, at the line and column of the field at fault."""
    shown = {d.args[0] for d in scan(t.term.body)[0] if d.name == "chart"}
    seen: dict[str, int] = {}
    for i, chart in enumerate(t.term.charts):
        where = f"charts[{i}]"
        if (first := seen.setdefault(chart.id, i)) != i:
            yield at(t, f"{where}.id", f"'{chart.id}' is also the id of charts[{first}]", "give each chart its own id")
        if chart.id not in shown:
            yield at(
                t,
                where,
                f"the body never shows chart '{chart.id}'",
                f'write {{{{ chart("{chart.id}") }}}} on a line of its own where it belongs, or remove it',
            )
        for field, text in _texts(chart, where):
            if not text.strip() and not field.endswith("label"):
                yield at(t, field, "is empty", f"say it in words ({GUIDE})")
            for found in find(text):
                if allowed(found, t.slug, facts.entries) is None:
                    yield at(t, field, message(field, found).partition(": ")[2], "the chart draws the numbers")
        if len(chart.series) > 1:
            for j, s in enumerate(chart.series):
                if not s.label.strip():
                    yield at(t, f"{where}.series[{j}]", "needs a label", "name each line of the legend")
        if not chart.series:
            yield at(t, f"{where}.series", "is empty", f"name the results to draw ({GUIDE})")
            continue
        try:
            resolve_chart(t.term, measurements, chart)
        except ChartError as exc:
            field = f"{where}.{exc.where}" if exc.where else where
            yield at(t, field, exc.message, exc.hint)
