"""A term's chart resolved against the measurements: the series, points and reference lines
to draw, every number taken from the measurement files.

Nodes of one GPU model are one series (per: model): each point is the median of its nodes'
values, with their lowest and highest as its spread, and reads as cudagloss.model.display's
`agreed` words it elsewhere; GPU models are never mixed. With per: node each node is a series.
A point a node did not measure is left out of that node's line, never filled in.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, replace
from typing import Literal

from cudagloss.errors import did_you_mean
from cudagloss.model.chart_spec import Chart, Diagram, Matched, XKind, match_results, x_kind
from cudagloss.model.display import agreed_at, format_value, readable_size, short_gpu
from cudagloss.model.measurement import Result
from cudagloss.model.measurements import CitationError, ExperimentRecord, MeasurementSet, NodeRun, resolve
from cudagloss.model.term import Term

_SIZE_SCALE = {"bytes": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


class ChartError(CitationError):
    """A chart that cannot be drawn; where names the field of the chart at fault."""

    def __init__(self, message: str, hint: str, where: str = "") -> None:
        super().__init__(message, hint)
        self.where = where


@dataclass(frozen=True)
class Point:
    """One x of one series: the value each of its nodes measured there."""

    x: int
    x_text: str
    name: str
    """The result it is."""
    y: float | None
    """The median of its nodes' values; None where none of them measured it."""
    low: float | None
    high: float | None
    text: str
    """The value as the rest of the site words it ('32.1 cycles', '270–290 cycles on 2 H200s')."""
    node: str
    """The node whose row on the measurement page the point links to."""
    nodes: tuple[str, ...]


@dataclass(frozen=True)
class Series:
    label: str
    points: tuple[Point, ...]


@dataclass(frozen=True)
class RefLine:
    axis: Literal["x", "y"]
    """'y': across, at a y value; 'x': up, at an x value."""
    value: float
    label: str
    text: str
    name: str
    node: str


@dataclass(frozen=True)
class ChartData:
    id: str
    experiment: str
    title: str
    x_label: str
    x_kind: XKind
    y_label: str
    y_unit: str
    series: tuple[Series, ...]
    lines: tuple[RefLine, ...]


def find_chart(term: Term, chart_id: str) -> Chart:
    """The chart `chart(chart_id)` names; CitationError when the term has none of that id."""
    for chart in term.charts:
        if chart.id == chart_id:
            return chart
    ids = list(dict.fromkeys(c.id for c in term.charts))
    raise CitationError(
        f"chart('{chart_id}'): the term has no chart with id '{chart_id}'{did_you_mean(chart_id, ids)}",
        f"its charts are {', '.join(ids)}" if ids else "describe it under charts: (AUTHORING.md, 'Chart a sweep')",
    )


def find_diagram(term: Term, diagram_id: str) -> Diagram:
    """The diagram `diagram(diagram_id)` names; CitationError when the term has none of that id."""
    for diagram in term.diagrams:
        if diagram.id == diagram_id:
            return diagram
    ids = list(dict.fromkeys(d.id for d in term.diagrams))
    raise CitationError(
        f"diagram('{diagram_id}'): the term has no diagram with id '{diagram_id}'",
        f"its diagrams are {', '.join(ids)}" if ids else "describe it under diagrams: (AUTHORING.md, 'Draw a diagram')",
    )


def _number(run: NodeRun, result: Result | None, where: str) -> float | None:
    """A result's value as a number to draw; None where it was not measured (or is not finite)."""
    if result is None or result.value is None:
        return None
    if isinstance(result.value, bool) or not isinstance(result.value, int | float):
        raise ChartError(
            f"'{result.name}' on node '{run.node}' is {format_value(result)}, not a number to draw",
            "chart results that are numbers; show others with measured()",
            where,
        )
    try:
        y = float(result.value)
    except OverflowError:  # an integer past a double's range
        return None
    return y if math.isfinite(y) else None


def _x_text(kind: XKind, x: int, token: str) -> str:
    if kind == "name":
        return token
    if kind == "count":
        return f"{x:,}"
    size, unit = readable_size(x, "bytes", bytes_=True)
    return f"{size:,.0f} {unit}" if float(size).is_integer() else f"{size:,.1f} {unit}"


def _groups(record: ExperimentRecord, per: str) -> list[tuple[str, list[NodeRun]]]:
    """(label, nodes) of each series group: GPU models in the order first met, or nodes."""
    if per == "node":
        return [(f"card {run.node} ({short_gpu(run.gpu)})", [run]) for run in record.measured]
    models: dict[str, list[NodeRun]] = {}
    for run in record.measured:
        models.setdefault(run.gpu, []).append(run)
    return [(short_gpu(gpu) + (f" ({len(runs)} cards)" if len(runs) > 1 else ""), runs) for gpu, runs in models.items()]


def _point(kind: XKind, m: Matched, runs: list[NodeRun], per: str, where: str) -> Point:
    results = [(run, run.good.result(m.name) if run.good else None) for run in runs]
    numbers = [(run, y) for run, r in results if (y := _number(run, r, where)) is not None]
    ys = [y for _, y in numbers]
    text, at = agreed_at([r for _, r in results], runs[0].gpu) if per == "model" else (format_value(results[0][1]), 0)
    held = results[at][1]
    holder = results[at][0] if held is not None and held.value is not None else None
    return Point(
        m.x,
        _x_text(kind, m.x, m.token),
        m.name,
        statistics.median(ys) if ys else None,
        min(ys) if ys else None,
        max(ys) if ys else None,
        text,
        (holder or (numbers[0][0] if numbers else runs[0])).node,  # the row that holds the text shown
        tuple(run.node for run, _ in numbers),
    )


def _unit(record: ExperimentRecord, names: list[str], where: str) -> str:
    units = {r.unit for run in record.measured for n in names if (r := run.good and run.good.result(n)) and r.unit}
    if len(units) > 1:
        raise ChartError(
            f"its results are in different units ({', '.join(sorted(units))})",
            "a chart has one y axis: chart results of one unit, or draw a second chart",
            where,
        )
    return units.pop() if units else ""


def resolve_chart(term: Term, measurements: MeasurementSet | None, chart: Chart) -> ChartData:
    """The chart's data; ChartError (where: the field at fault) when it cannot be drawn."""
    call = f"chart('{chart.id}')"
    record = measurements.get(chart.experiment) if measurements else None
    if record is None or not record.measured or chart.experiment not in [c.experiment for c in term.measurements]:
        try:
            resolve(term, measurements, chart.experiment, "", call)
        except CitationError as exc:
            raise ChartError(exc.message, exc.hint, "experiment") from None
    assert record is not None
    names = record.result_names()
    kind: XKind | None = None
    matched: list[list[Matched]] = []
    for i, s in enumerate(chart.series):
        where = f"series[{i}].results"
        this = x_kind(s.results)
        found = match_results(s.results, names)
        if this is None or (kind is not None and this != kind):
            raise ChartError(
                f"'{s.results}' has no {{size}}, {{count}} or {{name}} where the x value is"
                if this is None
                else f"'{s.results}' reads {{{this}}}, another series reads {{{kind}}}",
                "write the result's name with {size} (8kib, 1gib), {count} (32) or {name} (bars) where it "
                "varies: 'cycles_{size}'; every series of a chart reads the same kind",
                where,
            )
        if not found:
            example = s.results.replace("{" + this + "}", {"size": "8kib", "count": "32", "name": "x"}[this])
            raise ChartError(
                f"'{s.results}' fits no result of '{chart.experiment}'{did_you_mean(example, names)}",
                f"its results are listed on its measurement page, or by `cudagloss values {chart.experiment}`",
                where,
            )
        if len({m.x for m in found}) < len(found):
            raise ChartError(f"'{s.results}' fits two results at one x", "name the sweep of one series", where)
        kind = this
        matched.append(found)
    assert kind is not None
    if kind == "name":  # one category per name, in the order first met, shared by every series
        order = {t: i for i, t in enumerate(dict.fromkeys(m.token for found in matched for m in found))}
        matched = [[replace(m, x=order[m.token]) for m in found] for found in matched]
    y_unit = _unit(record, [m.name for found in matched for m in found], "series")
    series = []
    groups = _groups(record, chart.per)
    for group, runs in groups:
        for i, (s, found) in enumerate(zip(chart.series, matched, strict=True)):
            where = f"series[{i}].results"
            label = group if len(chart.series) == 1 else s.label if len(groups) == 1 else f"{s.label}, {group}"
            series.append(Series(label, tuple(_point(kind, m, runs, chart.per, where) for m in found)))
    if all(p.y is None for s in series for p in s.points):
        raise ChartError("no card measured a value it would draw", "run the experiment on a GPU node", "series")
    lines = [ref for i in range(len(chart.lines)) for ref in _lines(record, chart, i, kind, y_unit, groups)]
    return ChartData(
        chart.id, chart.experiment, chart.title, chart.x, kind, chart.y, y_unit, tuple(series), tuple(lines)
    )


def _lines(
    record: ExperimentRecord, chart: Chart, i: int, kind: XKind, y_unit: str, groups: list[tuple[str, list[NodeRun]]]
) -> list[RefLine]:
    """Reference line i of chart: one where every series group measured it alike, else one per group."""
    spec, where = chart.lines[i], f"lines[{i}].result"
    names = record.result_names()
    if spec.result not in names:
        raise ChartError(
            f"'{spec.result}' is not a result of '{chart.experiment}'{did_you_mean(spec.result, names)}",
            f"`cudagloss values {chart.experiment}` lists them",
            where,
        )
    out: dict[float, RefLine] = {}
    for group, runs in groups:
        results = [(run, run.good.result(spec.result) if run.good else None) for run in runs]
        numbers = [(run, r, y) for run, r in results if (y := _number(run, r, where)) is not None]
        if not numbers:
            continue
        unit = numbers[0][1].unit if numbers[0][1] else ""
        if unit == y_unit:
            axis: Literal["x", "y"] = "y"
            scale = 1
        elif kind == "size" and unit in _SIZE_SCALE:
            axis, scale = "x", _SIZE_SCALE[unit]
        else:
            raise ChartError(
                f"'{spec.result}' is in {unit or 'no unit'}: a reference line is in the y axis's unit "
                f"({y_unit or 'none'}), or a size on a size axis",
                "choose a result of that unit",
                where,
            )
        value = statistics.median(y for _, _, y in numbers) * scale
        text, at = agreed_at([r for _, r in results], runs[0].gpu)
        label = spec.label if len(groups) == 1 else f"{spec.label}, {group}"
        out.setdefault(value, RefLine(axis, value, label, text, spec.result, results[at][0].node))
    if len(out) == 1 and len(groups) > 1:
        only = next(iter(out.values()))
        out = {only.value: RefLine(only.axis, only.value, spec.label, only.text, only.name, only.node)}
    return list(out.values())
