"""Charts drawn from measurement JSON (issue 30): golden figures for each kind of x axis (a size
sweep with reference lines, a count sweep) on one node, three nodes of one model, two GPU models,
and nodes that lack values; then the rules the golden files show, said as tests, and what
hostile data and odd values do. UPDATE_GOLDEN=1 rewrites the golden files; read the diff."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pytest

from chartdata import CHARTS, FLEETS, H200, node_file, term, write_fleet
from conftest import check_golden
from cudagloss.model.chart_spec import ChartSeries, match_results
from cudagloss.model.charts import ChartData, ChartError, Point, Series, resolve_chart
from cudagloss.site.chart_axes import MAX_TICKS, make_axis
from cudagloss.site.chart_svg import svg
from cudagloss.site.charts import chart_view, place, summary
from cudagloss.site.escape import clean_html

PAGE = "terms/sweep.md"


def _href(node: str, name: str) -> str:
    return f"../measurements/sweep.md#{node}-{name}"


def _page(tmp_path: Path, fleet: str, kind: str) -> str:
    measurements = write_fleet(tmp_path / "measurements", FLEETS[fleet])
    chart = CHARTS[kind]
    return chart_view(resolve_chart(term(chart), measurements, chart), _href).page


@pytest.mark.parametrize("kind", sorted(CHARTS))
@pytest.mark.parametrize("fleet", sorted(FLEETS))
def test_a_chart_reads_the_same_way_whatever_the_fleet(tmp_path: Path, fleet: str, kind: str) -> None:
    check_golden(f"chart-{kind}-{fleet}.md", _page(tmp_path, fleet, kind) + "\n")


def test_each_gpu_model_is_one_series_and_nodes_of_one_model_are_never_mixed_with_another(tmp_path: Path) -> None:
    measurements = write_fleet(tmp_path / "m", FLEETS["two-models"])
    chart = CHARTS["count"]
    data = resolve_chart(term(chart), measurements, chart)
    assert [s.label for s in data.series] == ["H100", "H200 (2 cards)"]  # models in card order
    h100 = data.series[0].points[0]
    assert h100.nodes == ("h100-a",) and h100.y == pytest.approx(0.44 * 1.3, rel=1e-3)
    per_node = resolve_chart(term(chart), measurements, replace(chart, per="node"))
    assert [s.label for s in per_node.series] == [
        "card h100-a (H100)",
        "card h200-a (H200)",
        "card h200-b (H200)",
    ]


def test_the_spread_of_a_models_nodes_is_drawn_and_its_median_is_the_point(tmp_path: Path) -> None:
    measurements = write_fleet(tmp_path / "m", FLEETS["many-nodes"])
    chart = CHARTS["size"]
    point = resolve_chart(term(chart), measurements, chart).series[0].points[0]
    assert (point.low, point.y, point.high) == (28.5, 30.0, 33.0)
    assert point.text == "28.5–33 cycles on 3 H200s"
    assert svg(resolve_chart(term(chart), measurements, chart), _href).count('class="cg-spread"') == 6


def test_a_value_no_node_measured_breaks_the_line_and_one_node_lacking_it_is_said(tmp_path: Path) -> None:
    measurements = write_fleet(tmp_path / "m", FLEETS["missing-value"])
    chart = CHARTS["size"]
    data = resolve_chart(term(chart), measurements, chart)
    by_name = {p.name: p for p in data.series[0].points}
    assert by_name["cycles_512kib"].y is None and by_name["cycles_32mib"].nodes == ("h200-a",)
    assert "not measured on 1 of 2" in by_name["cycles_32mib"].text
    line = re.findall(r'<path class="cg-line" d="([^"]*)"', svg(data, _href))[-1]  # the series', not the legend's
    assert line.count("M") == 2  # two stretches, no point invented between


def test_every_point_links_to_its_row_of_the_table_and_the_row_to_the_measurement(tmp_path: Path) -> None:
    page = _page(tmp_path, "two-models", "count")
    figure, _, table = page.partition("</figure>")
    points = re.findall(r'<a href="([^"]+)"><(?:circle|rect|path)', figure)
    assert len(points) == 12 and set(points) == {f"#chart-paths-{k}" for k in range(6)}
    for k in range(6):
        assert f'<span id="chart-paths-{k}"></span>' in table
    assert table.count("](../measurements/sweep.md#") == 12
    assert "](../measurements/sweep.md#h100-a-ns_per_element_32_paths" in table


def test_the_text_alternative_says_what_the_chart_shows(tmp_path: Path) -> None:
    measurements = write_fleet(tmp_path / "m", FLEETS["one-node"])
    chart = CHARTS["size"]
    said = summary(resolve_chart(term(chart), measurements, chart))
    assert said.startswith("A line chart of latency (cycles) against footprint, both on log scales.")
    assert "H200: 30 cycles at 8 KiB to 960 cycles at 256 MiB" in said
    assert "Reference line: L2 size, 60 MiB." in said


def test_the_page_gets_the_figure_and_the_export_only_the_table(tmp_path: Path) -> None:
    measurements = write_fleet(tmp_path / "m", FLEETS["one-node"])
    chart = CHARTS["count"]
    view = chart_view(resolve_chart(term(chart), measurements, chart), _href)
    body = "Before.\n\n\x1a0\x1a\n\nAfter, \\{{ literal."
    assert "<svg" in place(body, (view,), page=True) and "<svg" not in place(body, (view,), page=False)
    assert "<span" not in place(body, (view,), page=False)
    assert place("no chart", (view,), page=True) == "no chart"


def _shape(html: str) -> list[tuple[str, tuple[str, ...]]]:
    """Each element's name and attribute names, in order ('rel', which the sanitiser adds to links, aside)."""
    found: list[tuple[str, tuple[str, ...]]] = []

    class Reader(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found.append((tag, tuple(sorted(a for a, _ in attrs if a != "rel"))))

    Reader().feed(html)
    return found


def test_the_sanitiser_keeps_every_element_and_attribute_of_a_chart(tmp_path: Path) -> None:
    figure = _page(tmp_path, "two-models", "size").partition("</figure>")[0] + "</figure>"
    assert _shape(clean_html(figure)) == _shape(figure)


HOSTILE = '<script>alert(1)</script><img src=x onerror=alert(1)> & "q" ]](x)'


def test_hostile_gpu_names_and_labels_are_text_in_the_svg_and_the_table(tmp_path: Path) -> None:
    fleet = [node_file("h200-a", HOSTILE)]
    measurements = write_fleet(tmp_path / "m", fleet)
    chart = replace(CHARTS["size"], title=HOSTILE, x=HOSTILE, y=HOSTILE, series=[ChartSeries("cycles_{size}", "x")])
    page = chart_view(resolve_chart(term(chart), measurements, chart), _href).page
    assert "<script" not in page and "<img" not in page and "onerror=alert(1)>" not in page
    assert "&lt;script&gt;" in page
    figure = page.partition("</figure>")[0]
    assert clean_html(figure).count("&lt;script&gt;") == figure.count("&lt;script&gt;")


def _values(tmp_path: Path, values: list[object]) -> str:
    """The size chart of one node whose footprints measured values (the rest: not measured)."""
    record = node_file("h200-a", H200)
    sweep = [r for r in record["results"] if r["name"].startswith("cycles_")]
    for i, r in enumerate(sweep):
        r["value"], r["samples"] = (values[i] if i < len(values) else None), []
    chart = replace(CHARTS["size"], lines=[])
    measurements = write_fleet(tmp_path / "m", [record])
    return svg(resolve_chart(term(chart), measurements, chart), _href)


def _drawn(ys: list[float | None]) -> str:
    """svg() of one hand-made series: values no measurement file could hold (the loader refuses
    zero or negative durations, NaN and anything past 2^53), to show the writer stands them."""
    points = tuple(Point(1 << (10 + i), f"p{i}", f"r{i}", y, y, y, "shown", "n", ("n",)) for i, y in enumerate(ys))
    data = ChartData("c", "e", "t", "x", "size", "y", "cycles", (Series("s", points),), ())
    return svg(data, _href)


@pytest.mark.parametrize(
    "ys",
    [
        [0.0, 1.0, 1000.0, -5.0],  # zero and below: a linear axis
        [7.0],  # one point
        [1e-300, 1e299],  # hundreds of decades
        [-1e308, 1e308, math.nan, math.inf, -math.inf],
        [3.0, 3.0, 3.0, None, 3.0],  # no span, a gap
        [None, math.nan],  # nothing to place
        [5e-324],  # subnormal: a range of it underflows to zero (issue 39)
        [5e-324, 5e-324, 0.0, -5e-324],
        [5e-324, 1e-310, 2.2e-308],
    ],
)
def test_odd_values_give_a_finite_chart_with_few_ticks(ys: list[float | None]) -> None:
    drawn = _drawn(ys)
    assert "nan" not in drawn.lower() and "inf" not in drawn.lower()
    assert len(re.findall(r'text-anchor="end">', drawn)) <= MAX_TICKS + 1
    assert drawn.count("<circle") == 1 + sum(y is not None and math.isfinite(y) and abs(y) <= 1e300 for y in ys)


@pytest.mark.parametrize(
    ("values", "says"),
    [([None] * 6, "no card measured a value it would draw"), (["fast", 2], "not a number to draw")],
)
def test_values_that_cannot_be_drawn_are_an_error_not_a_chart(tmp_path: Path, values: list[object], says: str) -> None:
    with pytest.raises(ChartError, match=says):
        _values(tmp_path, values)


def test_values_at_the_loaders_limits_are_drawn(tmp_path: Path) -> None:
    drawn = _values(tmp_path, [1e-300, 2.0**53, 1.0])
    assert drawn.count("<circle") == 4  # the legend's and three points


def test_a_subnormal_measured_value_is_drawn_at_zero_not_a_traceback(tmp_path: Path) -> None:
    drawn = _values(tmp_path, [5e-324, 5e-324, 5e-324])
    assert drawn.count("<circle") == 4 and "nan" not in drawn.lower()


def test_a_log_axis_only_where_the_values_span_a_decade_above_zero() -> None:
    assert make_axis([8192.0, 1 << 30], binary=True, zero=False).log
    assert not make_axis([0.0, 5.0, 500.0], binary=False, zero=True).log
    assert not make_axis([20.0, 150.0], binary=False, zero=True).log
    axis = make_axis([1e-300, 1e300], binary=False, zero=True)
    assert axis.log and 1 <= len(axis.ticks) <= MAX_TICKS and all(math.isfinite(t) for t in axis.ticks)


def test_a_pattern_reads_its_token_strictly() -> None:
    names = ["stride_1", "stride_032", "stride_32", "stride_32_clock", "float4_stride_4", "x_8kib", "x_8.5kib"]
    assert [m.name for m in match_results("stride_{count}", names)] == ["stride_1", "stride_32"]
    assert [(m.name, m.x) for m in match_results("x_{size}", names)] == [("x_8kib", 8192)]
    assert match_results("stride_32", names) == [] and match_results("{size}{count}", names) == []


def test_a_result_that_is_not_a_number_is_named_with_its_node(tmp_path: Path) -> None:
    record = node_file("h200-a", H200)
    record["results"][0]["value"], record["results"][0]["samples"] = True, []
    measurements = write_fleet(tmp_path / "m", [record])
    chart = CHARTS["size"]
    with pytest.raises(ChartError, match="'cycles_8kib' on node 'h200-a' is yes cycles, not a number") as caught:
        resolve_chart(term(chart), measurements, chart)
    assert caught.value.where == "series[0].results"
