"""Rendering: golden Markdown for a fixture term, and the rules pages must keep."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import FIXTURES, ROOT, check_golden
from cudagloss.load.corpus import load_corpus
from cudagloss.load.measurements import load_measurements
from cudagloss.model.project import Project
from cudagloss.site.renderer import Renderer


def renderer(in_root: Path, **kwargs: object) -> Renderer:
    measurements, problems = load_measurements(FIXTURES.relative_to(in_root) / "good-measurements", in_root)
    assert problems == []
    corpus = load_corpus(FIXTURES.relative_to(in_root) / "good", in_root, measurements=measurements)
    return Renderer(corpus, Project(root=in_root, templates_dir=ROOT / "templates", **kwargs))  # type: ignore[arg-type]


def test_term_page_golden(in_root: Path) -> None:
    check_golden("warp.md", renderer(in_root).term_page("warp").markdown)


def test_index_page_golden(in_root: Path) -> None:
    check_golden("index.md", renderer(in_root).index_page().markdown)


def test_page_anatomy_order(in_root: Path) -> None:
    md = renderer(in_root).term_page("lane").markdown
    headings = re.findall(r"^(#{1,2}) (.+)$", md, re.MULTILINE)
    assert headings == [
        ("#", "What is a lane?"),
        ("##", "Measured"),
        ("##", "Related terms"),
        ("##", "Where you meet this"),
        ("##", "Sources"),
        ("##", "Continue reading"),
        ("##", "Byline"),
    ]
    assert md.startswith('---\nsearch:\n  boost: 2\ntags:\n  - "lane"\n---\n')  # terms rank first in search
    after_title = md.split("# What is a lane?\n\n", 1)[1]
    assert after_title.split("\n")[0] == "One thread's position within its warp, from 0 to 31."
    assert "Nothing on this page has been measured yet." in md
    assert "No sources cited yet." in md
    assert "Written by: pending.\nReviewed by: pending.\nWritten on: pending.\nLast checked on: pending." in md


def test_backlinks_include_terms_that_link_here(in_root: Path) -> None:
    r = renderer(in_root)
    assert r.backlinks("thread-block") == {"warp"}  # related list and body link
    assert r.backlinks("warp") == {"lane", "thread-block"}  # their bodies say "warp" and "warps"
    md = r.term_page("thread-block").markdown
    assert "- [warp](warp.md" in md and "*(its page mentions thread block)*" in md


def test_edit_uri_points_at_the_yaml_file(in_root: Path) -> None:
    page = renderer(in_root).term_page("warp")
    assert page.edit_uri == "tests/fixtures/good/warp.yaml"
    assert page.in_nav is False


def test_json_ld_is_a_defined_term_that_cannot_break_out(in_root: Path) -> None:
    json_ld = renderer(in_root, site_url="https://glossary.example/").term_page("warp").json_ld
    assert not set("<>&") & set(json_ld)  # nothing that could close the <script> it goes into
    data = json.loads(json_ld)
    assert data["@type"] == "DefinedTerm"
    assert data["url"] == "https://glossary.example/terms/warp/"
    assert data["inDefinedTermSet"]["@type"] == "DefinedTermSet"


def test_nav_lists_sections_not_terms(in_root: Path) -> None:
    site = renderer(in_root).site()
    assert site.nav == [
        {"Home": "index.md"},
        {"Widgets": "sections/widgets.md"},
        {"Gadgets": "sections/gadgets.md"},
        {"Measurements": "measurements/index.md"},
        {"Measure your GPU": "measure-your-gpu.md"},
    ]
    assert sorted(p.src_uri for p in site.pages if not p.in_nav) == [
        "measurements/warp-size.md",
        "terms/2d-grid.md",
        "terms/lane.md",
        "terms/thread-block.md",
        "terms/warp.md",
    ]
