"""A chart as inline SVG: our own small writer, not a plotting library.

Why our own: a page's chart must be inline SVG made of the handful of elements the page
sanitiser allows (svg, g, path, circle, rect, text, title, a), coloured by CSS classes so it
follows the reader's palette (light or dark), with every point a link to its row, and the same
bytes on every run and under every builder. matplotlib's SVG backend writes inline styles, not
classes, and brings numpy; pygal embeds JavaScript; neither links each point to a row of our
page. What is left, scales and ticks (site.chart_axes) and about a hundred lines of drawing, is
ours: a chart is 3 to 17 KB of markup (the memory-latency sweep, 53 points, is the largest).

Every string from measurement JSON or term YAML is HTML-escaped here; numbers are rounded to a
tenth of a unit so the bytes do not depend on float noise.
"""

from __future__ import annotations

import html
import itertools
from collections.abc import Callable

from cudagloss.model.charts import ChartData, Point, RefLine
from cudagloss.site.chart_axes import Axis, categories, make_axis, number, size

WIDTH = 380
"""User units across: at a phone's 390 px the chart is drawn at about its own size, so its
11-unit text reads at about 11 px."""
LEFT, RIGHT, PLOT_HEIGHT, ROW = 50, 14, 170, 15
LABEL_MAX = 52
COLOURS = 6
MARKERS = ("circle", "square", "triangle", "diamond")

Href = Callable[[str, str], str]
"""(node, result) -> the address of that result's row on its measurement page."""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _n(value: float) -> str:
    return f"{value:.1f}".removesuffix(".0")


def _marker(kind: str, x: float, y: float) -> str:
    if kind == "circle":
        return f'<circle cx="{_n(x)}" cy="{_n(y)}" r="3.5"/>'
    if kind == "square":
        return f'<rect x="{_n(x - 3)}" y="{_n(y - 3)}" width="6" height="6"/>'
    if kind == "triangle":
        return f'<path d="M{_n(x)} {_n(y - 4)}L{_n(x + 4)} {_n(y + 3)}L{_n(x - 4)} {_n(y + 3)}Z"/>'
    return f'<path d="M{_n(x)} {_n(y - 4)}L{_n(x + 4)} {_n(y)}L{_n(x)} {_n(y + 4)}L{_n(x - 4)} {_n(y)}Z"/>'


def _short(label: str) -> str:
    return label if len(label) <= LABEL_MAX else label[: LABEL_MAX - 1] + "…"


def axes(chart: ChartData) -> tuple[Axis, Axis]:
    """The x and y axes: every point's value and every reference line of that axis in range."""
    xs = [float(p.x) for s in chart.series for p in s.points if p.y is not None]
    xs += [line.value for line in chart.lines if line.axis == "x"]
    ys = [v for s in chart.series for p in s.points for v in (p.low, p.high) if v is not None]
    ys += [line.value for line in chart.lines if line.axis == "y"]
    if chart.x_kind == "name":
        names = {p.x: p.x_text for s in chart.series for p in s.points}
        return categories([names[x] for x in sorted(names)]), make_axis([0.0, *ys], binary=False, zero=True, log=False)
    x_axis = make_axis(xs, binary=True, zero=False, label=size if chart.x_kind == "size" else number)
    return x_axis, make_axis(ys, binary=False, zero=True)


def svg(chart: ChartData, href: Href) -> str:
    """The chart as one line of SVG markup (a raw HTML block must have no blank line)."""
    x_axis, y_axis = axes(chart)
    lines = [line for line in chart.lines if (x_axis if line.axis == "x" else y_axis).shows(line.value)]
    top = 22 + ROW * (len(chart.series) + len(lines)) + 6
    bottom, right = top + PLOT_HEIGHT, WIDTH - RIGHT

    def px(x: float) -> float:
        return LEFT + x_axis.fraction(x) * (right - LEFT)

    def py(y: float) -> float:
        return bottom - y_axis.fraction(y) * PLOT_HEIGHT

    unit = f" ({chart.y_unit}{', log scale' if y_axis.log else ''})" if chart.y_unit else ""
    out = [
        f'<svg class="cg-chart-svg" viewBox="0 0 {WIDTH} {bottom + 38}" role="group" font-size="11">',
        f"<title>{_e(chart.title)}</title>",
        f'<text class="cg-axis-title" x="{LEFT}" y="12">{_e(chart.y_label + unit)}</text>',
        *_legend(chart, lines, href),
        '<g class="cg-grid">',
    ]
    for tick, label in zip(y_axis.ticks, y_axis.labels, strict=True):
        out.append(f'<path d="M{LEFT} {_n(py(tick))}H{right}"/>')
        out.append(f'<text x="{LEFT - 4}" y="{_n(py(tick) + 4)}" text-anchor="end">{_e(label)}</text>')
    for tick, label in _spaced(x_axis, px):
        anchor = "end" if px(tick) + _width(label) / 2 > WIDTH else "middle"
        out.append(f'<path d="M{_n(px(tick))} {bottom if chart.x_kind == "name" else top}V{bottom + 4}"/>')
        out.append(f'<text x="{_n(px(tick))}" y="{bottom + 16}" text-anchor="{anchor}">{_e(label)}</text>')
    out.append(f'<path class="cg-frame" d="M{LEFT} {top}V{bottom}H{right}"/></g>')
    for line in lines:
        d = f"M{_n(px(line.value))} {top}V{bottom}" if line.axis == "x" else f"M{LEFT} {_n(py(line.value))}H{right}"
        out.append(f'<g class="cg-ref"><path d="{d}"><title>{_e(line.label)}: {_e(line.text)}</title></path></g>')
    bars = chart.x_kind == "name"
    width = (right - LEFT) / max(len(x_axis.ticks), 1) * 0.7 / len(chart.series)
    for i, s in enumerate(chart.series):
        out.append(f'<g class="cg-series cg-s{i % COLOURS}">')
        out.append("" if bars else _polyline(s.points, px, py, (x_axis, y_axis)))
        drawn = [p for p in s.points if p.y is not None and x_axis.shows(p.x) and y_axis.shows(p.y)]
        for p in drawn:
            if (
                p.low is not None
                and p.high is not None
                and p.low < p.high
                and y_axis.shows(p.low)
                and y_axis.shows(p.high)
            ):
                middle = px(p.x) - width * (len(chart.series) / 2 - i - 0.5) if bars else px(p.x)
                out.append(f'<path class="cg-spread" d="M{_n(middle)} {_n(py(p.low))}V{_n(py(p.high))}"/>')
        for p in drawn:
            if p.y is not None:
                title = f"{s.label}, {p.x_text}: {p.text}" + (f" ({', '.join(p.nodes)})" if p.nodes else "")
                mark = _marker(MARKERS[i % len(MARKERS)], px(p.x), py(p.y))
                if bars:  # side by side around the category's middle, from zero up
                    x = px(p.x) - width * len(chart.series) / 2 + width * i
                    top_y, zero_y = sorted((py(p.y), py(0.0)))
                    mark = f'<rect x="{_n(x)}" y="{_n(top_y)}" width="{_n(width)}" height="{_n(zero_y - top_y)}"/>'

                out.append(f'<a href="{_e(href(p.node, p.name))}">{mark}<title>{_e(title)}</title></a>')
        out.append("</g>")
    x_title = chart.x_label + (" (log scale)" if x_axis.log else "")
    out.append(
        f'<text class="cg-axis-title" x="{_n((LEFT + right) / 2)}" y="{bottom + 32}" '
        f'text-anchor="middle">{_e(x_title)}</text></svg>'
    )
    return "".join(out)


def _width(label: str) -> float:
    """About how wide an 11-unit label is (digits and letters average 6.2 units)."""
    return 6.2 * len(label)


def _spaced(axis: Axis, px: Callable[[float], float]) -> list[tuple[float, str]]:
    """Every k-th tick of the x axis, k the smallest at which no two labels touch."""
    ticks = list(zip(axis.ticks, axis.labels, strict=True))
    for k in range(1, len(ticks) + 1):
        kept = ticks[::k]
        pairs = itertools.pairwise(kept)
        if all(px(b) - px(a) >= max(_width(la), _width(lb)) + 8 for (a, la), (b, lb) in pairs):
            return kept
    return ticks[:1]


def _legend(chart: ChartData, lines: list[RefLine], href: Href) -> list[str]:
    """One row per series (its colour, marker and label), then one per reference line (dashed,
    its label and value, linked to its row): labels never sit on the data."""
    out = ['<g class="cg-legend">']
    for i, s in enumerate(chart.series):
        y = 22 + ROW * i
        if chart.x_kind == "name":  # a swatch of the bar's colour
            out.append(f'<g class="cg-s{i % COLOURS}"><rect x="{LEFT + 4}" y="{y - 5}" width="16" height="10"/></g>')
        else:
            out.append(f'<g class="cg-s{i % COLOURS}"><path class="cg-line" d="M{LEFT} {y}H{LEFT + 24}"/>')
            out.append(_marker(MARKERS[i % len(MARKERS)], LEFT + 12, y) + "</g>")
        out.append(f'<text x="{LEFT + 32}" y="{y + 4}">{_e(_short(s.label))}</text>')
    for i, line in enumerate(lines, start=len(chart.series)):
        y = 22 + ROW * i
        label = _e(_short(f"{line.label}: {line.text}"))
        out.append(f'<g class="cg-ref"><path d="M{LEFT} {y}H{LEFT + 24}"/>')
        out.append(
            f'<a href="{_e(href(line.node, line.name))}"><text x="{LEFT + 32}" y="{y + 4}">{label}</text></a></g>'
        )
    out.append("</g>")
    return out


def _polyline(
    points: tuple[Point, ...], px: Callable[[float], float], py: Callable[[float], float], box: tuple[Axis, Axis]
) -> str:
    """The series' line, broken where a point was not measured (or cannot be placed)."""
    d, pen = [], "M"
    for p in points:
        if p.y is None or not box[0].shows(p.x) or not box[1].shows(p.y):
            pen = "M"
            continue
        d.append(f"{pen}{_n(px(p.x))} {_n(py(p.y))}")
        pen = "L"
    return f'<path class="cg-line" d="{"".join(d)}"/>' if d else ""
