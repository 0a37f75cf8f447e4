"""The compute-capability page shows computed/compute-capabilities.json as a table: every
compute capability in numeric order, every value as the file holds it, its provenance escaped."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import ROOT
from cudagloss.load.glossary import load_glossary
from cudagloss.load.project import load_project
from cudagloss.model.computed_set import ComputedSet
from cudagloss.model.corpus import Corpus
from cudagloss.site.renderer import Renderer

FILE = ROOT / "computed" / "compute-capabilities.json"


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_glossary(load_project(ROOT / "mkdocs.yml", {}))


def _page(corpus: Corpus) -> str:
    return Renderer(corpus, load_project(ROOT / "mkdocs.yml", {})).term_page("compute-capability").markdown


def _rows(md: str) -> list[list[str]]:
    section = md.split("## Computed by NVIDIA's tools\n", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("| ")]
    return [[c.strip() for c in line.strip("|").split(" | ")] for line in lines]


def test_the_page_shows_every_value_of_the_file(corpus: Corpus) -> None:
    data = json.loads(FILE.read_text(encoding="utf-8"))
    functions = data["provenance"]["functions"]
    rows = _rows(_page(corpus))
    head, body = rows[0], rows[1:]
    assert [re.match(r"`(\w+)`", c).group(1) for c in head[1:]] == functions  # type: ignore[union-attr]
    expected = sorted(data["values"], key=lambda cc: tuple(int(p) for p in cc.split(".")))
    assert [r[0] for r in body] == expected
    assert expected.index("7.5") < expected.index("10.0")
    for row in body:
        values = data["values"][row[0]]
        shown = [", ".join(map(str, v)) if isinstance(v, list) else str(v) for v in (values[f] for f in functions)]
        assert row[1:] == shown


def test_the_provenance_sentence_says_only_what_the_file_says(corpus: Corpus) -> None:
    p = json.loads(FILE.read_text(encoding="utf-8"))["provenance"]
    md = _page(corpus)
    sentence = next(line for line in md.splitlines() if line.startswith("Computed by NVIDIA's occupancy"))
    for said in (str(p["cuda_version"]), p["header_sha256"][:12], p["compiler"], p["nvrtc_version"]):
        assert said in sentence
    assert p["computed_at"][:10] in sentence and "`make generations`" in sentence
    assert '<h2 id="' not in md and md.count("\n## Computed by NVIDIA's tools\n") == 1


def test_hostile_strings_from_the_file_are_escaped(corpus: Corpus, tmp_path: Path) -> None:
    folder = tmp_path / "computed"
    folder.mkdir()
    data = json.loads(FILE.read_text(encoding="utf-8"))
    data["provenance"]["compiler"] = "<script>alert(1)</script> | [x](javascript:y)"
    (folder / "compute-capabilities.json").write_text(json.dumps(data), encoding="utf-8")
    hostile = ComputedSet(folder, tmp_path)
    assert hostile.get("compute-capabilities")[1] == []
    was = corpus.computed
    corpus.computed = hostile
    try:
        md = _page(corpus)
    finally:
        corpus.computed = was
    assert "<script>" not in md and "alert(1)" in md
    assert "&lt;script&gt;" in md and "\\| \\[x\\](javascript:y)" in md  # no link, no cell ends
    assert len(_rows(md)[0]) == len(data["provenance"]["functions"]) + 1
    shutil.rmtree(folder)
