"""The reading order (issue 30, part 5): a section's `terms` in _sections.yaml orders its terms;
a slug that is not one of its terms is a mistake at its place, all of them at once."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import FIXTURES
from cudagloss.load.corpus import load_corpus
from cudagloss.load.measurements import load_measurements
from cudagloss.model.corpus import Corpus


def _load(terms: Path) -> Corpus:
    measurements, _ = load_measurements(terms.parent / "measurements", terms.parent)
    return load_corpus(terms, terms.parent, measurements=measurements)


def _glossary(tmp_path: Path, widgets: str, gadgets: str = "") -> Path:
    shutil.copytree(FIXTURES / "good", tmp_path / "terms")
    shutil.copytree(FIXTURES / "good-measurements", tmp_path / "measurements")
    sections = tmp_path / "terms" / "_sections.yaml"
    text = sections.read_text(encoding="utf-8")
    text = text.replace("    description: Things with <b>bold</b> claims.\n", f"    description: Things.\n{widgets}")
    sections.write_text(text + gadgets, encoding="utf-8")
    return tmp_path / "terms"


def test_the_stated_order_comes_first_then_the_rest_a_to_z_and_the_sections_in_order(tmp_path: Path) -> None:
    corpus = _load(_glossary(tmp_path, "    terms: [warp]\n", "    terms: [lane]\n"))
    assert [t.slug for t in corpus.in_section("widgets")] == ["warp", "thread-block"]
    assert [t.slug for t in corpus.reading_order()] == ["warp", "thread-block", "lane", "2d-grid"]
    before, after = corpus.neighbours("thread-block")
    assert (before and before.slug, after and after.slug) == ("warp", "lane")  # across the section's end
    assert corpus.neighbours("warp")[0] is None and corpus.neighbours("2d-grid")[1] is None


def test_every_wrong_name_in_an_order_is_a_warning_at_its_place(tmp_path: Path) -> None:
    """A warning, not an error: the term only falls back to A-Z, so the preview keeps its pages
    while a term is renamed (make check --strict fails on it all the same)."""
    terms = _glossary(tmp_path, "    terms:\n      - warp\n      - lane\n      - wrap\n      - warp\n")
    corpus = _load(terms)
    assert all(d.warning for d in corpus.warnings)
    said = [(d.line, d.message) for d in corpus.warnings if "terms[" in d.message]
    assert said == [
        (8, "sections[0].terms[1]: 'lane' is in section 'gadgets', not 'widgets'"),
        (9, "sections[0].terms[2]: no term 'wrap' (did you mean 'warp'?)"),
        (10, "sections[0].terms[3]: 'warp' is named twice"),
    ]
