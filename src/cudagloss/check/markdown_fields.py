"""The Markdown fields of a term (body, definition, notes), checked as their pages will use them.

The checks of cudagloss.model.directives find mistakes at a line and column inside one
field's text; here they become diagnostics at their place in the term file.
"""

from __future__ import annotations

from collections.abc import Iterator

from cudagloss.check.fields import EMAIL_HINT, shown
from cudagloss.check.markdown_rules import check_markdown
from cudagloss.check.typed_hints import hint
from cudagloss.check.typed_numbers import allowed, find, message
from cudagloss.errors import Diagnostic
from cudagloss.model.corpus import Facts, LoadedTerm
from cudagloss.model.directives import AuthorTextError, check_directives
from cudagloss.model.measurements import MeasurementSet
from cudagloss.model.urls import url_problem
from cudagloss.text.markdown import link_scheme, link_targets


def field_position(t: LoadedTerm, where: str, line: int, col: int) -> tuple[int, int]:
    """A position inside a Markdown field's text as a position in the file: exact for a
    block scalar (`body: |`), the field's own position otherwise."""
    first = t.positions.block_first_line.get(where)
    if not first:
        return t.at(where)
    try:
        lines = t.file.read_text(encoding="utf-8").splitlines()
        file_line = lines[first + line - 2]
    except (OSError, UnicodeDecodeError, IndexError):
        return first + line - 1, col
    return first + line - 1, len(file_line) - len(file_line.lstrip(" ")) + col


def prose_fields(t: LoadedTerm) -> list[tuple[str, str, bool]]:
    """(where, text, whether directives may stand in it) of each Markdown field of a term."""
    term = t.term
    fields = [("body", term.body, True), ("highlight", term.highlight, True), ("definition", term.definition, False)]
    fields += [(f"where_you_meet_this[{i}].note", m.note, False) for i, m in enumerate(term.where_you_meet_this)]
    fields += [(f"measurements[{i}].note", c.note, False) for i, c in enumerate(term.measurements)]
    fields += [(f"claims[{i}].says", c.says, False) for i, c in enumerate(term.claims)]
    for i, w in enumerate(term.worked):
        fields += [(f"worked[{i}].title", w.title, False)]
        fields += [(f"worked[{i}].steps[{j}].says", s.says, False) for j, s in enumerate(w.steps)]
    return fields


def markdown_fields(t: LoadedTerm, measurements: MeasurementSet | None) -> Iterator[Diagnostic]:
    """Author Markdown (body, definition, notes): only the directive where it belongs, only
    links a reader may follow, and no more unclosed brackets than the parser bears; then
    every value the body cites must exist."""
    term = t.term
    for where, text, directives in prose_fields(t):
        errors = check_markdown(text, directives=directives) + _links(text)
        for e in errors:
            yield Diagnostic(t.path, *field_position(t, where, e.line, e.col), f"{where}: {e.message}", e.hint)
        if directives and not errors:
            try:
                check_directives(term, measurements, text)
            except AuthorTextError as exc:
                at = field_position(t, where, exc.line, exc.col)
                yield Diagnostic(t.path, *at, f"{where}: {exc.message}", exc.hint)


def typed_numbers(
    t: LoadedTerm, measurements: MeasurementSet | None, facts: Facts, used: set[int]
) -> Iterator[Diagnostic]:
    """Each number about a GPU typed into t's Markdown that no fact allows (see
    cudagloss.check.typed_numbers); the index of each fact that allowed one goes into used."""
    term = t.term
    shown = [("title", term.title), *((f"aliases[{i}]", a) for i, a in enumerate(term.aliases))]
    shown += [(f"where_you_meet_this[{i}].label", m.label) for i, m in enumerate(term.where_you_meet_this)]
    for where, text in [*((w, x) for w, x, _ in prose_fields(t)), *shown]:  # every field a reader sees
        for found in find(text):
            fact = allowed(found, t.slug, facts.entries)
            if fact is not None:
                used.add(fact)
                continue
            at = field_position(t, where, *_offset_position(text, found.start))
            told = hint(found, text, t.term, measurements, facts.path)
            if where.startswith("claims["):  # says takes no directive: the condition names the values
                told = "say it in words; the claim's condition names the measured values"
            elif where.startswith("worked["):
                told = "say it in words; the page shows each step's numbers, which its value names"
            yield Diagnostic(t.path, *at, message(where, found), told)


def _links(text: str) -> list[AuthorTextError]:
    """A mailto: link publishes its address however it is spelt ('%40', no dot at all); an
    http(s) link must be one a reader can follow."""
    out = []
    for target in link_targets(text):
        scheme = link_scheme(target)
        if scheme == "mailto":
            message, hint = f"link to {shown(target)} is an e-mail address", EMAIL_HINT
        elif scheme in ("http", "https") and (problem := url_problem(target)):
            message, hint = f"link to {shown(target)} {problem}", "fix the address"
        else:
            continue
        line, col = _text_position(text, target)
        out.append(AuthorTextError(message, line=line, col=col, hint=hint))
    return out


def _text_position(text: str, needle: str) -> tuple[int, int]:
    return _offset_position(text, max(text.find(needle), 0))


def _offset_position(text: str, offset: int) -> tuple[int, int]:
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1
