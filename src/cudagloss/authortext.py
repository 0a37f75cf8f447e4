"""Author text is data, not code: the sandbox that evaluates Jinja found in term files.

Bodies may refer to values (e.g. measured results) with `{{ ... }}`. They are rendered in
Jinja's SandboxedEnvironment with StrictUndefined, so a misspelt name is an error with its
line instead of an empty string, and no attribute of Python internals is reachable.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jinja2
from jinja2.sandbox import SandboxedEnvironment

from .cite import CitationError, ValueCiter
from .measured import MeasurementSet
from .memo import Memo
from .model import Term

_ENV = SandboxedEnvironment(
    undefined=jinja2.StrictUndefined,
    autoescape=False,
    keep_trailing_newline=True,
    extensions=[],
)


@dataclass(frozen=True)
class AuthorTextError(Exception):
    """A template mistake in author text, with the 1-based line within that text."""

    message: str
    line: int
    hint: str = ""

    def __str__(self) -> str:
        return self.message


@functools.lru_cache(maxsize=8192)
def _compiled(text: str) -> jinja2.Template:
    """Each body is compiled once per process: validation and rendering both render it."""
    return _ENV.from_string(text)


_OPENER = re.compile(r"\{[{%#]")
_LITERAL = r"""("[^"\\\n{}]*"|'[^'\\\n{}]*')"""
_CALL = re.compile(rf"\{{\{{ *measured\( *{_LITERAL} *, *{_LITERAL} *\) *\}}\}}")


def render_author_text(text: str, context: Mapping[str, Any]) -> str:
    """Evaluate the Jinja in text against context; raise AuthorTextError on any mistake."""
    if "{" not in text:
        return text
    simple = _simple_calls(text, context)
    if simple is not None:
        return simple
    return _render_jinja(text, context)


def _simple_calls(text: str, context: Mapping[str, Any]) -> str | None:
    """The common body, whose only Jinja is `{{ measured("experiment", "result") }}` calls
    with plain string literals, evaluated without compiling a template (most of the cost
    of a body); None for anything else, which Jinja then renders. The result, and any
    error with its line, are the same as Jinja's (tests/test_author_text.py checks)."""
    measured = context.get("measured")
    if measured is None or "\r" in text:  # Jinja would also normalise line breaks
        return None
    out: list[str] = []
    pos = 0
    for opener in _OPENER.finditer(text):
        if opener.start() < pos:
            return None  # an opener inside a call: not the simple form
        call = _CALL.match(text, opener.start())
        if call is None:
            return None
        out.append(text[pos : call.start()])
        try:
            out.append(str(measured(call.group(1)[1:-1], call.group(2)[1:-1])))
        except CitationError as exc:
            raise AuthorTextError(exc.message, text.count("\n", 0, call.start()) + 1, exc.hint) from None
        pos = call.end()
    out.append(text[pos:])
    return "".join(out)


def _render_jinja(text: str, context: Mapping[str, Any]) -> str:
    try:
        template = _compiled(text)
        return template.render(**context)
    except jinja2.TemplateSyntaxError as exc:
        raise AuthorTextError(f"template syntax error: {exc.message}", exc.lineno or 1) from None
    except jinja2.UndefinedError as exc:
        raise AuthorTextError(f"{exc.message}", _error_line(exc)) from None
    except CitationError as exc:
        raise AuthorTextError(exc.message, _error_line(exc), exc.hint) from None
    except jinja2.exceptions.SecurityError as exc:
        raise AuthorTextError(f"not allowed in term text: {exc}", _error_line(exc)) from None
    except (TypeError, ValueError, ArithmeticError, LookupError) as exc:
        raise AuthorTextError(f"template error: {exc}", _error_line(exc)) from None


Cited = tuple[tuple[str, str], ...]
_BODIES: Memo[tuple[str, Cited]] = Memo(maxsize=1 << 14)


def render_body(term: Term, measurements: MeasurementSet | None, page_uri: str) -> tuple[str, Cited]:
    """A term's body with its `measured` calls evaluated, and the (experiment, result) pairs
    it cited; raises AuthorTextError. Validation and rendering both need it, and `mkdocs
    serve` asks again after every edit, so it is memoised on exactly what it reads."""
    key = (term.body, repr(term.measurements), measurements.fingerprint if measurements else None, page_uri)

    def render() -> tuple[str, Cited]:
        citer = ValueCiter(term, measurements, page_uri)
        return render_author_text(term.body, body_context(citer)), tuple(citer.used)

    return _BODIES.get(key, render)


def body_context(citer: ValueCiter) -> dict[str, Any]:
    """What the sandboxed Jinja of a term's body may refer to: `measured(experiment, result)`."""
    return {"measured": citer}


def _error_line(exc: BaseException) -> int:
    """The line of the template frame in the traceback (Jinja maps it back to the source)."""
    tb = exc.__traceback__
    line = 1
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line
