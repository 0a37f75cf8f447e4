"""A term's claims judged against the measurements: on which nodes each holds, fails, cannot be
judged, or was never measured.

A claim (cudagloss.model.term.Claim) says in words a conclusion the body draws from measured
values, and states in `holds` the condition that makes it true (the language of
cudagloss.model.claims: parsed, never run as code). It is judged on every node whose good runs
hold all the values it names, each node on its own values; a node that measured some of them
but not all is listed as not judged, with what it lacks. A value must have one unit on every
node (a plain number in the condition means the same thing everywhere). The check stage, the
pages and `make verify` all ask judge().
"""

from __future__ import annotations

from dataclasses import dataclass

from cudagloss.model.claim_values import evaluate, explain
from cudagloss.model.claims import ClaimTypeError, Operand, parse, references
from cudagloss.model.measurements import CitationError, MeasurementSet, NodeValues, by_node, resolve
from cudagloss.model.refs import Ref
from cudagloss.model.term import Claim, Term

STALE = " (stale: made by an older recipe or summary)"


@dataclass(frozen=True)
class NodeVerdict:
    """The claim on one node: whether it holds, and the values that decided it (or why they
    could not: a value of another type there)."""

    node: str
    gpu: str
    holds: bool
    explanation: str
    stale: bool = False


@dataclass(frozen=True)
class ClaimVerdict:
    """A claim judged on every node that measured its values; unverified says why it could not
    be judged anywhere ('' when it was), unmeasured lists the experiments to run, and skipped
    the (node, what it lacks) of nodes that measured only some of its values."""

    claim: Claim
    nodes: tuple[NodeVerdict, ...]
    unverified: str = ""
    unmeasured: tuple[str, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()
    silent: tuple[str, ...] = ()
    """Nodes that ran the claim's experiments but recorded none of its values (neither judged nor
    skipped), so a reader counting the nodes on the page is told where the others went."""

    @property
    def failed(self) -> tuple[NodeVerdict, ...]:
        return tuple(n for n in self.nodes if not n.holds)


def _cited(term: Term, measurements: MeasurementSet | None, refs: list[Ref]) -> list[Ref]:
    """The refs no node has measured; CitationError for one the term cannot cite at all."""
    unmeasured = []
    for experiment, name in refs:
        try:
            resolve(term, measurements, experiment, name, f"{experiment}.{name}")
        except CitationError:
            record = measurements.get(experiment) if measurements else None
            cited = any(c.experiment == experiment for c in term.measurements)
            if not cited or (record is not None and record.measured):
                raise
            unmeasured.append((experiment, name))
    return unmeasured


def _one_unit(nodes: list[NodeValues], refs: list[Ref]) -> None:
    for ref in refs:
        units = {n.node: n.values[ref].unit for n in nodes}
        if len(set(units.values())) > 1:
            shown = ", ".join(f"{u or 'no unit'} on '{node}'" for node, u in units.items())
            raise CitationError(
                f"{'.'.join(ref)} is measured in different units ({shown})",
                "a condition's numbers mean one thing everywhere: re-run the experiment so its nodes agree",
            )


def _skipped(measurements: MeasurementSet | None, refs: list[Ref], judged: set[str]) -> list[tuple[str, str]]:
    """(node, the values it lacks) of each node that ran every experiment of refs and measured
    some of refs but not all (a stale or partial run: re-run it there). A node that recorded
    none of them with a value (a one-GPU host's pair results), or never ran one of the
    experiments (a new experiment not yet run across the fleet), is not one the claim is
    about: it is not judged here, and the page counts it among the silent nodes."""
    ran: dict[str, set[str]] = {}
    for experiment in dict.fromkeys(e for e, _ in refs):
        record = measurements.get(experiment) if measurements else None
        for run in record.measured if record else []:
            ran.setdefault(run.node, set()).add(experiment)
    needed = {e for e, _ in refs}
    have: dict[str, set[Ref]] = {}
    for experiment, name in refs:
        record = measurements.get(experiment) if measurements else None
        for run, result in record.values(name) if record else []:
            got = have.setdefault(run.node, set())
            if result is not None and result.value is not None:
                got.add((experiment, name))
    return [
        (node, "lacks " + ", ".join(".".join(ref) for ref in refs if ref not in got))
        for node, got in have.items()
        if got and node not in judged and ran.get(node, set()) >= needed
    ]


def judge(term: Term, claim: Claim, measurements: MeasurementSet | None) -> ClaimVerdict:
    """The claim on every node that measured its values; raises ClaimError for a condition that
    cannot be read or typed on any node, CitationError for a value the term cannot cite or that
    changes unit between nodes. A value of the wrong type on some nodes fails the claim there."""
    tree = parse(claim.holds)
    refs = references(tree)
    unmeasured = _cited(term, measurements, refs)
    if unmeasured:
        reason = "no card has measured " + ", ".join(f"{e}.{r}" for e, r in unmeasured)
        return ClaimVerdict(claim, (), reason, tuple(dict.fromkeys(e for e, _ in unmeasured)))
    nodes = by_node(measurements, refs)
    _one_unit(nodes, refs)
    verdicts, mistakes = [], []
    for n in nodes:
        values = {ref: Operand(r.value, r.unit, r.samples) for ref, r in n.values.items() if r.value is not None}

        def lookup(experiment: str, name: str, values: dict[Ref, Operand] = values) -> Operand:
            return values[(experiment, name)]

        stale = STALE if n.stale else ""
        try:
            verdicts.append(NodeVerdict(n.node, n.gpu, evaluate(tree, lookup), explain(tree, lookup) + stale, n.stale))
        except ClaimTypeError as exc:
            mistakes.append(exc)
            verdicts.append(NodeVerdict(n.node, n.gpu, False, f"cannot be judged here: {exc.message}{stale}", n.stale))
    if mistakes and len(mistakes) == len(nodes):  # wrong on every node: the condition's mistake, not a node's
        raise mistakes[0]
    judged = {card for n in nodes for card in n.cards}
    skipped = tuple(_skipped(measurements, refs, judged))
    seen = judged | {node for node, _ in skipped}
    records = [measurements.get(e) for e in dict.fromkeys(e for e, _ in refs)] if measurements else []
    silent = tuple(dict.fromkeys(run.node for r in records if r for run in r.measured if run.node not in seen))
    if not verdicts:  # each value was measured, but never all of them on one node
        experiments = tuple(dict.fromkeys(e for e, _ in refs))
        return ClaimVerdict(claim, (), "no card has measured all of its values", experiments, skipped)
    return ClaimVerdict(claim, tuple(verdicts), skipped=skipped, silent=silent)
