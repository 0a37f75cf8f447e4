"""A term's claims as the check stage reports them: a condition that cannot be read, a value the
term cannot cite, a claim that fails on a node (errors, naming the node and the values), one
that says what another says, text in a condition that types a GPU number, and one that nobody
could verify yet (a warning, never a pass). Judging is cudagloss.model.verdicts'.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from cudagloss.check.markdown_fields import field_position
from cudagloss.check.typed_numbers import find
from cudagloss.errors import Diagnostic, shown
from cudagloss.model.claims import ClaimError, Expr, parse
from cudagloss.model.corpus import LoadedTerm
from cudagloss.model.display import verify_command
from cudagloss.model.falsifiable import cannot_fail
from cudagloss.model.measurements import CitationError, MeasurementSet
from cudagloss.model.verdicts import judge


def claim_diagnostics(t: LoadedTerm, measurements: MeasurementSet | None) -> Iterator[Diagnostic]:
    """Every claim of t that cannot be read, cites what the term does not, fails on a node or
    says what another says (errors), and every one nobody could verify yet (warnings)."""
    first: dict[str, int] = {}
    for i, claim in enumerate(t.term.claims):
        where = f"claims[{i}]"
        if not claim.says.strip():
            yield _at(t, f"{where}.says", "is empty", "say the conclusion in words, as the body draws it")
        elif (same := first.setdefault(" ".join(claim.says.casefold().split()), i)) != i:
            hint = "a page shows each conclusion once: join the conditions with and, or say how they differ"
            yield _at(t, f"{where}.says", f"says what claims[{same}] says", hint)
        try:
            verdict = judge(t.term, claim, measurements)
        except ClaimError as exc:
            yield _at(t, f"{where}.holds", f"{exc.message} (at character {exc.offset + 1})", exc.hint)
            continue
        except CitationError as exc:
            yield _at(t, f"{where}.holds", exc.message, exc.hint)
            continue
        for text in _texts(parse(claim.holds)):  # shown on the page, as prose is: no typed GPU numbers either
            for found in find(" ".join(text.replace("`", " ").split())):  # as prose, not code
                message = f"the text '{shown(text, 60)}' states '{found.text}', a number about a GPU typed by hand"
                yield _at(t, f"{where}.holds", message, "compare measured values, not text that states them")
        if measurements is None:
            continue
        if verdict.nodes and not verdict.failed and cannot_fail(parse(claim.holds), measurements):
            yield _at(
                t,
                f"{where}.holds",
                "cannot fail: it holds whatever values are measured (the same value on both sides, a "
                "product with zero, or a condition and its opposite), so it would check nothing",
                "state what the measured values show, so that other values would make it false",
            )
        for n in verdict.failed:
            yield _at(
                t,
                where,
                f"'{claim.says}' does not hold on node '{n.node}' ({n.gpu}): {n.explanation}",
                "the measurements no longer support the prose: correct the body and the claim together",
            )
        for node, lacks in verdict.skipped if verdict.nodes else ():
            yield replace(
                _at(t, where, f"'{claim.says}' is not judged on node '{node}': it {lacks}", "re-run it there"),
                warning=True,
            )
        if verdict.unverified:
            yield replace(
                _at(
                    t,
                    where,
                    f"'{claim.says}' is not verified: {verdict.unverified}",
                    "; ".join(f"run `{verify_command(e)}` on a GPU node" for e in verdict.unmeasured),
                ),
                warning=True,
            )


def _texts(tree: Expr) -> Iterator[str]:
    """The text values written in a condition."""
    if tree.kind == "value" and isinstance(tree.value, str):
        yield tree.value
    for part in tree.parts:
        yield from _texts(part)


def _at(t: LoadedTerm, where: str, message: str, hint: str) -> Diagnostic:
    line, col = field_position(t, where, 1, 1)
    return Diagnostic(t.path, line, col, f"{where}: {message}", hint)
