"""The body directives are one table (cudagloss.model.directives.DIRECTIVES): the page has one
handler per row and no other, the error hint and the two documents name exactly its rows."""

from __future__ import annotations

import re

from conftest import ROOT
from cudagloss.model.directives import DIRECTIVE_HINT, DIRECTIVES, Directive, expand, scan
from cudagloss.model.term import Term
from cudagloss.site.directives import handlers

_NAMED = re.compile(r"\{\{ ?([a-z]+)\(")


def test_the_page_has_one_handler_per_directive_and_no_other() -> None:
    term = Term(name="T", title="What is it?", definition="A term.", section="s", body="A body.")
    handle, _ = handlers(term, None, "terms/t.md")
    assert set(handle) == set(DIRECTIVES)


def test_the_hint_and_the_documents_name_exactly_the_table() -> None:
    for usage in (spec.usage for spec in DIRECTIVES.values()):
        assert f"{{{{ {usage} }}}}" in DIRECTIVE_HINT
    for document in ("README.md", "AUTHORING.md"):
        text = (ROOT / document).read_text(encoding="utf-8")
        assert set(_NAMED.findall(text)) == set(DIRECTIVES), document
        for spec in DIRECTIVES.values():
            assert f"{{{{ {spec.usage} }}}}" in text, (document, spec.name)


def test_each_argument_is_read_as_its_row_says() -> None:
    found, errors = scan('{{ compare("a.x", \'b.y\') }} {{ measured("e", "r") }} {{ cite("s") }}')
    assert errors == []
    assert [(d.name, d.values, d.sources) for d in found] == [
        ("compare", [("a", "x"), ("b", "y")], []),
        ("measured", [("e", "r")], []),
        ("cite", [], ["s"]),
    ]
    seen: list[Directive] = []

    def cite(d: Directive) -> str:
        seen.append(d)
        return "[s]"

    assert expand("{{ cite('s') }}!", {"cite": cite}) == "[s]!"
    assert seen[0].spec is DIRECTIVES["cite"]
