"""A term's claims, judged against the measurements: on which nodes each holds, fails, or was never measured.

A claim (cudagloss.model.term.Claim) says in words a conclusion the body draws from measured
values, and states in `holds` the condition that makes it true (the language of
cudagloss.model.claims: parsed, never evaluated as code). It is judged on every node whose
good runs hold all the values it names, each node on its own values. A claim that fails on
any node is an author error naming the node and the values; one over values that no node
has measured is unverified, a warning and a mark on the page, never a pass. The page, `cudagloss
check`, the build and `make verify` all ask judge().
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from cudagloss.check.markdown_fields import field_position
from cudagloss.errors import Diagnostic
from cudagloss.model.claims import ClaimError, Value, evaluate, explain, parse, references
from cudagloss.model.corpus import LoadedTerm
from cudagloss.model.measurements import CitationError, MeasurementSet, by_node, resolve, verify_command
from cudagloss.model.term import Claim, Term


@dataclass(frozen=True)
class NodeVerdict:
    """The claim on one node: whether it holds, and the values that decided it."""

    node: str
    gpu: str
    holds: bool
    explanation: str


@dataclass(frozen=True)
class ClaimVerdict:
    """A claim judged on every node that measured its values; unverified says why it could
    not be judged anywhere ('' when it was), and unmeasured lists the experiments to run."""

    claim: Claim
    nodes: tuple[NodeVerdict, ...]
    unverified: str = ""
    unmeasured: tuple[str, ...] = ()

    @property
    def failed(self) -> tuple[NodeVerdict, ...]:
        return tuple(n for n in self.nodes if not n.holds)

    @property
    def verified(self) -> bool:
        return not self.unverified


def judge(term: Term, claim: Claim, measurements: MeasurementSet | None) -> ClaimVerdict:
    """The claim on every node that measured its values; raises ClaimError for a condition
    that cannot be read or typed, CitationError for a value the term cannot cite."""
    tree = parse(claim.holds)
    refs = references(tree)
    unmeasured = []
    for experiment, name in refs:
        try:
            resolve(term, measurements, experiment, name)
        except CitationError as exc:
            record = measurements.get(experiment) if measurements else None
            cited = any(c.experiment == experiment for c in term.measurements)
            if not cited or (record is not None and record.measured):
                named = exc.message.replace(f"measured('{experiment}', '{name}')", f"{experiment}.{name}", 1)
                raise CitationError(named, exc.hint) from None
            unmeasured.append((experiment, name))
    if unmeasured:
        reason = "no node has measured " + ", ".join(f"{e}.{r}" for e, r in unmeasured)
        return ClaimVerdict(claim, (), reason, tuple(dict.fromkeys(e for e, _ in unmeasured)))
    verdicts = []
    for n in by_node(measurements, refs):
        values = {ref: Value(r.value, r.unit, r.samples) for ref, r in n.values.items() if r.value is not None}

        def lookup(experiment: str, name: str, values: dict[tuple[str, str], Value] = values) -> Value:
            return values[(experiment, name)]

        verdicts.append(NodeVerdict(n.node, n.gpu, evaluate(tree, lookup), explain(tree, lookup)))
    if not verdicts:  # each value was measured, but never all of them on one node
        experiments = tuple(dict.fromkeys(e for e, _ in refs))
        return ClaimVerdict(claim, (), "no node has measured all of its values", experiments)
    return ClaimVerdict(claim, tuple(verdicts))


def claim_diagnostics(t: LoadedTerm, measurements: MeasurementSet | None) -> Iterator[Diagnostic]:
    """Every claim of t that cannot be read, cites what the term does not, or fails on a
    node (errors), and every one nobody could verify yet (warnings)."""
    for i, claim in enumerate(t.term.claims):
        where = f"claims[{i}]"
        if not claim.says.strip():
            yield _at(t, f"{where}.says", "is empty", "say the conclusion in words, as the body draws it")
        try:
            verdict = judge(t.term, claim, measurements)
        except ClaimError as exc:
            yield _at(t, f"{where}.holds", f"{exc.message} (at character {exc.offset + 1})", exc.hint)
            continue
        except CitationError as exc:
            yield _at(t, f"{where}.holds", exc.message, exc.hint)
            continue
        if measurements is None:
            continue
        for n in verdict.failed:
            yield _at(
                t,
                where,
                f"'{claim.says}' does not hold on node '{n.node}' ({n.gpu}): {n.explanation}",
                "the measurements no longer support the prose: correct the body and the claim together",
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


def _at(t: LoadedTerm, where: str, message: str, hint: str) -> Diagnostic:
    line, col = field_position(t, where, 1, 1)
    return Diagnostic(t.path, line, col, f"{where}: {message}", hint)
