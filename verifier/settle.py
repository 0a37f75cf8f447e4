"""Settling a run: compare it with the node's committed file, judge the terms' claims with it,
write it where it belongs, and say so.

This is the part of `make verify` that reports rather than measures, so it lives outside the
code every experiment's hash covers (verifier/registry.py SHARED): changing how a run is
reported does not make the committed numbers stale.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from cudagloss.merge.identity import refuse_another_card
from cudagloss.model.measurement import Measurement, MeasurementError
from cudagloss.model.term import Term
from verifier.identity import with_host
from verifier.rerun import Rerun, against_committed, write

Say = Callable[[str], object]


def claiming_terms(terms: Path, say: Say) -> list[Term] | None:
    """The terms whose claims each run is judged against; None, said, where they cannot be
    read at all (no PyYAML); a term file that does not load is counted and left to make check."""
    try:
        from verifier.claims import readable_terms
    except ImportError as exc:
        say(f"claims not judged: {exc.name} is not installed (make check judges them)")
        return None
    loaded, unreadable = readable_terms(terms)
    if unreadable:
        say(f"claims of {unreadable} term file(s) not judged: they do not load (make check says why)")
    return loaded


def settle(measurement: Measurement, out: Path, say: Say, terms: list[Term] | None = None) -> Rerun | None:
    """Compare a run with the node's committed file and the terms' claims, write it where it
    belongs (verifier.rerun.write) and say its gates and the report; None when the format
    refuses it and nothing was written. terms None: claims were not judged (the report says so).
    The run records its host's opaque identity (verifier.identity) before it is compared or written.
    A run under a name committed for another card, or of a card committed under another name,
    stops the whole run: a UsageError, one line, nothing written (cudagloss.merge.identity)."""
    measurement = with_host(measurement)
    refuse_another_card(measurement, out)
    rerun = against_committed(measurement, out)
    if terms is not None:
        from verifier.claims import broken_claims

        rerun = replace(rerun, broken_claims=broken_claims(measurement, out, terms), claims_judged=True)
    try:
        path = write(measurement, out, rerun)
    except MeasurementError as exc:  # a result the format refuses (NaN, a bad name)
        say(f"    not recorded: {exc.message}")
        return None
    for gate in measurement.gates:
        say(f"    {'pass' if gate.passed else 'FAIL'}  {gate.name}  {gate.detail}".rstrip())
    for line in rerun.lines():
        say(line)
    failed = "" if measurement.status == "ok" else "  FAILED"
    changed = "  CHANGED: a discrete result differs; review it beside the committed file" if rerun.changed else ""
    if rerun.broken_claims:
        changed += "  BROKEN: a claim does not hold; review the run beside the committed file"
    say(f"    -> {path} ({measurement.provenance['duration_s']} s){failed}{changed}")
    return rerun


def passed(measurement: Measurement, rerun: Rerun) -> bool:
    """A run passes when its gates did, no discrete result changed from the committed file and
    every claim on it still holds."""
    return measurement.status == "ok" and not rerun.needs_review
