"""Placeholders left from `make new`: the scaffold's texts fail the check until replaced.

`make new` writes a term with every field, and a text the author must write (the definition,
the body, a source, a place where readers meet the term) starts with PLACEHOLDER. Each one
left is an error at its place, all of them at once, so a new term is never published with
the scaffold's words; a field the author removes or replaces passes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from cudagloss.check.fields import walk
from cudagloss.check.markdown_fields import field_position
from cudagloss.errors import Diagnostic
from cudagloss.model.corpus import LoadedTerm
from cudagloss.model.term import PLACEHOLDER_PATTERN
from cudagloss.text.spans import position

_PLACEHOLDER = re.compile(PLACEHOLDER_PATTERN)
_FIXES = {
    "definition": "write one sentence that says what the term is",
    "body": "write the explanation, in Markdown",
    "where_you_meet_this": "name an API, tool or message where a reader meets the term, or remove the item",
    "sources": "give the title and URL of a public page a fact comes from, or remove the item",
}
"""What to write instead, by the field make new put a placeholder in."""


def placeholders(t: LoadedTerm) -> Iterator[Diagnostic]:
    """An error at every text of t that still holds a placeholder of `make new`."""
    for where, text in _texts(t):
        m = _PLACEHOLDER.search(text)
        if m is None:
            continue
        at = field_position(t, where, *position(text, m.start()))
        fix = _FIXES.get(re.split(r"[.\[]", where, maxsplit=1)[0], "write your own text")
        yield Diagnostic(t.path, *at, f"{where}: placeholder text left from make new: replace it", fix)


def _texts(t: LoadedTerm) -> Iterator[tuple[str, str]]:
    """(where, text) of every string of the term, list items included."""
    for where, _, value in walk(t.term, ""):
        if isinstance(value, str):
            yield where, value
        elif isinstance(value, list):
            yield from ((f"{where}[{i}]", item) for i, item in enumerate(value) if isinstance(item, str))
