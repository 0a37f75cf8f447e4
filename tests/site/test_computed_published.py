"""The computed tables the terms cite are published beside the pages (computed/<name>.json), written
again from what was read and checked, and each page's heading links to its file."""

from __future__ import annotations

import json

import pytest

from conftest import ROOT
from cudagloss.load.glossary import load_glossary
from cudagloss.load.project import load_project
from cudagloss.model.availability import parse_availability
from cudagloss.model.computed import parse_computed
from cudagloss.model.computed_set import ComputedSet
from cudagloss.model.corpus import Corpus
from cudagloss.site.computed_view import computed_files
from cudagloss.site.renderer import Renderer


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_glossary(load_project(ROOT / "mkdocs.yml", {}))


def test_each_cited_table_is_published_and_reads_back_as_the_same_table(corpus: Corpus) -> None:
    files = {f.src_uri: f.content for f in Renderer(corpus, load_project(ROOT / "mkdocs.yml", {})).site().files}
    published = {uri: text for uri, text in files.items() if uri.startswith("computed/")}
    assert set(published) == {"computed/compute-capabilities.json", "computed/instruction-availability.json"}
    assert corpus.computed is not None
    for uri, text in published.items():
        name = uri.removeprefix("computed/").removesuffix(".json")
        parser = parse_availability if name == "instruction-availability" else parse_computed
        assert parser(text, uri, name) == corpus.computed.get(name)[0]


def test_a_hostile_string_is_inert_in_the_published_file(tmp_path: object, corpus: Corpus) -> None:
    from pathlib import Path

    folder = Path(str(tmp_path)) / "computed"
    folder.mkdir()
    data = json.loads((ROOT / "computed" / "instruction-availability.json").read_text(encoding="utf-8"))
    data["features"][0]["label"] = "</script><script>alert(1)</script> & more"
    (folder / "instruction-availability.json").write_text(json.dumps(data), encoding="utf-8")
    (text,) = (t for _, t in computed_files(["instruction-availability"], ComputedSet(folder, folder.parent)))
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text)["features"][0]["label"] == data["features"][0]["label"]


def test_the_heading_links_to_the_file(corpus: Corpus) -> None:
    md = Renderer(corpus, load_project(ROOT / "mkdocs.yml", {})).term_page("instruction-availability").markdown
    assert "### [`computed/instruction-availability.json`](../computed/instruction-availability.json)" in md
