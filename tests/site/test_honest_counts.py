"""Issue 38, site-wide: the published glossary, rendered from today's files, counts no more cards
than the files hold and never counts nodes, names each card once in a byline, and shows no
measured number inline that a reader cannot find in a table of the page or on the row its link
goes to. Each rule is also shown failing on a page written to break it (tests/honesty.py)."""

from __future__ import annotations

import json
import re
from functools import cache

from conftest import ROOT
from cudagloss.model.cards import card_of
from cudagloss.model.project import Project
from cudagloss.site.build import build_site_content
from honesty import bylines, counts, unfound


@cache
def site() -> tuple[dict[str, str], dict[str, str]]:
    """Every page's Markdown, and every export's text, of the repository's glossary."""
    project = Project(
        root=ROOT,
        terms_dir=ROOT / "terms",
        templates_dir=ROOT / "templates",
        measurements_dir=ROOT / "measurements",
    )
    content, _ = build_site_content(project)
    pages = {p.src_uri: p.markdown for p in content.pages}
    return pages, {f.src_uri: f.content for f in content.exports if isinstance(f.content, str)}


def cards_in_files() -> set[str]:
    return {
        card_of(json.loads(p.read_text(encoding="utf-8"))["provenance"])
        for p in (ROOT / "measurements").glob("*/*.json")
    }


def test_every_measured_number_inline_is_in_a_table_of_the_page_or_on_its_linked_row() -> None:
    pages, _ = site()
    assert [str(u) for u in unfound(pages)] == []


def test_no_page_counts_more_cards_than_the_files_hold_or_counts_nodes() -> None:
    pages, exports = site()
    held = len(cards_in_files() - {""})
    readme = (ROOT / "measurements" / "README.md").read_text(encoding="utf-8")
    said = re.search(r"^(\d+) cards? of \d+ GPU models?", readme.split("GENERATED", 1)[1], re.M)
    assert said and int(said[1]) == held, "the generated card count in measurements/README.md is the files' own"
    found = list(counts({**pages, **exports}))
    assert found, "the pages count cards somewhere (the home page, bylines, claims)"
    assert [(page, phrase) for page, phrase, _ in found if "node" in phrase] == []
    assert [(page, phrase) for page, phrase, n in found if n > held] == []


def test_no_byline_names_a_card_twice_and_each_named_card_has_files() -> None:
    pages, _ = site()
    names = {p.name.split("~")[0].removesuffix(".json") for p in (ROOT / "measurements").glob("*/*.json")}
    seen = list(bylines(pages))
    assert seen
    for page, named in seen:
        assert len(named) == len(set(named)) and set(named) <= names, (page, named)


def test_the_checks_fail_on_pages_that_break_them() -> None:
    """The rules above, each shown catching the fault it is for."""
    row = '<tr id="h200-a-load"><td><a href="#h200-a-load"><code>load</code></a></td><td>17.4 ms</td></tr>'
    measurement = {"measurements/jit.md": row}
    pooled = {"terms/t.md": 'took [13.8 ms](../measurements/jit.md#h200-a-load "median of 10 runs")', **measurement}
    assert [u.text for u in unfound(pooled)] == ["13.8 ms"]
    shown = {"terms/t.md": 'took [17.4 ms](../measurements/jit.md#h200-a-load "x")', **measurement}
    assert list(unfound(shown)) == []
    in_table = {"terms/t.md": "took [13.8 ms](../measurements/jit.md#h200-a-load)\n\n| a | 13.8 ms |\n", **measurement}
    assert list(unfound(in_table)) == []
    ranged = {
        "terms/t.md": "took [13.8–17.4 ms on 2 H200s](../measurements/jit.md#h200-a-load)\n\n| 13.8 ms |",
        **measurement,
    }
    assert list(unfound(ranged)) == []
    nowhere = {"terms/t.md": "took [13.8 ms](../measurements/jit.md#h200-b-load)", **measurement}
    assert "does not exist" in str(next(unfound(nowhere)))
    said = (
        "on 2 NVIDIA H200 nodes; 4 H200 cards; one H200 card; 5 H200s; slower on 1 of 2 nodes than; a list of 64 nodes"
    )
    assert [(p, n) for _, p, n in counts({"index.md": said})] == [
        ("2 NVIDIA H200 nodes", 2),
        ("4 H200 cards", 4),
        ("one H200 card", 1),
        ("5 H200s", 5),
        ("of 2 nodes than", 2),
    ]
    twice = {"terms/t.md": "The numbers came from 3 NVIDIA H200 nodes (`h200-lent`, `h200-lent`, `h200-second`)."}
    assert list(bylines(twice)) == [("terms/t.md", ["h200-lent", "h200-lent", "h200-second"])]
