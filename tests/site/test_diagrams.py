"""Diagrams from diagrams/ (issue 30, part 2): a hostile SVG file loses everything that could run,
fetch, style or embed on its way into a page, and `make check` names each such thing at its line
and column in the file; measured labels are filled from the JSON; a dark variant is drawn for
the dark palette; the term file's own mistakes are reported at their fields."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chartdata import H200, node_file, write_fleet
from cudagloss.errors import GlossaryError
from cudagloss.load.corpus import load_corpus
from cudagloss.model.chart_spec import Diagram
from cudagloss.model.measurements import CitationError
from cudagloss.model.term import MeasurementCitation, Term
from cudagloss.site.diagrams import diagram_view
from cudagloss.text.svg import problems

GOOD = """<?xml version="1.0" encoding="UTF-8"?>
<svg viewBox="0 0 100 40" font-size="12">
  <!-- a comment -->
  <g class="cg-d-text" fill="#1f2328"><text x="4" y="20">L1 hit: {{ measured("sweep", "cycles_8kib") }}</text></g>
  <rect class="cg-d-box" x="1" y="1" width="98" height="38" rx="4" fill="#eef2f7"/>
</svg>
"""

HOSTILE = {
    "script": ('<svg viewBox="0 0 1 1"><script>alert(1)</script></svg>', "<script> is not allowed", "alert"),
    "onload": ('<svg viewBox="0 0 1 1" onload="alert(1)"><rect onclick="alert(2)"/></svg>', "onload", "alert"),
    "xlink javascript": (
        '<svg viewBox="0 0 1 1"><a xlink:href="javascript:alert(1)"><text>x</text></a></svg>',
        "<a> is not allowed",
        "javascript",
    ),
    "external use": ('<svg viewBox="0 0 1 1"><use href="https://evil.example/x.svg#a"/></svg>', "<use>", "evil"),
    "css url()": (
        '<svg viewBox="0 0 1 1"><style>rect{fill:url(https://evil.example/a)}</style>'
        '<rect style="fill:url(https://evil.example/b)" fill="url(https://evil.example/c)"/></svg>',
        "names something to fetch",
        "evil",
    ),
    "foreignObject": (
        '<svg viewBox="0 0 1 1"><foreignObject><div><img src="x" onerror="alert(1)"></div></foreignObject></svg>',
        "<foreignobject> is not allowed",
        "onerror",
    ),
    "entity expansion": (
        '<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
        '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><svg viewBox="0 0 1 1"><text>&c;&c;&c;&c;</text></svg>',
        "<!DOCTYPE> is not allowed",
        "aaaaaaaaaa",
    ),
    "image": ('<svg viewBox="0 0 1 1"><image href="https://evil.example/p.png"/></svg>', "<image>", "evil"),
    "animate": (
        '<svg viewBox="0 0 1 1"><a><animate attributeName="href" to="javascript:alert(1)"/></a></svg>',
        "<animate> is not allowed",
        "javascript",
    ),
}


def _term(*diagrams: Diagram) -> Term:
    body = "\n\n".join(f'{{{{ diagram("{d.id}") }}}}' for d in diagrams)
    return Term(
        name="Sweep",
        title="What is a sweep?",
        definition="A fixture.",
        section="s",
        body=body,
        measurements=[MeasurementCitation("sweep")],
        diagrams=list(diagrams),
    )


def _draw(tmp_path: Path, text: str, dark: str = "") -> str:
    (tmp_path / "diagrams").mkdir(exist_ok=True)
    (tmp_path / "diagrams" / "d.svg").write_text(text, encoding="utf-8")
    if dark:
        (tmp_path / "diagrams" / "d.dark.svg").write_text(dark, encoding="utf-8")
    measurements = write_fleet(tmp_path / "measurements", [node_file("h200-a", H200)])
    diagram = Diagram("d", "diagrams/d.svg", "What it shows.", "A caption.", "diagrams/d.dark.svg" if dark else "")
    return diagram_view(tmp_path, _term(diagram), measurements, diagram, _row).page


def _row(experiment: str, node: str, name: str) -> str:
    return f"../measurements/{experiment}.md#{node}-{name}"


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_diagram_is_named_by_the_check_and_disarmed_on_the_page(tmp_path: Path, name: str) -> None:
    text, reported, gone = HOSTILE[name]
    found = problems(text)
    assert any(reported in message for _, _, message in found), found
    assert all(line == 1 and col >= 1 for line, col, _ in found)
    page = _draw(tmp_path, text)
    for needle in ("<script", "onload", "onclick", "onerror", "javascript", "<use", "url(", "<image", "<style"):
        assert needle not in page.lower(), (needle, page)
    assert gone not in page
    assert len(page) < 2_000  # nothing expanded


def test_a_good_diagram_is_kept_as_drawn_with_its_label_measured(tmp_path: Path) -> None:
    assert problems(GOOD) == []
    page = _draw(tmp_path, GOOD)
    opening = '<figure class="cg-diagram" id="diagram-d" data-search-exclude>'
    assert page.startswith(opening + '<svg viewBox="0 0 100 40" font-size="12">')
    assert "<title>What it shows.</title>" in page and "<figcaption>A caption.</figcaption>" in page
    assert '<a href="#diagram-d-0" rel="noopener noreferrer">30 cycles</a>' in page
    figure, _, values = page.partition("</figure>")
    assert values == (
        '\n\n??? note "The 1 measured value in this diagram"\n\n'
        '    - <span id="diagram-d-0"></span>cycles_8kib (fixture): '
        "[30 cycles](../measurements/sweep.md#h200-a-cycles_8kib)"
    )
    assert 'rx="4"' in page and 'class="cg-d-box"' in page and "comment" not in page and "<?xml" not in page
    assert "\n" not in figure  # one raw HTML block


def test_a_dark_variant_is_drawn_beside_the_light_one(tmp_path: Path) -> None:
    page = _draw(tmp_path, GOOD, GOOD.replace("#eef2f7", "#262a33"))
    light, _, dark = page.partition('<div class="cg-diagram-dark">')
    assert '<div class="cg-diagram-light">' in light and "#eef2f7" in light and "#262a33" in dark


def test_a_label_the_term_cannot_cite_stops_the_page(tmp_path: Path) -> None:
    with pytest.raises(CitationError, match="no result 'cycles_9kib'"):
        _draw(tmp_path, GOOD.replace("cycles_8kib", "cycles_9kib"))


SECTIONS = "sections:\n  - slug: widgets\n    title: Widgets\n"
TERM = """\
# yaml-language-server: $schema=../schema/term.schema.json
name: Sweep
title: What is a sweep?
definition: A fixture.
section: widgets
body: |
  {{ diagram("d") }} {{ diagram("e") }}
measurements:
  - experiment: sweep
diagrams:
  - id: d
    file: diagrams/d.svg
    alt: What it shows.
  - id: e
    file: diagrams/e.svg
    alt: " "
  - id: f
    file: ../secret.svg
    alt: x
  - id: d
    file: diagrams/d.svg
    dark: diagrams/missing.dark.svg
    alt: x
"""
BAD = """<svg viewBox="0 0 100 40">
  <text x="1" y="2">{{ measured("sweep", "cycles_9kib") }}; the GPU has 132 SMs</text>
  <rect onclick="alert(1)" id="x"/>
</svg>
"""


def test_mistakes_in_the_term_and_in_the_file_are_reported_where_they_are(tmp_path: Path) -> None:
    (tmp_path / "terms").mkdir()
    (tmp_path / "terms" / "_sections.yaml").write_text(SECTIONS, encoding="utf-8")
    (tmp_path / "terms" / "sweep.yaml").write_text(TERM, encoding="utf-8")
    drawings = tmp_path / "terms" / "diagrams"
    drawings.mkdir()
    (drawings / "d.svg").write_text(GOOD, encoding="utf-8")
    (drawings / "e.svg").write_text(BAD, encoding="utf-8")
    os.symlink(drawings / "d.svg", drawings / "missing.dark.svg")
    measurements = write_fleet(tmp_path / "measurements", [node_file("h200-a", H200)])
    with pytest.raises(GlossaryError) as caught:
        load_corpus(tmp_path / "terms", tmp_path, measurements=measurements, cache=False)
    said = [d.format().split("\n")[0] for d in caught.value.diagnostics]
    expected = [
        "terms/diagrams/e.svg:2:21: measured('sweep', 'cycles_9kib'): experiment 'sweep' has no result 'cycles_9kib'",
        "terms/diagrams/e.svg:2:1: '132 SMs' is a number about a GPU typed by hand",
        "terms/diagrams/e.svg:3:3: <rect onclick> is not allowed in a diagram (used by",
        "terms/diagrams/e.svg:3:3: <rect id> is not allowed in a diagram (used by",
        "terms/sweep.yaml:16:10: diagrams[1].alt: is empty",
        "terms/sweep.yaml:17:5: diagrams[2]: the body never shows diagram 'f'",
        "terms/sweep.yaml:18:11: diagrams[2].file: '../secret.svg' is not a file under diagrams/",
        "terms/sweep.yaml:20:9: diagrams[3].id: 'd' is also the id of diagrams[0]",
        "terms/sweep.yaml:22:11: diagrams[3].dark: 'diagrams/missing.dark.svg' is a symbolic link",
    ]
    missing = [e for e in expected if not any(s.endswith(e) or e in s for s in said)]
    assert missing == [], "\n".join(said)
