"""A term's worked examples as the check stage reports them: a mistake in a step, a value the term
cannot cite, an example the body never places (or places twice), and a step that disagrees with
the result it matches on some node, naming both numbers (errors); an example no node could work
out yet (a warning, never a pass). Also the reviewed values of the facts file that examples name.
Working them out is cudagloss.model.workings'.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace

from cudagloss.check.markdown_fields import field_position
from cudagloss.errors import Diagnostic
from cudagloss.model.corpus import Facts, LoadedTerm
from cudagloss.model.directives import scan, stands_alone
from cudagloss.model.display import format_value, verify_command
from cudagloss.model.measurements import MeasurementSet
from cudagloss.model.work_rules import read_quantity
from cudagloss.model.workings import Mismatch, gap, shown, work
from cudagloss.text.spans import position

_FACT_ID = re.compile(r"[a-z][a-z0-9_]{0,99}")


def worked_diagnostics(t: LoadedTerm, measurements: MeasurementSet | None, facts: Facts) -> Iterator[Diagnostic]:
    """Every mistake in t's worked examples, every step that disagrees with its measurement, and a
    warning for each example no node has worked out."""
    placed: dict[str, int] = {}
    for d in scan(t.term.body)[0]:
        if d.name == "worked":
            placed[d.args[0]] = placed.get(d.args[0], 0) + 1
        if d.name == "worked" and not stands_alone(t.term.body, d):
            yield _in(t, "body", t.term.body, d.start, _ALONE, "put it on a line of its own between paragraphs")
    for d in scan(t.term.highlight)[0]:
        if d.name == "worked":
            yield _in(t, "highlight", t.term.highlight, d.start, _ONLY_BODY, "place it in the body")
    first: dict[str, int] = {}
    for i, example in enumerate(t.term.worked):
        where = f"worked[{i}]"
        if (same := first.setdefault(example.id, i)) != i:
            yield _at(t, f"{where}.id", f"'{example.id}' is also the id of worked[{same}]", "give each its own id")
        elif not placed.get(example.id):
            hint = f'place it in the body, on a line of its own: {{{{ worked("{example.id}") }}}}'
            yield _at(t, f"{where}.id", f"'{example.id}' is not placed in the body, so no page shows it", hint)
        elif placed[example.id] > 1:
            yield _at(t, f"{where}.id", f"'{example.id}' is placed {placed[example.id]} times", "place it once")
        working = work(t.term, i, measurements, facts.values)
        for e in working.errors:
            at = f" (at character {e.offset + 1})" if e.offset is not None else ""
            yield _at(t, f"{where}.{e.where}", e.message + at, e.hint)
        for m in working.mismatches:
            yield _at(t, f"{where}.steps[{m.step}]", _disagrees(example.steps[m.step].says, m), _HINT)
        if working.unverified:
            commands = "; ".join(f"run `{verify_command(e)}` on a GPU node" for e in working.unmeasured)
            message = f"'{example.title}' is not worked out: {working.unverified}"
            yield replace(_at(t, where, message, commands), warning=True)


_HINT = "the working and the measurement disagree: correct the working, or find what the measurement shows"


def _disagrees(says: str, m: Mismatch) -> str:
    within = "equal" if not m.within else f"within {float(m.within * 100):g}%"
    off = gap(m.computed, m.measured)
    apart = f"{abs(off):.1%} {'above' if off > 0 else 'below'}" if abs(off) < 100 else "far from"
    return (
        f"'{says}' works out to {shown(m.computed)} on node '{m.node}' ({m.gpu}), but {'.'.join(m.ref)} measured "
        f"{format_value(m.measured)} there, {apart} it; they must be {within}"
    )


def fact_value_mistakes(facts: Facts) -> Iterator[Diagnostic]:
    """What is wrong with the facts file's values: an id a step cannot write, one listed twice,
    a value that is not a number and a unit, an empty reason."""
    seen: dict[str, int] = {}
    for i, fact in enumerate(facts.values):
        where = f"values[{i}]"

        def at(field: str, problem: str, fix: str, where: str = where) -> Diagnostic:
            return Diagnostic(facts.path, *facts.positions.at(f"{where}.{field}"), f"{where}.{field}: {problem}", fix)

        if _FACT_ID.fullmatch(fact.id) is None:
            yield at("id", f"'{fact.id[:40]}' is not an id", "lower case, digits and '_', e.g. flop_per_fma")
        elif fact.id in seen:
            yield at("id", f"'{fact.id}' is listed twice (also values[{seen[fact.id]}])", "keep one entry")
        seen.setdefault(fact.id, i)
        try:
            read_quantity(fact.value)
        except ValueError as exc:
            yield at("value", str(exc), "write a number and its unit, e.g. 2 FLOP/clock/lane")
        if not fact.reason.strip():
            yield at("reason", "is empty", "say why it holds on every GPU, e.g. what the programming model defines")


_ALONE = "worked(...) must stand alone, with a blank line before and after it: the page puts a list of steps there"
_ONLY_BODY = "worked(...) is allowed only in the body: a highlight is a sentence or two"


def _in(t: LoadedTerm, where: str, text: str, offset: int, message: str, hint: str) -> Diagnostic:
    """A diagnostic at an offset into a Markdown field's text."""
    line, col = position(text, offset)
    return Diagnostic(t.path, *field_position(t, where, line, col), f"{where}: {message}", hint)


def _at(t: LoadedTerm, where: str, message: str, hint: str) -> Diagnostic:
    line, col = field_position(t, where, 1, 1)
    return Diagnostic(t.path, line, col, f"{where}: {message}", hint)
