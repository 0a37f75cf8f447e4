"""What a re-run changed: each new result against the node's committed file, before it is replaced.

A discrete result (text, a truth value, a count) is SAME or CHANGED; a timing (a result with
raw samples) is SAME, FASTER or SLOWER by the rule in cudagloss.model.compare (a duration is
faster when lower, a rate such as GB/s when higher; another sampled value is LOWER or HIGHER); a number computed
from samples (a min, a max, a ratio of medians) is DERIVED: shown, not tested, as noise moves
it; a value recorded as information (method 'info') is INFO, shown and never CHANGED.
Results added or removed are listed, and so is every change in the node's environment
(GPU, driver, CUDA, NVRTC, cuda-python): a value that drifted with it is then explained.
A GPU time that moved though the recipe did not is named as an undeclared method change, or
as the environment's doing where it drifted (merge.undeclared): a report, not a failure.

A CHANGED discrete value fails the run, and the new file is written beside the committed one
as <node>.json.new for review, never over it (the site reads only names ending in .json).
A good run's file keeps history: each value's first_measured carries over while re-runs
confirm it, and the environment that changed is its drift.
"""

from __future__ import annotations

import errno
import json
import math
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from cudagloss.errors import UsageError
from cudagloss.files.atomic import WriteFailed, write_text_atomic
from cudagloss.files.inside import refuse_links
from cudagloss.merge.runs import keep_previous, prune
from cudagloss.merge.undeclared import Undeclared, counts, undeclared
from cudagloss.model.cards import UNKNOWN, card_of
from cudagloss.model.compare import RULE, TIME_UNITS, compare_timings, is_rate
from cudagloss.model.measurement import (
    Drift,
    Measurement,
    MeasurementError,
    Result,
    Value,
    parse_measurement,
    read_measurement_text,
    record,
)
from cudagloss.model.urls import measurement_path, review_path

ENVIRONMENT = (
    "gpu_name",
    "driver_version",
    "cuda_driver_version",
    "nvrtc_version",
    "nvrtc_build",
    "cuda_bindings_version",
    "cpu",
    "cpu_count",
)
"""The provenance whose change can move a result without the experiment's code changing."""
SHOWN_MAX = 100
"""Characters of a value a text report shows (a JIT log can be long); JSON has it all."""

Verdict = Literal["SAME", "CHANGED", "FASTER", "SLOWER", "HIGHER", "LOWER", "DERIVED", "INFO", "ADDED", "REMOVED"]
CONFIRMED = ("SAME",)
"""The verdict that keeps a value's first_measured: the run measured it again, as it was (a
derived number that moved, a min or a max, is measured anew)."""


@dataclass(frozen=True)
class Row:
    """One result's verdict; test says how a timing's was reached."""

    name: str
    verdict: Verdict
    old: Value = None
    new: Value = None
    unit: str = ""
    test: dict[str, Any] | None = None


@dataclass(frozen=True)
class Rerun:
    """The report for one experiment on one node. compared_with is the committed file, or
    None on the node's first run; unreadable says why a committed file could not be compared.
    previous is that file, read (its history carries over; the report leaves it out)."""

    experiment: str
    node: str
    compared_with: str | None
    environment: list[dict[str, Any]] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    unreadable: str | None = None
    previous: Measurement | None = field(default=None, repr=False)
    broken_claims: list[str] = field(default_factory=list)
    """Terms' claims that do not hold on this node with the new run (verifier/claims.py)."""
    claims_judged: bool = False
    """Whether the terms' claims were judged at all (they need PyYAML to be read)."""
    undeclared: Undeclared | None = None
    """GPU times that moved under an unchanged recipe (merge.undeclared, issue 40)."""

    @property
    def changed(self) -> bool:
        return any(row.verdict == "CHANGED" for row in self.rows)

    @property
    def needs_review(self) -> bool:
        """A changed discrete value or a broken claim: the run goes beside the committed file."""
        return self.changed or bool(self.broken_claims)

    def to_dict(self) -> dict[str, Any]:
        report = asdict(replace(self, previous=None))
        del report["previous"]
        report["undeclared"] = self.undeclared.to_dict() if self.undeclared else None
        return {**report, "first_run": self.compared_with is None, "changed": self.changed}

    def lines(self) -> list[str]:
        """The text report, indented under the runner's line for the experiment."""
        claims = [f"    BROKEN claim: {c}" for c in self.broken_claims]
        if self.compared_with is None:
            return ["    first run on this node: nothing to compare with", *claims]
        if self.unreadable is not None:
            return [f"    not compared: {self.compared_with} cannot be read ({self.unreadable})", *claims]
        out = [f"    compared with {self.compared_with}:"]
        out += [f"      environment  {e['name']} {e['old']} -> {e['new']}" for e in self.environment]
        out += [f"      {row.verdict:<8} {row.name} {_describe(row)}".rstrip() for row in self.rows]
        return out + ([f"    {self.undeclared.line()}"] if self.undeclared else []) + claims


def _show(value: Value, unit: str) -> str:
    text = json.dumps(value, ensure_ascii=False)
    text = text if len(text) <= SHOWN_MAX else text[: SHOWN_MAX - 1] + "…"
    return f"{text} {unit}" if unit else text


def _describe(row: Row) -> str:
    if row.verdict == "ADDED":
        return f"= {_show(row.new, row.unit)}"
    if row.verdict == "REMOVED":
        return f"(was {_show(row.old, row.unit)})"
    if row.verdict == "SAME" and row.test is None:
        return _show(row.new, row.unit)
    shown = f"{_show(row.old, row.unit)} -> {_show(row.new, row.unit)}"
    if row.test is None:
        return shown
    if "measured" in row.test:
        before, after = (m or "no method" for m in row.test["measured"])
        return f"{shown} (measured another way: {before} -> {after})"
    if "unit" in row.test:
        before, after = (u or "no unit" for u in row.test["unit"])
        return f"{_show(row.old, row.test['unit'][0])} -> {_show(row.new, row.unit)} (unit {before} -> {after})"
    change = "" if row.test["change"] is None else f"{row.test['change']:+.1%}, "
    t = row.test
    return f"{shown} ({change}Mann-Whitney p={t['p']:.3g} {t['method']}, {t['n_old']} vs {t['n_new']} samples)"


def _direction(verdict: Verdict, lower: bool, unit: str) -> Verdict:
    """The rule's verdict in the unit's terms: a duration is faster when lower, a rate (GB/s)
    when higher, and any other sampled value is only lower or higher."""
    if verdict == "SAME" or unit in TIME_UNITS:
        return verdict
    if is_rate(unit):
        return "SLOWER" if lower else "FASTER"
    return "LOWER" if lower else "HIGHER"


def compare_result(old: Result, new: Result) -> Row:
    """One result's row: a timing when both runs kept samples, discrete when either is counted
    (Result.counted: text, a truth value, an integer read or counted), otherwise a number measured or derived; INFO, not
    compared, where both runs recorded it as information (method 'info': cache file names). A
    result measured another way than before is CHANGED: so a file cannot turn a fact into
    information (and its change past review) by saying so; so is one in another unit."""
    if old.method != new.method:
        return Row(new.name, "CHANGED", old.value, new.value, new.unit, {"measured": [old.method, new.method]})
    if old.unit != new.unit:  # another quantity, or the same in another scale: never compared as equals
        return Row(new.name, "CHANGED", old.value, new.value, new.unit, {"unit": [old.unit, new.unit]})
    if new.method == "info":
        return Row(new.name, "SAME" if old.value == new.value else "INFO", old.value, new.value, new.unit)
    if old.samples and new.samples:
        c = compare_timings(old.samples, new.samples)
        test = {
            "p": c.test.p,
            "method": c.test.method,
            "u": c.test.u,
            "old_median": c.old_median,
            "new_median": c.new_median,
            "change": c.change if math.isfinite(c.change) else None,
            "n_old": len(old.samples),
            "n_new": len(new.samples),
        }
        return Row(
            new.name, _direction(c.verdict, c.new_median < c.old_median, new.unit), old.value, new.value, new.unit, test
        )
    if old.counted or new.counted:
        same = type(old.value) is type(new.value) and old.value == new.value and old.unit == new.unit
        return Row(new.name, "SAME" if same else "CHANGED", old.value, new.value, new.unit)
    return Row(new.name, "SAME" if old.value == new.value else "DERIVED", old.value, new.value, new.unit)


def compare(old: Measurement, new: Measurement, compared_with: str) -> Rerun:
    """The report on new against old, the committed measurement of the same experiment and node."""
    environment = [
        {"name": key, "old": old.provenance.get(key), "new": new.provenance.get(key)}
        for key in ENVIRONMENT
        if key in old.provenance
        and old.provenance.get(key) != new.provenance.get(key)  # unrecorded: unknown, not changed
    ]
    rows = [
        compare_result(before, r) if (before := old.result(r.name)) else Row(r.name, "ADDED", new=r.value, unit=r.unit)
        for r in new.results
    ]
    rows += [Row(r.name, "REMOVED", old=r.value, unit=r.unit) for r in old.results if new.result(r.name) is None]
    moved = undeclared(old, new, rows, (str(e["name"]) for e in environment))
    return Rerun(new.experiment, new.node, compared_with, environment, rows, previous=old, undeclared=moved)


def against_committed(new: Measurement, folder: Path) -> Rerun:
    """The report on new against the node's committed file in folder, if there is one. A file of
    another card under the node's name is never compared (a UsageError: make verify and collect
    refuse such a run before, with their own hint), so another card is never CHANGED."""
    path = measurement_path(folder, new.experiment, new.node)
    shown = path.as_posix()
    if not path.exists() and not path.is_symlink():
        return Rerun(new.experiment, new.node, None)
    try:
        old = parse_measurement(read_measurement_text(path, shown), shown)
    except MeasurementError as exc:
        return Rerun(new.experiment, new.node, shown, unreadable=exc.message)
    before, now = card_of(old.provenance), card_of(new.provenance)
    if UNKNOWN not in (before, now) and before != now:
        raise UsageError(
            f"node '{new.node}' is card {before} ({shown}); this run is card {now}: "
            "a node name names one card, and a run is compared only with its own card's"
        )
    return compare(old, new, shown)


def with_history(new: Measurement, rerun: Rerun) -> Measurement:
    """new with its history: a value the run confirmed keeps its first_measured (from an old
    version 1 file, that file's day), any other value is first measured today; drift is the
    environment that changed since the previous file."""
    old = rerun.previous
    confirmed = {row.name for row in rerun.rows if row.verdict in CONFIRMED}
    since = {r.name: r.first_measured or old.recorded_on for r in old.results if r.name in confirmed} if old else {}
    # The earlier day where both are known: a value is never first measured after the run that measured it.
    results = [
        replace(r, first_measured=min(filter(None, (since.get(r.name), new.recorded_on)), default=""))
        for r in new.results
    ]
    drift = [Drift(e["name"], e["old"], e["new"]) for e in rerun.environment]
    return replace(new, results=results, drift=drift)


def write(new: Measurement, folder: Path, rerun: Rerun) -> Path:
    """Record new as record() does, unless a discrete result changed or a claim broke: then write it beside the
    committed file for review (checked by the same rules). A good run that changed nothing
    clears an older review file, as record() clears an older failure. A good run is written
    with its history (with_history); a failed one without. A good run that replaces the node's
    good file keeps the run it replaces as an earlier run, and drops stale and surplus earlier
    runs (merge.runs); a run for review keeps nothing."""
    if new.status == "ok":
        new = with_history(new, rerun)
    review = review_path(folder, new.experiment, new.node)
    refuse_links(review)  # it is written or removed below: never through a committed link
    if review.exists() and not review.is_file():  # a committed folder: unlink() and replace() would raise
        raise WriteFailed(errno.EISDIR, "not a regular file; left as it is", str(review))
    if not (rerun.needs_review and new.status == "ok"):
        kept = keep_previous(new, folder)
        try:
            path = record(new, folder)
        except BaseException:
            kept.undo()
            raise
        if path == measurement_path(folder, new.experiment, new.node):
            review.unlink(missing_ok=True)
            prune(new, folder)
        return path
    text = new.to_json()
    parse_measurement(text, review.as_posix())
    review.parent.mkdir(parents=True, exist_ok=True)  # a first run whose claim broke has no folder yet
    write_text_atomic(review, text)
    return review


def report_json(reruns: list[Rerun]) -> str:
    """`make verify ARGS="--format json"`: every experiment's report and the rule its timings were judged by."""
    report = {
        "timing_rule": RULE,
        "undeclared": counts(r.undeclared for r in reruns),
        "experiments": [r.to_dict() for r in reruns],
    }
    return json.dumps(report, indent=2, ensure_ascii=False)
