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
import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from cudagloss.errors import did_you_mean
from cudagloss.model.cards import card_of
from cudagloss.model.display import verify_command
from cudagloss.model.measurement import ExperimentInfo, Measurement, Result
from cudagloss.model.refs import Ref
from cudagloss.model.term import Term
from cudagloss.model.urls import MEASUREMENTS_DIR


@dataclass(frozen=True)
class NodeRun:
    """One node's measurement of one experiment: the last good run, the earlier good runs of
    the same card by the same code (oldest first), and a failed run after them. A node is one
    card (cudagloss.model.cards): its runs are runs, never other nodes."""

    node: str
    good: Measurement | None
    good_path: str = ""
    failed: Measurement | None = None
    stale: bool = False
    rederivable: bool = False
    """Stale only by its summary, with the raw samples to derive it again on the CPU (make rederive)."""
    summarised_before: bool = False
    """Made by today's recipe (what reached the GPU and how it was timed), summarised by older code,
    and without the raw samples to derive it again: not stale, as its numbers are what the GPU
    measured, but its page says so, and the card's next run summarises it with today's code."""
    earlier: tuple[Measurement, ...] = ()
    earlier_paths: tuple[str, ...] = ()
    failed_path: str = ""

    @property
    def card(self) -> str:
        """The UUID of the card behind every run of this node ('' where not recorded)."""
        m = self.good or self.failed
        return card_of(m.provenance) if m else ""

    @property
    def good_runs(self) -> tuple[Measurement, ...]:
        """Every good run of the card, oldest first, the latest last."""
        return (*self.earlier, self.good) if self.good is not None else ()

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
            f"{call}: experiment '{experiment}' has not been measured on any card",
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
    """The values some refs name, as one card measured them (claims and comparisons are judged
    per card: values from two GPU models are never mixed); stale when a file they come from is.
    Where no one card measured every value, one GPU model's cards together stand in, and node
    names them all ('h200-a + h200-b'); sources says which card measured each value."""

    node: str
    gpu: str
    values: dict[Ref, Result]
    stale: bool = False
    sources: dict[Ref, str] = field(default_factory=dict)

    def source(self, ref: Ref) -> str:
        """The card (node name) that measured ref."""
        return self.sources.get(ref, self.node)

    @property
    def cards(self) -> tuple[str, ...]:
        """The distinct cards behind these values, in the order of the refs."""
        return tuple(dict.fromkeys(self.source(ref) for ref in self.values)) or (self.node,)


MAX_COMBINED = 8
"""Where no one card measured every value: up to this many combinations of one GPU model's cards,
all of them are judged; beyond it, as many as the most cards of one experiment, each card in one."""
COMBINED = " + "
"""Joins the names of the cards whose values are judged together."""


def by_node(measurements: MeasurementSet | None, refs: list[Ref]) -> list[NodeValues]:
    """Each card whose good runs hold every ref with a value, in the order cards are first met;
    a card that lacks one of them is left out. For a GPU model none of whose cards holds them
    all, but whose cards together do, each combination of its cards (one per experiment; _combinations
    when there are many) stands in, named as such: the page says the values came from several cards."""
    runs: dict[str, dict[str, NodeRun]] = {}
    for experiment in dict.fromkeys(e for e, _ in refs):
        record = measurements.get(experiment) if measurements else None
        for run in record.measured if record else []:
            runs.setdefault(run.node, {})[experiment] = run
    out = [n for node, by_experiment in runs.items() if (n := _values(node, by_experiment, refs)) is not None]
    whole = {n.gpu for n in out}
    models: dict[str, dict[str, list[NodeRun]]] = {}
    for by_experiment in runs.values():
        for experiment, run in by_experiment.items():
            if run.gpu not in whole and _has(run, refs):
                models.setdefault(run.gpu, {}).setdefault(experiment, []).append(run)
    experiments = list(dict.fromkeys(e for e, _ in refs))
    for cards in models.values():
        if len(cards) < len(experiments) or len(experiments) < 2:
            continue
        choices: list[list[NodeRun]] = [cards[e] for e in experiments]
        for combination in _combinations(choices):
            chosen = dict(zip(experiments, combination, strict=True))
            name = COMBINED.join(dict.fromkeys(chosen[e].node for e, _ in refs))
            if (n := _values(name, chosen, refs)) is not None:
                out.append(n)
    return out


def _combinations(choices: list[list[NodeRun]]) -> Iterator[tuple[NodeRun, ...]]:
    """Every combination of one card per experiment where there are at most MAX_COMBINED; else
    as many as the most cards of one experiment, each card in at least one (never the first
    few combinations only, which leave cards unjudged and counted among those that measured
    nothing): linear in the cards, never their product."""
    if math.prod(len(c) for c in choices) <= MAX_COMBINED:
        yield from itertools.product(*choices)
        return
    for i in range(max(len(c) for c in choices)):
        yield tuple(c[i % len(c)] for c in choices)


def _has(run: NodeRun, refs: list[Ref]) -> bool:
    """Whether the run holds a value for every ref of its experiment."""
    return run.good is not None and all(
        (r := run.good.result(name)) is not None and r.value is not None
        for experiment, name in refs
        if experiment == run.good.experiment
    )


def _values(node: str, by_experiment: dict[str, NodeRun], refs: list[Ref]) -> NodeValues | None:
    values: dict[Ref, Result] = {}
    for experiment, name in refs:
        found = by_experiment.get(experiment)
        result = found.good.result(name) if found is not None and found.good is not None else None
        if result is None or result.value is None:
            return None
        values[(experiment, name)] = result
    stale = any(by_experiment[e].stale for e, _ in refs)
    sources = {(e, name): by_experiment[e].node for e, name in refs}
    return NodeValues(node, next(iter(by_experiment.values())).gpu, values, stale, sources)


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
        raise CitationError(
            f"{call}: no card measured both values",
            "compare values measured on one card (or on cards of one GPU model)",
        )
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
