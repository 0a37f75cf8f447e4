"""Author text is data, not code: the directives a term body may use, parsed, never evaluated.

A body is Markdown plus three directives whose arguments are string literals:
`{{ measured("experiment", "result") }}` (a measured value), `{{ cite("source-id") }}` (one of
the term's sources) and `{{ compare("experiment.a", "experiment.b") }}` (two measured timings
compared by a stated rule: "about 48× faster than", or "no different, within noise, from").
The parser below reads exactly that grammar, with one regular expression; nothing in a body is
ever handed to a template engine, so no expression, loop, filter, attribute or object is
reachable, and the work is linear in the body's length. Anything else that opens with `{{`,
`{%` or `{#` is an author error at its line and column. Inside code (fenced or indented
blocks, inline code spans) braces are literal text, so C++ initialisers and Jinja examples can
be shown; elsewhere `\\{` writes a literal brace (Markdown's own escape).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from typing import Literal

from cudagloss.errors import did_you_mean
from cudagloss.model.measurements import CitationError, MeasurementSet, resolve, resolve_pair
from cudagloss.model.term import Source, Term
from cudagloss.text.markdown import CODE_SPAN, blocks

DIRECTIVE_HINT = (
    'the directives are {{ measured("experiment", "result") }}, {{ cite("source-id") }} and '
    '{{ compare("experiment.result", "experiment.result") }}; write \\{{ for literal braces'
)
Kind = Literal["measured", "cite", "compare"]
ARITY: dict[str, int] = {"measured": 2, "cite": 1, "compare": 2}
_OPENER = re.compile(r"\{[{%#]")
_STRING = r"""(?:"([^"\\\n{}]*)"|'([^'\\\n{}]*)')"""
_CALL = re.compile(rf"\{{\{{[ \t]*([a-z]+)[ \t]*\([ \t]*{_STRING}(?:[ \t]*,[ \t]*{_STRING})?[ \t]*\)[ \t]*\}}\}}")
REF = re.compile(r"([a-z0-9]+(?:-[a-z0-9]+)*)\.([a-z][a-z0-9_]*)")
"""A value named in one string, as compare() and claims name it: experiment.result."""


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
    """One directive found in a body: where it is, which it is and its string arguments."""

    start: int
    end: int
    kind: Kind
    args: tuple[str, ...]

    @property
    def call(self) -> str:
        return f"{self.kind}(...)"

    @property
    def experiment(self) -> str:
        return self.args[0] if self.kind == "measured" else ""

    @property
    def result(self) -> str:
        return self.args[1] if self.kind == "measured" else ""

    @property
    def source(self) -> str | None:
        """The id a `cite(...)` names; None for the other directives."""
        return self.args[0] if self.kind == "cite" else None

    def refs(self) -> list[tuple[str, str]]:
        """The (experiment, result) pairs a `compare(...)` names (scan checked their form)."""
        if self.kind != "compare":
            return []
        return [(m.group(1), m.group(2)) for a in self.args if (m := REF.fullmatch(a))]


def code_ranges(text: str, *, indented: bool = True) -> list[tuple[int, int]]:
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


def position(text: str, offset: int) -> tuple[int, int]:
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
    code = code_ranges(text) if "`" in text or "    " in text or "\t" in text or "~~~" in text else []
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
        name = call.group(1) if call else ""
        args = tuple(a for a in call.groups()[1:] if a is not None) if call else ()
        if call is None or ARITY.get(name) != len(args):
            line, col = position(text, start)
            closer = {"{{": "}}", "{%": "%}", "{#": "#}"}[opener.group()]
            end = text.find(closer, start + 2, start + 200)
            shown = text[start : end + 2] if end != -1 else text[start : start + 40].split("\n")[0]
            errors.append(AuthorTextError(f"not a directive: {shown!r}", line=line, col=col, hint=DIRECTIVE_HINT))
            pos = start + 2
            continue
        for arg in args if name == "compare" else ():
            if REF.fullmatch(arg) is None:
                line, col = position(text, start)
                errors.append(
                    AuthorTextError(
                        f"compare(...): {arg!r} does not name a value as experiment.result",
                        line=line,
                        col=col,
                        hint="e.g. compare('ptx-jit.load_warm_cache_median', 'ptx-jit.load_jit_cold_cache_median')",
                    )
                )
        found.append(Directive(start, call.end(), name, args))  # type: ignore[arg-type]  # ARITY holds the kinds
        pos = call.end()
    return found, errors


def expand(
    text: str,
    value: Callable[[str, str], str],
    cite: Callable[[str], str] | None = None,
    compare: Callable[[tuple[str, str], tuple[str, str]], str] | None = None,
) -> str:
    """text with each directive replaced by value(experiment, result), cite(source) or
    compare(a, b) (ready Markdown); a directive without its function is left out."""
    out: list[str] = []
    pos = 0
    for d in parse_directives(text):
        out.append(text[pos : d.start])
        try:
            if d.kind == "measured":
                out.append(value(*d.args))
            elif d.kind == "cite" and cite is not None:
                out.append(cite(d.args[0]))
            elif d.kind == "compare" and compare is not None:
                first, second = d.refs()
                out.append(compare(first, second))
        except CitationError as exc:
            line, col = position(text, d.start)
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
    the same lookups the page makes (resolve and resolve_pair of cudagloss.model.measurements,
    find_source)."""

    def value(experiment: str, name: str) -> str:
        resolve(term, measurements, experiment, name)
        return ""

    def cite(source_id: str) -> str:
        find_source(term, source_id)
        return ""

    def compare(first: tuple[str, str], second: tuple[str, str]) -> str:
        resolve_pair(term, measurements, first, second)
        return ""

    expand(term.body, value, cite, compare)
