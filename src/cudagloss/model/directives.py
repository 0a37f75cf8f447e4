"""The body's directives, as a table: author text is data, not code.

A body is Markdown plus the directives of DIRECTIVES, written `{{ name("arg", ...) }}` with string
literals only. Each row says what its arguments name (an experiment, a result, a value written
experiment.result, a source id), how an author writes it, what a reader sees, and the lookups
that show it can be shown: the check stage runs those, and the page's handler (one per row, in
cudagloss.site.directives) makes the same ones. Adding a directive is one row here and one
handler there.

The parser reads exactly that grammar, with one regular expression; nothing in a body is ever
handed to a template engine, so no expression, loop, filter, attribute or object is reachable,
and the work is linear in the body's length. Anything else that opens with `{{`, `{%` or `{#`
is an author error at its line and column. Inside code (fenced or indented blocks, inline code
spans) braces are literal text, so C++ initialisers and Jinja examples can be shown; elsewhere
`\\{` writes a literal brace (Markdown's own escape).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass
from typing import Literal

from cudagloss.errors import did_you_mean
from cudagloss.model.charts import find_chart, find_diagram
from cudagloss.model.measurements import CitationError, MeasurementSet, resolve, resolve_pair
from cudagloss.model.refs import REF, Ref, read_ref
from cudagloss.model.term import Source, Term
from cudagloss.model.worked import WorkedExample
from cudagloss.text.spans import code_ranges, position

Param = Literal["experiment", "result", "value", "source", "worked", "chart", "diagram"]
"""What one string argument names: an experiment id, a result name, experiment.result, a source id,
a worked example's id, the id of one of the term's charts or diagrams."""


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
    """One directive found in a body: where it is, its name and its string arguments."""

    start: int
    end: int
    name: str
    args: tuple[str, ...]

    @property
    def spec(self) -> Spec:
        return DIRECTIVES[self.name]

    @property
    def call(self) -> str:
        return f"{self.name}(...)"

    @property
    def values(self) -> list[Ref]:
        """The (experiment, result) pairs it names, in order (scan checked their form)."""
        named = dict(zip(self.spec.params, self.args, strict=True))
        pair = [(named["experiment"], named["result"])] if "experiment" in named and "result" in named else []
        return pair + [
            ref for p, a in zip(self.spec.params, self.args, strict=True) if p == "value" if (ref := read_ref(a))
        ]

    @property
    def sources(self) -> list[str]:
        return [a for p, a in zip(self.spec.params, self.args, strict=True) if p == "source"]


Lookup = Callable[[Term, MeasurementSet | None, Directive], object]


@dataclass(frozen=True)
class Spec:
    """One directive: its name, what each argument names, how an author writes it, what a
    reader sees, what it cites ('values' or 'sources') and the lookups the page will make."""

    name: str
    params: tuple[Param, ...]
    usage: str
    shows: str
    cites: str
    lookup: Lookup


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


def text_result(term: Term, measurements: MeasurementSet | None, experiment: str, name: str) -> object:
    """resolve's record, where the result is text on a node (a listing shows text, not a number)."""
    record = resolve(term, measurements, experiment, name)
    if not any(isinstance(r.value, str) for _, r in record.values(name) if r is not None):
        raise CitationError(
            f"listing('{experiment}', '{name}'): '{name}' is not a text result",
            f'a number is shown with {{{{ measured("{experiment}", "{name}") }}}}',
        )
    return record


def find_worked(term: Term, worked_id: str) -> WorkedExample:
    """The worked example `worked(worked_id)` names; raises CitationError when the term has none
    of that id. The check stage and the page both ask this."""
    for example in term.worked:
        if example.id == worked_id:
            return example
    ids = [w.id for w in term.worked]
    raise CitationError(
        f"worked('{worked_id}'): the term has no worked example '{worked_id}'{did_you_mean(worked_id, ids)}",
        f"its worked examples are {', '.join(ids)}" if ids else "add it under worked:, with an id, title and steps",
    )


def stands_alone(text: str, d: Directive) -> bool:
    """Whether directive d is alone on its line of text with a blank line (or the text's start or
    end) before and after it: where a block such as a worked example's list can go."""
    before, after = text[: d.start].split("\n")[-2:], text[d.end :].split("\n")[:2]
    return not any(part.strip() for part in (before[-1], after[0], *before[:-1], *after[1:]))


DIRECTIVES: dict[str, Spec] = {
    spec.name: spec
    for spec in (
        Spec(
            "measured",
            ("experiment", "result"),
            'measured("experiment", "result")',
            "the value each node measured, linked to its row on the experiment's measurement page",
            "values",
            lambda term, measurements, d: resolve(term, measurements, *d.values[0]),
        ),
        Spec(
            "cite",
            ("source",),
            'cite("source-id")',
            "one of the term's sources: its title, linked, and the day the link checker last reached it",
            "sources",
            lambda term, _, d: find_source(term, d.sources[0]),
        ),
        Spec(
            "compare",
            ("value", "value"),
            'compare("experiment.result", "experiment.result")',
            'two timings by the stated rule: "about 48× faster than" or "not shown to differ (5 samples each) from"',
            "values",
            lambda term, measurements, d: resolve_pair(term, measurements, *d.values),
        ),
        Spec(
            "listing",
            ("experiment", "result"),
            'listing("experiment", "result")',
            "a text result the GPU node recorded (the SASS of a kernel) as a code block, naming the node, "
            "on a line of its own",
            "values",
            lambda term, measurements, d: text_result(term, measurements, *d.values[0]),
        ),
        Spec(
            "worked",
            ("worked",),
            'worked("id")',
            "one of the term's worked examples: its steps with the values each node measured, checked against them",
            "a worked example",
            lambda term, _, d: find_worked(term, d.args[0]),
        ),
        Spec(
            "chart",
            ("chart",),
            'chart("chart-id")',
            "a chart of one of the term's `charts:`, drawn from the measurement files, with its data table",
            "charts",
            lambda term, _, d: find_chart(term, d.args[0]),  # the chart itself is checked at its own lines
        ),
        Spec(
            "diagram",
            ("diagram",),
            'diagram("diagram-id")',
            "one of the term's `diagrams:`, an SVG file from diagrams/ through the sanitiser, its labels measured",
            "diagrams",
            lambda term, _, d: find_diagram(term, d.args[0]),  # the file is checked at its own lines
        ),
    )
}
"""Every directive a body may use."""

_USAGES = [f"{{{{ {spec.usage} }}}}" for spec in DIRECTIVES.values()]
DIRECTIVE_HINT = f"the directives are {', '.join(_USAGES[:-1])} and {_USAGES[-1]}; write \\{{{{ for literal braces"
_OPENER = re.compile(r"\{[{%#]")
_STRING = r"""(?:"([^"\\\n{}]*)"|'([^'\\\n{}]*)')"""
_PLAIN = r"""(?:"[^"\\\n{}]*"|'[^'\\\n{}]*')"""
_CALL = re.compile(
    rf"\{{\{{[ \t]*([a-z]+)[ \t]*\([ \t]*((?:{_PLAIN}(?:[ \t]*,[ \t]*{_PLAIN}){{0,7}})?)[ \t]*\)[ \t]*\}}\}}"
)
_ARG = re.compile(_STRING)


def parse_directives(text: str) -> list[Directive]:
    """Every directive in text, in order; raises AuthorTextError on anything else in braces."""
    found, errors = scan(text)
    if errors:
        raise errors[0]
    return found


def _not_a_directive(text: str, start: int, opener: str) -> AuthorTextError:
    line, col = position(text, start)
    closer = {"{{": "}}", "{%": "%}", "{#": "#}"}[opener]
    end = text.find(closer, start + 2, start + 200)
    shown = text[start : end + 2] if end != -1 else text[start : start + 40].split("\n")[0]
    return AuthorTextError(f"not a directive: {shown!r}", line=line, col=col, hint=DIRECTIVE_HINT)


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
        spec = DIRECTIVES.get(call.group(1)) if call else None
        args = tuple(a or b for a, b in _ARG.findall(call.group(2))) if call else ()
        if call is None or spec is None or len(spec.params) != len(args):
            errors.append(_not_a_directive(text, start, opener.group()))
            pos = start + 2
            continue
        for param, arg in zip(spec.params, args, strict=True):
            if param == "value" and REF.fullmatch(arg) is None:
                line, col = position(text, start)
                message = f"{spec.name}(...): {arg!r} does not name a value as experiment.result"
                errors.append(AuthorTextError(message, line=line, col=col, hint=f"write {spec.usage}"))
        found.append(Directive(start, call.end(), spec.name, args))
        pos = call.end()
    return found, errors


Handler = Callable[[Directive], str]


def expand(text: str, handlers: Mapping[str, Handler]) -> str:
    """text with each directive replaced by what its handler makes of it (ready Markdown); a
    directive without a handler is left out. A CitationError becomes an AuthorTextError at the
    directive's place."""
    out: list[str] = []
    pos = 0
    for d in parse_directives(text):
        out.append(text[pos : d.start])
        try:
            out.append(handler(d) if (handler := handlers.get(d.name)) else "")
        except CitationError as exc:
            line, col = position(text, d.start)
            raise AuthorTextError(exc.message, line=line, col=col, hint=exc.hint) from None
        pos = d.end
    out.append(text[pos:])
    return "".join(out)


def check_directives(term: Term, measurements: MeasurementSet | None, text: str | None = None) -> None:
    """Raise AuthorTextError at the first directive of text (default: term's body) that cannot
    be shown: the lookups of its row, which the page's handler makes too."""

    def looked_up(d: Directive) -> str:
        d.spec.lookup(term, measurements, d)
        return ""

    expand(term.body if text is None else text, dict.fromkeys(DIRECTIVES, looked_up))
