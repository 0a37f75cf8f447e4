"""The claims a new run would break: every term's claims judged with the run in place of the
node's committed file, on that node (cudagloss.check.claims judges them as the site does).

A claim the new run breaks fails `make verify`, and the run is written beside the committed
file for review, as a changed discrete value is: the prose that drew the conclusion must be
read again before the numbers under it change.
"""

from __future__ import annotations

from pathlib import Path

from cudagloss.check.claims import judge
from cudagloss.load.measurements import load_measurements
from cudagloss.load.terms import load_term, term_files
from cudagloss.model.claims import ClaimError, parse, references
from cudagloss.model.measurement import Measurement
from cudagloss.model.measurements import CitationError, ExperimentRecord, NodeRun
from cudagloss.model.term import Term
from verifier.experiment import ROOT


def readable_terms(terms: Path) -> list[Term]:
    """The terms whose files load; one that does not is for `make check` to report."""
    loaded = [load_term(path, ROOT)[0] for path in term_files(terms)] if terms.is_dir() else []
    return [t.term for t in loaded if t is not None]


def broken_claims(new: Measurement, folder: Path, terms: list[Term]) -> list[str]:
    """'<term>: <claim> does not hold: <values>' for each claim that names new's experiment
    and fails on new's node once new replaces the node's committed run."""
    if new.status != "ok":
        return []
    measurements, _ = load_measurements(folder)  # an unreadable file is make check's to report
    record = measurements.experiments.setdefault(new.experiment, ExperimentRecord(new.experiment, None))
    record.runs = [r for r in record.runs if r.node != new.node] + [NodeRun(new.node, new)]
    out = []
    for term in terms:
        for claim in term.claims:
            try:
                if new.experiment not in {e for e, _ in references(parse(claim.holds))}:
                    continue
                verdict = judge(term, claim, measurements)
            except (ClaimError, CitationError):  # a claim that cannot be judged is make check's error
                continue
            out += [
                f"{term.name}: '{claim.says}' does not hold: {n.explanation}"
                for n in verdict.failed
                if n.node == new.node
            ]
    return out
