"""What `{{ chart("id") }}` becomes: a figure (the SVG, its caption and a text alternative that
says what it shows) and the data table of every point, each value a link to its row.

A body's directives are expanded before its raw HTML is neutralised and its terms auto-linked,
which would escape the SVG. So the handler leaves a mark in the text, a control character no
YAML file can hold around the chart's number, and the page puts the figure there afterwards
(`place`): the page gets the figure and the table, the exported Markdown only the table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cudagloss.model.charts import ChartData, Point, Series
from cudagloss.site import escape
from cudagloss.site.chart_svg import Href, axes, svg

MARK = "\x1a"
"""SUB: YAML's character set leaves it out, so no term's text can forge a mark."""
_PLACE = re.compile(f"{MARK}([0-9]+){MARK}")


@dataclass(frozen=True)
class ChartView:
    page: str
    """The figure and, under it, the data table in a collapsed block: for the site."""
    text: str
    """The caption, text alternative and data table as plain Markdown: for the exports."""


def mark(index: int) -> str:
    """What the handler leaves in the body for its index-th chart: a block of its own."""
    return f"\n\n{MARK}{index}{MARK}\n\n"


def place(markdown: str, charts: tuple[ChartView, ...], *, page: bool) -> str:
    """markdown with each mark replaced by its chart, as the page or the export shows it."""
    if MARK not in markdown:
        return markdown
    return _PLACE.sub(lambda m: charts[int(m.group(1))].page if page else charts[int(m.group(1))].text, markdown)


def row_id(chart_id: str, key: str) -> str:
    """The id of a row of a chart's data table (or of a diagram's list of values): the chart's
    points link to it. A same-page anchor, because raw HTML is where the builders differ: MkDocs
    leaves its relative links alone, Zensical rebases them; an anchor both leave as it is."""
    return str(escape.ident(f"{chart_id}-{key}"))


def summary(chart: ChartData) -> str:
    """The text alternative: what is drawn against what, and where each series starts, ends,
    is lowest and highest, in the words the rest of the site uses for those values."""
    x_axis, y_axis = axes(chart)
    scales = {(True, True): ", both on log scales", (True, False): ", on a log scale", (False, True): ""}
    scales[(False, True)] = ", the values on a log scale"
    scale = scales.get((x_axis.log, y_axis.log), "")
    unit = f" ({chart.y_unit})" if chart.y_unit else ""
    kind = "bar chart" if chart.x_kind == "name" else "line chart"
    parts = [f"A {kind} of {chart.y_label}{unit} against {chart.x_label}{scale}."]
    for s in chart.series:
        drawn = [p for p in s.points if p.y is not None]
        if not drawn:
            parts.append(f"{s.label}: not measured.")
            continue
        if chart.x_kind == "name":
            parts.append(f"{s.label}: " + ", ".join(f"{p.x_text} {p.text}" for p in drawn) + ".")
            continue
        low = min(drawn, key=lambda p: p.y or 0.0)
        high = max(drawn, key=lambda p: p.y or 0.0)
        first, last = drawn[0], drawn[-1]
        said = f"{s.label}: {first.text} at {first.x_text}"
        said += f" to {last.text} at {last.x_text}" if last is not first else ""
        if len(drawn) > 2:
            said += f"; lowest {low.text} at {low.x_text}, highest {high.text} at {high.x_text}"
        parts.append(said + ".")
    parts += [f"Reference line: {line.label}, {line.text}." for line in chart.lines]
    return " ".join(parts)


def _cell(point: Point | None, series: Series, href: Href) -> str:
    if point is None:
        return "—"
    if point.y is None:
        return str(escape.text(point.text))
    title = f"{series.label}: {', '.join(point.nodes)}"
    return f'[{escape.text(point.text)}]({href(point.node, point.name)} "{escape.link_title(title)}")'


def table(chart: ChartData, href: Href) -> tuple[list[str], dict[str, str]]:
    """The data table's Markdown lines (one row per x, one column per series, each row's first
    cell holding its anchor) and the anchor of each result it shows."""
    xs = sorted({(p.x, p.x_text) for s in chart.series for p in s.points})
    by_x = [{p.x: p for p in s.points} for s in chart.series]
    base = f"chart-{chart.id}"
    lines = [
        "| " + " | ".join([str(escape.text(chart.x_label)), *(str(escape.text(s.label)) for s in chart.series)]) + " |",
        "|---" * (len(chart.series) + 1) + "|",
    ]
    anchors: dict[str, str] = {}
    for k, (x, x_text) in enumerate(xs):
        anchor = row_id(base, str(k))
        anchors.update((points[x].name, anchor) for points in by_x if x in points)
        cells = [_cell(points.get(x), s, href) for s, points in zip(chart.series, by_x, strict=True)]
        lines.append("| " + " | ".join([f'<span id="{anchor}"></span>{escape.text(x_text)}', *cells]) + " |")
    for i, line in enumerate(chart.lines):
        anchors[line.name] = anchor = row_id(base, f"line-{i}")
        value = f"[{escape.text(line.text)}]({href(line.node, line.name)})"
        lines += ["", f'<span id="{anchor}"></span>{escape.text(line.label)} (reference line): {value}.']
    return lines, anchors


def chart_view(chart: ChartData, markdown_href: Href) -> ChartView:
    """The chart for one page: markdown_href links a table cell to its row on the measurement
    page (a Markdown link, which each builder rewrites to the page's address); each point of the
    SVG links to its row of the table."""
    rows, anchors = table(chart, markdown_href)
    caption = escape.html_text(chart.title)
    alt = escape.html_text(summary(chart))
    drawn = svg(chart, lambda _node, name: f"#{anchors[name]}")
    figure = (
        f'<figure class="cg-chart" id="chart-{escape.ident(chart.id)}" data-search-exclude>{drawn}'
        f"<figcaption><strong>{caption}</strong> {alt}</figcaption></figure>"
    )
    count = sum(p.y is not None for s in chart.series for p in s.points)
    block = [f'??? note "The {count} values in this chart"', "", *(f"    {r}" if r else "" for r in rows)]
    page = "\n".join([figure, "", *block])
    plain = [re.sub(r'<span id="[^"]*"></span>', "", r) for r in rows]
    text = "\n".join([f"Chart: {escape.text(chart.title)} {escape.text(summary(chart))}", "", *plain])
    return ChartView(page, text)
