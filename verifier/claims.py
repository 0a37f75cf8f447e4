"""The claims a new run would break: every term's claims judged with the run in place of the
node's committed file, on that node (cudagloss.check.claims judges them as the site does).

A claim the new run breaks fails `make verify`, and the run is written beside the committed
file for review, as a changed discrete value is: the prose that drew the conclusion must be
read again before the numbers under it change. A claim that could be judged on the committed
files but no longer can with the new run (a value it names was dropped, or changed type) is
broken too: make check would refuse the run otherwise.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from cudagloss.load.measurements import load_measurements
from cudagloss.load.terms import load_term, term_files
from cudagloss.model.claims import ClaimError, parse, references
from cudagloss.model.measurement import Measurement
from cudagloss.model.measurements import CitationError, ExperimentRecord, MeasurementSet, NodeRun
from cudagloss.model.term import Claim, Term
from cudagloss.model.verdicts import judge
from verifier.experiment import ROOT


def readable_terms(terms: Path) -> tuple[list[Term], int]:
    """The terms whose files load, and how many do not (make check reports those)."""
    loaded = [load_term(path, ROOT)[0] for path in term_files(terms)] if terms.is_dir() else []
    return [t.term for t in loaded if t is not None], sum(t is None for t in loaded)


def _names(claim: Claim, experiment: str) -> bool:
    try:
        return experiment in {e for e, _ in references(parse(claim.holds))}
    except ClaimError:  # a condition that cannot be read is make check's error
        return False


def _failures(term: Term, claim: Claim, measurements: MeasurementSet, node: str) -> list[str] | None:
    """Why the claim fails on node; None when it cannot be judged with these measurements."""
    try:
        verdict = judge(term, claim, measurements)
    except (ClaimError, CitationError):
        return None
    return [n.explanation for n in verdict.failed if n.node == node]


def broken_claims(new: Measurement, folder: Path, terms: list[Term]) -> list[str]:
    """'<term>: <claim> does not hold: <values>' for each claim that names new's experiment
    and fails on new's node once new replaces the node's committed run."""
    if new.status != "ok":
        return []
    committed, _ = load_measurements(folder)  # an unreadable file is make check's to report
    old = committed.get(new.experiment) or ExperimentRecord(new.experiment, None)
    runs = [r for r in old.runs if r.node != new.node] + [NodeRun(new.node, new)]
    with_new = replace(committed, experiments={**committed.experiments, new.experiment: replace(old, runs=runs)})
    out = []
    for term in terms:
        for claim in (c for c in term.claims if _names(c, new.experiment)):
            failures = _failures(term, claim, with_new, new.node)
            if failures is None:
                if _failures(term, claim, committed, new.node) is not None:
                    out.append(f"{term.name}: '{claim.says}' cannot be judged on the new run (make check says why)")
                continue
            out += [f"{term.name}: '{claim.says}' does not hold: {why}" for why in failures]
    return out
