"""The search's names index (javascripts/glossary-names.json, read by glossary.js): every name a
reader may type for a term, its address and its definition as plain text; hostile strings
round-trip exactly and leave no markup in the file. How search uses it: tests/e2e/test_search.py."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import ROOT
from cudagloss.model.corpus import Corpus, LoadedTerm
from cudagloss.model.positions import Positions
from cudagloss.model.project import Project
from cudagloss.model.term import Term
from cudagloss.site.build import build_site_content
from cudagloss.site.search_names import NAMES_JSON, names_json

HOSTILE = [
    "<script>window.__pwned=1</script>",
    "\"quoted\" \\back\\slash\\ 'single' </script>",
    "emoji \U0001f600 and \u2028 line \u2029 separators & <b>",
    "\\u003cscript\\u003e",
]


def _term(slug: str, name: str, aliases: list[str], abbreviations: list[str]) -> LoadedTerm:
    term = Term(
        name=name,
        title=f"What is {name}?",
        definition=f"**{name}** in [a link](https://example.com/) and `code`.",
        section="s",
        body="B.",
        aliases=aliases,
        abbreviations=abbreviations,
    )
    return LoadedTerm(slug, f"terms/{slug}.yaml", Path(f"terms/{slug}.yaml"), term, Positions())


def test_each_term_with_every_name_a_reader_may_type(tmp_path: Path) -> None:
    corpus = Corpus(tmp_path, [_term("b", "Beta", ["second"], ["B2"]), _term("a", "Alpha", [], ["A1", "A"])], [])
    data = json.loads(names_json(corpus))
    assert data == {
        "format": 1,
        "terms": [
            {
                "url": "terms/a/",
                "name": "Alpha",
                "names": ["Alpha", "A1", "A"],
                "definition": "Alpha in a link and code.",
            },
            {
                "url": "terms/b/",
                "name": "Beta",
                "names": ["Beta", "second", "B2"],
                "definition": "Beta in a link and code.",
            },
        ],
    }


def test_hostile_names_round_trip_exactly_and_leave_no_markup(tmp_path: Path) -> None:
    corpus = Corpus(tmp_path, [_term(f"h{i}", text, [text], [text[:5]]) for i, text in enumerate(HOSTILE)], [])
    text = names_json(corpus)
    for raw in ("<", ">", "&", "\u2028", "\u2029"):
        assert raw not in text  # \u escapes: no markup for a browser sniffing the file
    terms = {t["url"]: t for t in json.loads(text)["terms"]}
    for i, hostile in enumerate(HOSTILE):
        assert terms[f"terms/h{i}/"]["names"] == [hostile, hostile, hostile[:5]]
        assert terms[f"terms/h{i}/"]["name"] == hostile


def test_the_site_publishes_it_beside_glossary_js() -> None:
    content, corpus = build_site_content(
        Project(root=ROOT, terms_dir=ROOT / "terms", measurements_dir=ROOT / "measurements")
    )
    published = {f.src_uri: f.content for f in content.files}
    assert NAMES_JSON.rsplit("/", 1)[0] == "javascripts" and (ROOT / "docs/javascripts/glossary.js").is_file()
    urls = [t["url"] for t in json.loads(published[NAMES_JSON])["terms"]]
    assert urls == [f"terms/{t.slug}/" for t in corpus.alphabetical()] and urls[0].startswith("terms/a")
    first = corpus.alphabetical()[0].slug  # A to Z: whichever term comes first as the glossary grows
    assert json.loads(published[NAMES_JSON])["terms"][0]["url"] == f"terms/{first}/"
    assert len(json.loads(published[NAMES_JSON])["terms"]) == len(corpus)
