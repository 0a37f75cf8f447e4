"""The A–Z index files every name under an ASCII letter or under '0–9', so that each heading's
anchor is an identifier: 'Éclair' once stopped `mkdocs build` with "not an identifier: 'é'"."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT
from cudagloss.load.corpus import load_corpus
from cudagloss.model.corpus import LoadedTerm, index_letter, sort_key
from cudagloss.model.positions import Positions
from cudagloss.model.project import Project
from cudagloss.model.term import Term
from cudagloss.site.renderer import Renderer

HEAD = "# yaml-language-server: $schema=../schema/term.schema.json\n"

# name: the heading a reader looks for it under
LETTERS = {
    "Éclair": "E",
    "Echo": "E",
    "Edge": "E",
    "Ωmega": "0–9",  # Greek: no A–Z form
    "Åx": "A",
    "ẞx": "S",  # capital sharp s folds to 'ss'
    "ß-tree": "S",
    "Zeta": "Z",
    "2D grid": "0–9",
    "東京": "0–9",
    "Ærø": "A",
    "Øresund": "O",
    "İstanbul": "I",
    "Łódź": "L",
    "Þorn": "T",
    "Œuvre": "O",
    "Ðoor": "D",
    "ıota": "I",  # dotless i
    "'Quoted' name": "Q",
    "“Curly” name": "C",
    "_underscore": "0–9",
    "#pragma": "0–9",
    "Ñandú": "N",
    "Çelik": "C",
}
HEADINGS = ["0–9", "A", "C", "D", "E", "I", "L", "N", "O", "Q", "S", "T", "Z"]
"""The index's headings for LETTERS, in order: each once, '0–9' first as it always was."""
REFUSED_BY_THE_CHECK = {"ǅemal": "D", "ﬁne": "F", "Ａrm": "A"}
"""Compatibility forms: the check refuses them in names, and the index files them sensibly anyway."""


def _term(name: str) -> LoadedTerm:
    term = Term(name=name, title="What is it?", definition="A term.", section="widgets", body="A body.")
    return LoadedTerm(slug="x", path="terms/x.yaml", file=Path("terms/x.yaml"), term=term, positions=Positions())


@pytest.mark.parametrize(
    ("name", "letter"), [*LETTERS.items(), *REFUSED_BY_THE_CHECK.items()], ids=[*LETTERS, *REFUSED_BY_THE_CHECK]
)
def test_a_name_is_filed_under_the_ascii_letter_it_folds_to(name: str, letter: str) -> None:
    assert index_letter(_term(name)) == letter


def _glossary(root: Path) -> Path:
    terms = root / "terms"
    terms.mkdir()
    (terms / "_sections.yaml").write_text((FIXTURES / "good" / "_sections.yaml").read_text(encoding="utf-8"))
    for i, name in enumerate(LETTERS):
        (terms / f"t{i:02d}.yaml").write_text(
            f"{HEAD}name: {name!r}\ntitle: What is it?\ndefinition: A term used by these tests.\n"
            "section: widgets\nbody: |\n  A body.\n",
            encoding="utf-8",
        )
    return terms


def test_the_index_page_of_accented_and_non_latin_names_builds_and_groups_them(tmp_path: Path) -> None:
    corpus = load_corpus(_glossary(tmp_path), tmp_path)  # they pass the check, as they did before
    markdown = Renderer(corpus, Project(root=tmp_path, templates_dir=ROOT / "templates")).index_page().markdown
    headings = re.findall(r"^### (.+)$", markdown, re.MULTILINE)
    assert headings == HEADINGS
    jump = re.search(r"^\[0–9\]\(#09\).*$", markdown, re.MULTILINE)
    assert jump is not None and all(a.isascii() for a in re.findall(r"\(#([^)]*)\)", jump.group(0)))
    groups = dict(zip(headings, re.split(r"^### .+$", markdown, flags=re.MULTILINE)[1:], strict=True))
    listed = {  # names as written, without the Markdown escapes ('\\#pragma')
        h: [n.replace("\\", "") for n in re.findall(r"^- \[([^\]]+)\]", body, re.MULTILINE)]
        for h, body in groups.items()
    }
    assert listed["E"] == ["Echo", "Éclair", "Edge"]  # accents do not send a name to the end
    assert listed["S"] == ["ß-tree", "ẞx"]
    assert listed["A"] == ["Ærø", "Åx"]
    assert set(listed["0–9"]) == {"2D grid", "Ωmega", "東京", "_underscore", "#pragma"}
    assert sum(len(v) for v in listed.values()) == len(LETTERS)


def test_every_heading_of_the_index_sorts_its_names_together() -> None:
    """The order the index lists names in keeps each heading's names in one run."""
    terms = sorted((_term(n) for n in LETTERS), key=sort_key)
    letters = [index_letter(t) for t in terms]
    runs = [x for i, x in enumerate(letters) if i == 0 or letters[i - 1] != x]
    assert runs == HEADINGS
