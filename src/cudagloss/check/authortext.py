"""Author text is data, not code: the directives a term body may use, parsed, never evaluated.

A body is Markdown plus two directives, `{{ measured("experiment", "result") }}` (a measured
value) and `{{ cite("source-id") }}` (one of the term's sources), whose arguments are string
literals. The parser below reads exactly that grammar, with one regular expression; nothing in a
body is ever handed to a template engine, so no expression, loop, filter, attribute or
object is reachable, and the work is linear in the body's length. Anything else that opens
with `{{`, `{%` or `{#` is an author error at its line and column. Inside code (fenced or
indented blocks, inline code spans) braces are literal text, so C++ initialisers and Jinja
examples can be shown; elsewhere `\\{` writes a literal brace (Markdown's own escape).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass

from cudagloss.errors import did_you_mean
from cudagloss.model.measurements import CitationError, MeasurementSet, resolve
from cudagloss.model.term import Source, Term
from cudagloss.model.urls import SAFE_SCHEMES
from cudagloss.text.markdown import (
    CODE_SPAN,
    MAX_NESTING,
    MAX_UNMATCHED,
    blocks,
    dangerous_schemes,
    deepest_block,
    deepest_bracket,
    link_scheme,
    link_targets,
    unmatched_openers,
)

DIRECTIVE_HINT = (
    'the directives are {{ measured("experiment", "result") }} and {{ cite("source-id") }}; '
    "write \\{{ for literal braces"
)
_OPENER = re.compile(r"\{[{%#]")
_STRING = r"""(?:"([^"\\\n{}]*)"|'([^'\\\n{}]*)')"""
_CALL = re.compile(
    rf"\{{\{{[ \t]*(?:measured[ \t]*\([ \t]*{_STRING}[ \t]*,[ \t]*{_STRING}|cite[ \t]*\([ \t]*{_STRING})"
    rf"[ \t]*\)[ \t]*\}}\}}"
)


@dataclass(frozen=True)
class AuthorTextError(Exception):
    """A mistake in one field's author text, at the 1-based line and column within that
    text; the check stage places it in the file (cudagloss.check.markdown_fields)."""

    message: str
    _: KW_ONLY
    line: int
    col: int
    hint: str = ""

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class Directive:
    """One directive found in a body: where it is and what it names, a measured value
    (experiment, result) or, for `cite(...)`, a source by its id."""

    start: int
    end: int
    experiment: str = ""
    result: str = ""
    source: str | None = None
    """The id a `cite(...)` names; None for `measured(...)`."""

    @property
    def call(self) -> str:
        return "measured(...)" if self.source is None else "cite(...)"


def _code_ranges(text: str, *, indented: bool = True) -> list[tuple[int, int]]:
    """Offsets of code in Markdown (blocks and inline spans), where braces are literal;
    indented=False leaves out what only may be an indented code block."""
    ranges: list[tuple[int, int]] = []
    offset = 0
    for block in blocks(text):
        if block.kind == "code" or (indented and block.kind == "indented"):
            ranges.append((offset, offset + len(block.text)))
        elif "`" in block.text:
            ranges += [(offset + m.start(), offset + m.end()) for m in CODE_SPAN.finditer(block.text)]
        offset += len(block.text)
    return ranges


_IMAGE = re.compile(r"!\[")


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def parse_directives(text: str) -> list[Directive]:
    """Every directive in text, in order; raises AuthorTextError on anything else in braces."""
    found, errors = scan(text)
    if errors:
        raise errors[0]
    return found


def scan(text: str) -> tuple[list[Directive], list[AuthorTextError]]:
    """The directives in text and every mistake among its braces, in one linear pass."""
    found: list[Directive] = []
    errors: list[AuthorTextError] = []
    if "{" not in text:
        return found, errors
    code = _code_ranges(text) if "`" in text or "    " in text or "\t" in text or "~~~" in text else []
    code_starts = [a for a, _ in code]
    pos = 0
    for opener in _OPENER.finditer(text):
        start = opener.start()
        if start < pos or (start > 0 and text[start - 1] == "\\"):
            continue
        k = bisect.bisect_right(code_starts, start) - 1
        if k >= 0 and start < code[k][1]:
            continue
        call = _CALL.match(text, start)
        if call is None:
            line, col = _position(text, start)
            closer = {"{{": "}}", "{%": "%}", "{#": "#}"}[opener.group()]
            end = text.find(closer, start + 2, start + 200)
            shown = text[start : end + 2] if end != -1 else text[start : start + 40].split("\n")[0]
            errors.append(AuthorTextError(f"not a directive: {shown!r}", line=line, col=col, hint=DIRECTIVE_HINT))
            pos = start + 2
            continue
        args = [a for a in call.groups() if a is not None]  # each argument's "..." or '...' group
        if call.group(5) is None and call.group(6) is None:
            found.append(Directive(start, call.end(), *args))
        else:
            found.append(Directive(start, call.end(), source=args[0]))
        pos = call.end()
    return found, errors


def expand(text: str, value: Callable[[str, str], str], cite: Callable[[str], str] | None = None) -> str:
    """text with each directive replaced by value(experiment, result) or cite(source) (ready
    Markdown); without cite, citations of sources are left out."""
    out: list[str] = []
    pos = 0
    for d in parse_directives(text):
        out.append(text[pos : d.start])
        try:
            if d.source is None:
                out.append(value(d.experiment, d.result))
            elif cite is not None:
                out.append(cite(d.source))
        except CitationError as exc:
            line, col = _position(text, d.start)
            raise AuthorTextError(exc.message, line=line, col=col, hint=exc.hint) from None
        pos = d.end
    out.append(text[pos:])
    return "".join(out)


def find_source(term: Term, source_id: str) -> Source:
    """The source `cite(source_id)` in term's body names; raises CitationError when no
    source has that id. The check stage and the page both ask this."""
    for source in term.sources:
        if source.id == source_id:
            return source
    ids = [s.id for s in term.sources if s.id is not None]
    add = f"add 'id: {source_id}' to the source you mean, under sources:"
    raise CitationError(
        f"cite('{source_id}'): the term has no source with id '{source_id}'{did_you_mean(source_id, ids)}",
        f"its sources' ids are {', '.join(ids)}; or {add}" if ids else add,
    )


def check_citations(term: Term, measurements: MeasurementSet | None) -> None:
    """Raise AuthorTextError at the first directive of term's body that cannot be shown:
    the same lookups the page makes (cudagloss.model.measurements.resolve, find_source)."""

    def value(experiment: str, name: str) -> str:
        resolve(term, measurements, experiment, name)
        return ""

    def cite(source_id: str) -> str:
        find_source(term, source_id)
        return ""

    expand(term.body, value, cite)


def check_markdown(text: str, *, directives: bool) -> list[AuthorTextError]:
    """Every mistake in an author's Markdown field that the page would suffer from: braces
    that are not directives (or any, where directives are not allowed), link targets a
    reader must not be sent to, and more unclosed brackets than the parser can bear."""
    found, errors = scan(text)
    if found and not directives:
        for d in found:
            line, col = _position(text, d.start)
            what = "values" if d.source is None else "sources"
            errors.append(
                AuthorTextError(
                    f"{d.call} is allowed only in the body", line=line, col=col, hint=f"cite {what} in the body"
                )
            )
    flagged: set[int] = set()
    for target in link_targets(text):
        scheme = link_scheme(target)
        if scheme and scheme not in SAFE_SCHEMES:
            line, col = _position(text, max(text.find(target), 0))
            flagged.add(line)
            errors.append(
                AuthorTextError(
                    f"link to {target!r} is not allowed",
                    line=line,
                    col=col,
                    hint="links go to http(s) pages or to other terms ('sass.md')",
                )
            )
    for offset, word in dangerous_schemes(text):
        line, col = _position(text, offset)
        if line not in flagged:
            flagged.add(line)
            errors.append(
                AuthorTextError(
                    f"'{word}:' outside code: a browser would run or load it from a link",
                    line=line,
                    col=col,
                    hint=f"to mention the scheme, write it as code: `{word}:`",
                )
            )
    code = _code_ranges(text, indented=False) if "![" in text else []
    starts = [a for a, _ in code]
    for m in _IMAGE.finditer(text):
        k = bisect.bisect_right(starts, m.start()) - 1
        if not (k >= 0 and m.start() < code[k][1]):
            line, col = _position(text, m.start())
            errors.append(
                AuthorTextError(
                    "images are not published: each reader's browser would fetch them from another site",
                    line=line,
                    col=col,
                    hint="link to the picture instead: [a diagram of it](https://...)",
                )
            )
    for depth, offset, what in (
        (*deepest_bracket(text), "brackets"),
        (*deepest_block(text), "lists and quotes"),
    ):
        if depth > MAX_NESTING:
            line, col = _position(text, offset)
            errors.append(
                AuthorTextError(
                    f"{what} nested {depth} deep (at most {MAX_NESTING})",
                    line=line,
                    col=col,
                    hint="flatten it; Markdown that deep takes the site build minutes or crashes it",
                )
            )
    unmatched = unmatched_openers(text)
    if len(unmatched) > MAX_UNMATCHED:
        line, col = _position(text, unmatched[MAX_UNMATCHED])
        errors.append(
            AuthorTextError(
                f"{len(unmatched)} unclosed '[' or '(' (at most {MAX_UNMATCHED})",
                line=line,
                col=col,
                hint="close each bracket, or write \\[ and \\( for literal ones",
            )
        )
    return sorted(errors, key=lambda e: (e.line, e.col))
