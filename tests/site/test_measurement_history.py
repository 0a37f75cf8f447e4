"""When each value was first measured and last confirmed, and a run whose environment drifted,
on the measurement page built by the real `mkdocs build --strict`.

tests/fixtures/history-measurements/warp-size holds a version 2 file (fixture-a: a re-run
after a driver update, one value confirmed since October, one measured anew; its driver
value is markup, which must stay text) and a version 1 file (fixture-b: no history)."""

from __future__ import annotations

import re

import pytest

from conftest import FIXTURES
from cudagloss.load.measurements import load_measurements
from cudagloss.site.measurement_views import node_view
from sitebuild import build, fixture_config

MEASUREMENTS = FIXTURES / "history-measurements"


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> str:
    tmp = tmp_path_factory.mktemp("history")
    run = build(fixture_config(tmp, FIXTURES / "good", MEASUREMENTS), tmp / "site")
    assert run.returncode == 0, run.stderr
    assert "WARNING" not in run.stderr
    return (tmp / "site" / "measurements" / "warp-size" / "index.html").read_text(encoding="utf-8")


def row(page: str, anchor: str) -> list[str]:
    """The cells of one result's row, as HTML."""
    found = re.search(rf'<tr id="{anchor}">(.*?)</tr>', page)
    assert found, anchor
    return re.findall(r"<td>(.*?)</td>", found.group(1))


@pytest.mark.builders
def test_the_results_table_says_when_each_value_was_first_measured_and_last_confirmed(page: str) -> None:
    header = "<th>Raw samples (same unit)</th><th>First measured</th><th>Last confirmed</th></tr></thead>"
    assert page.count(header) == 2
    assert row(page, "fixture-a-warp_size") == [
        '<a href="#fixture-a-warp_size" rel="noopener noreferrer"><code>warp_size</code></a>',
        "32 threads",
        "",  # how it was measured: a value read from the driver has no method
        "threads per warp",
        "",
        "2026-10-02",
        "2026-11-30",
    ]
    assert row(page, "fixture-a-query_median")[-2:] == ["2026-11-30", "2026-11-30"]
    # A version 1 file knows only the day of its own run: both columns show it.
    assert row(page, "fixture-b-warp_size")[-2:] == ["2026-11-30", "2026-11-30"]


@pytest.mark.builders
def test_a_drifted_run_says_what_changed_under_its_heading_as_text(page: str) -> None:
    a = page[page.index('id="example-gpu-a-card-fixture-a"') : page.index('id="example-gpu-b-card-fixture-b"')]
    admonition = a[a.index('<div class="admonition info">') : a.index("</div>")]
    assert a.index("admonition info") < a.index("Measured on 2026-11-30")
    assert '<p class="admonition-title">Environment changed since the previous run</p>' in admonition
    assert "<li>Driver: <code>580.159.04</code> → <code>&lt;b&gt;590.10&lt;/b&gt;</code></li>" in admonition
    assert "<li>NVRTC: <code>not recorded</code> → <code>13.1</code></li>" in admonition
    assert (
        "in the First measured column\nof the results: a day before 2026-11-30 is a value confirmed as it was."
        in admonition
    )
    assert "<b>590.10</b>" not in page, "a value from the file is never markup"
    b = page[page.index('id="example-gpu-b-card-fixture-b"') :]
    assert "admonition info" not in b, "a run without drift has no such note"


def test_node_views_carry_the_drift_for_term_pages() -> None:
    found, problems = load_measurements(MEASUREMENTS)
    assert problems == []
    record = found.get("warp-size")
    assert record is not None
    a, b = (node_view(run) for run in record.runs)
    assert a.drift == (("Driver", "580.159.04", "<b>590.10</b>"), ("NVRTC", "not recorded", "13.1"))
    assert b.drift == ()
