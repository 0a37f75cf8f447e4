"""The measurements of a glossary, grouped by experiment and node, and what a citation of
one of their values resolves to.

With the verifier's catalog the set also knows which experiments exist and whether each
file was made by the experiment's code as it is now; a file made by older code is stale.
Reading the folder is the load stage's work (cudagloss.load.measurements).
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from cudagloss.errors import did_you_mean
from cudagloss.model.display import verify_command
from cudagloss.model.measurement import ExperimentInfo, Measurement, Result
from cudagloss.model.refs import Ref
from cudagloss.model.term import Term
from cudagloss.model.urls import MEASUREMENTS_DIR


@dataclass(frozen=True)
class NodeRun:
    """One node's measurement of one experiment: the last good run, and a failed one after it."""

    node: str
    good: Measurement | None
    good_path: str = ""
    failed: Measurement | None = None
    stale: bool = False

    @property
    def gpu(self) -> str:
        m = self.good or self.failed
        return str(m.provenance.get("gpu_name", "unknown GPU")) if m else "unknown GPU"

    @property
    def recorded_on(self) -> str:
        """The day the good run was recorded (YYYY-MM-DD), or '' when there is none."""
        if self.good is None:
            return ""
        stamp = str(self.good.provenance.get("recorded_at", ""))
        try:
            return dt.datetime.fromisoformat(stamp).date().isoformat()
        except ValueError:
            return stamp[:10]


@dataclass
class ExperimentRecord:
    """Everything measured for one experiment, one NodeRun per node, in node order."""

    id: str
    info: ExperimentInfo | None
    runs: list[NodeRun] = field(default_factory=list)

    @property
    def purpose(self) -> str:
        if self.info:
            return self.info.purpose
        good = next((r.good for r in self.runs if r.good), None)
        return good.purpose if good else ""

    @property
    def measured(self) -> list[NodeRun]:
        """The nodes with a good run."""
        return [r for r in self.runs if r.good is not None]

    def result_names(self) -> list[str]:
        names: dict[str, None] = {}
        for run in self.measured:
            assert run.good is not None
            names.update((r.name, None) for r in run.good.results)
        return list(names)

    def values(self, name: str) -> list[tuple[NodeRun, Result | None]]:
        """The named result on every measured node (None where that node lacks it)."""
        out = []
        for run in self.measured:
            assert run.good is not None
            out.append((run, run.good.result(name)))
        return out


@dataclass
class MeasurementSet:
    """All experiments: those in the catalog (measured or not) and any others found on disk."""

    folder: Path
    experiments: dict[str, ExperimentRecord] = field(default_factory=dict)
    catalog: dict[str, ExperimentInfo] | None = None
    """None when no verifier catalog was given: ids and staleness are then not checked."""

    def __iter__(self) -> Iterator[ExperimentRecord]:
        return iter(self.experiments.values())

    def get(self, experiment: str) -> ExperimentRecord | None:
        return self.experiments.get(experiment)

    def known(self, experiment: str) -> bool:
        return experiment in self.catalog if self.catalog is not None else experiment in self.experiments

    @functools.cached_property
    def fingerprint(self) -> str:
        """A digest of everything loaded, so rendered text can be memoised on it."""
        return hashlib.sha256(repr((self.experiments, self.catalog)).encode()).hexdigest()


class CitationError(LookupError):
    """A value a body asks for that cannot be shown; the hint says how to fix it."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message, self.hint = message, hint


def resolve(
    term: Term, measurements: MeasurementSet | None, experiment: str, name: str, call: str = ""
) -> ExperimentRecord:
    """The record that holds `measured(experiment, name)` of term's body; raises
    CitationError when the term does not cite the experiment, nothing was measured, or
    no node recorded that result. The check stage and the page both ask this."""
    cited = [c.experiment for c in term.measurements]
    call = call or f"measured('{experiment}', '{name}')"  # how the asker names the value in messages
    if experiment not in cited:
        raise CitationError(
            f"{call}: the term does not cite experiment '{experiment}'{did_you_mean(experiment, cited)}",
            f"add '- experiment: {experiment}' under measurements:",
        )
    record = measurements.get(experiment) if measurements else None
    if record is None or not record.measured:
        raise CitationError(
            f"{call}: experiment '{experiment}' has not been measured on any node",
            f"run `{verify_command(experiment)}` on a GPU node and commit {MEASUREMENTS_DIR}/{experiment}/<node>.json",
        )
    names = record.result_names()
    if name not in names:
        raise CitationError(
            f"{call}: experiment '{experiment}' has no result '{name}'{did_you_mean(name, names)}",
            f"its results are listed on its measurement page; if the experiment now makes '{name}', "
            f"run `{verify_command(experiment)}` on a GPU node",
        )
    return record


"""A value named by (experiment, result)."""


@dataclass(frozen=True)
class NodeValues:
    """The values some refs name, as one node measured them (claims and comparisons are judged
    per node: values from two GPUs are never mixed); stale when a file they come from is."""

    node: str
    gpu: str
    values: dict[Ref, Result]
    stale: bool = False


def by_node(measurements: MeasurementSet | None, refs: list[Ref]) -> list[NodeValues]:
    """Each node whose good runs hold every ref with a value, in the order nodes are first
    met; a node that lacks one of them is left out."""
    runs: dict[str, dict[str, NodeRun]] = {}
    for experiment in dict.fromkeys(e for e, _ in refs):
        record = measurements.get(experiment) if measurements else None
        for run in record.measured if record else []:
            runs.setdefault(run.node, {})[experiment] = run
    out = []
    for node, by_experiment in runs.items():
        values: dict[Ref, Result] = {}
        for experiment, name in refs:
            found = by_experiment.get(experiment)
            result = found.good.result(name) if found is not None and found.good is not None else None
            if result is None or result.value is None:
                break
            values[(experiment, name)] = result
        else:
            stale = any(by_experiment[e].stale for e, _ in refs)
            out.append(NodeValues(node, next(iter(by_experiment.values())).gpu, values, stale))
    return out


def resolve_pair(term: Term, measurements: MeasurementSet | None, first: Ref, second: Ref) -> list[NodeValues]:
    """The nodes on which `compare(first, second)` of term's body can be judged; raises
    CitationError when either value cannot be cited, when they are not timings with raw samples
    in one unit, or when no node measured both."""
    call = f"compare('{'.'.join(first)}', '{'.'.join(second)}')"
    for experiment, name in (first, second):
        resolve(term, measurements, experiment, name, call)
    if first == second:
        raise CitationError(f"{call}: compares a value with itself", "name two different values")
    nodes = by_node(measurements, [first, second])
    if not nodes:
        raise CitationError(f"{call}: no node measured both values", "compare values measured on the same node")
    for n in nodes:
        a, b = n.values[first], n.values[second]
        for ref, r in ((first, a), (second, b)):
            if len(r.samples) < 2 or not isinstance(r.value, int | float) or isinstance(r.value, bool):
                raise CitationError(
                    f"{call}: '{'.'.join(ref)}' on node '{n.node}' is not a timing with raw samples",
                    "compare() judges the raw samples of two timings; cite other values with measured()",
                )
        if a.unit != b.unit:
            raise CitationError(
                f"{call}: the values are in different units on node '{n.node}' "
                f"({a.unit or 'none'}, {b.unit or 'none'})",
                "compare values of one kind",
            )
    return nodes
