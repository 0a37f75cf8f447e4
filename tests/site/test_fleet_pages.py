"""A page read with one node, two, twelve, and three of two GPU models (issue 29): golden text.

The same term (tests/fixtures/fleet) is rendered over measurement folders written here, so
each golden file shows what a reader gets as the fleet grows: one number inline where the
nodes agree, a range with the count where they differ, discrete values that differ shown as
differing, a value a node lacks said so, the reference model with "varies by GPU", compare()
as one phrase, the claims as a checklist (a failing node, a node that did not measure), and a
byline of one line. UPDATE_GOLDEN=1 rewrites them; read the diff.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, ROOT, check_golden
from cudagloss.model.project import Project
from cudagloss.site.build import build_site_content
from fleets import FLEETS, fleet_files
from honesty import bylines, counts, unfound


def pages(tmp_path: Path, fleet: list[dict[str, Any]]) -> dict[str, str]:
    """Every page of the fixture glossary over the fleet's files, by source URI."""
    root = tmp_path
    shutil.copytree(FIXTURES / "fleet" / "terms", root / "terms")
    folder = root / "measurements" / "copy-bench"
    folder.mkdir(parents=True)
    for name, record in fleet_files(fleet):
        (folder / name).write_text(json.dumps(record, indent=2), encoding="utf-8")
    project = Project(
        root=root, terms_dir=root / "terms", templates_dir=ROOT / "templates", measurements_dir=root / "measurements"
    )
    content, corpus = build_site_content(project)
    assert [d.message for d in corpus.warnings] == []
    return {p.src_uri: p.markdown for p in content.pages}


def page(tmp_path: Path, fleet: list[dict[str, Any]]) -> str:
    return pages(tmp_path, fleet)["terms/copy-bandwidth.md"]


@pytest.mark.parametrize("fleet", sorted(FLEETS))
def test_a_page_reads_the_same_way_whatever_the_fleet(tmp_path: Path, fleet: str) -> None:
    check_golden(f"fleet-{fleet}.md", page(tmp_path, FLEETS[fleet]))


def test_the_prose_names_no_node_and_each_hover_names_every_one(tmp_path: Path) -> None:
    """What the golden files show, said as rules: the body's text (links' targets and hover
    titles aside) names no node, however many measured; each value's hover names them all."""
    for name, fleet in FLEETS.items():
        body = page(tmp_path / name, fleet).split("## Measured")[0].split("\n\n", 2)[2]
        titles = re.findall(r' "([^"]*)"\)', body)
        text = re.sub(r"\]\([^)]*\)", "]", body)
        nodes = [record["provenance"]["node"] for record in fleet]
        assert not [n for n in nodes if n in text], (name, text)
        ranges = body.count(")–[")  # a range carries its hover on each end
        assert len(titles) == 6 + ranges and all(f"&#40;card {n}&#41;" in t for t in titles for n in nodes), name


@pytest.mark.parametrize("fleet", sorted(FLEETS))
def test_every_number_is_findable_and_every_count_counts_cards(tmp_path: Path, fleet: str) -> None:
    """Issue 38 over each fleet: an inline number is on its linked row or in a table of the page
    (cards that agree show one card's own value, never a pooled one); no count exceeds the
    fleet's cards or counts nodes; the byline names each card once, however many runs it made."""
    site = pages(tmp_path, FLEETS[fleet])
    cards = {record["provenance"]["gpu_uuid"] for record in FLEETS[fleet]}
    assert [str(u) for u in unfound(site)] == []
    found = list(counts(site))
    assert [phrase for _, phrase, n in found if n > len(cards) or "node" in phrase] == []
    for _, named in bylines(site):
        assert len(named) == len(set(named)) == min(len(cards), 3) or not named
