"""Loaded data: the measurement files of a glossary, grouped by experiment and node.

The site reads measurements/<experiment>/<node>.json (the last good run on that node) and
<node>.failed.json (a later run that failed, kept beside it). With the verifier's catalog
it also knows which experiments exist and whether each file was made by the experiment's
code as it is now; a file made by older code is stale.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .diagnostics import Diagnostic, display_path
from .measurement import ExperimentInfo, Measurement, MeasurementError, Result, parse_measurement

FAILED_SUFFIX = ".failed.json"


@dataclass(frozen=True)
class NodeRun:
    """One node's measurement of one experiment: the last good run, and a failed one after it."""

    node: str
    good: Measurement | None
    good_path: str = ""
    failed: Measurement | None = None
    failed_path: str = ""
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


def verify_command(experiment: str) -> str:
    return f"make verify EXPERIMENT={experiment}"


def _read(path: Path, shown: str, diagnostics: list[Diagnostic]) -> Measurement | None:
    try:
        return parse_measurement(path.read_text(encoding="utf-8"), shown)
    except OSError as exc:
        diagnostics.append(Diagnostic(shown, 1, 1, f"cannot read: {exc.strerror}"))
    except MeasurementError as exc:
        message = str(exc).removeprefix(f"{shown}:").lstrip()
        line, col = 1, 1
        head, _, rest = message.partition(": ")
        if head.count(":") == 1 and all(p.isdigit() for p in head.split(":")):
            line, col = (int(p) for p in head.split(":"))
            message = rest
        diagnostics.append(
            Diagnostic(shown, line, col, message, "measurement files are written by make verify; do not edit them")
        )
    return None


def load_measurements(
    folder: Path, root: Path | None = None, catalog: list[ExperimentInfo] | None = None
) -> tuple[MeasurementSet, list[Diagnostic]]:
    """Read every measurement file under folder; problems come back as diagnostics."""
    known = {info.id: info for info in catalog} if catalog is not None else None
    found = MeasurementSet(folder, catalog=known)
    diagnostics: list[Diagnostic] = []
    for entry in catalog or []:
        found.experiments[entry.id] = ExperimentRecord(entry.id, entry)
    if not folder.is_dir():
        return found, diagnostics
    for sub in sorted(p for p in folder.iterdir() if p.is_dir()):
        files = sorted(sub.glob("*.json"))
        if not files:
            continue
        info = known.get(sub.name) if known else None
        record = found.experiments.setdefault(sub.name, ExperimentRecord(sub.name, info))
        nodes = sorted({p.name.removesuffix(FAILED_SUFFIX).removesuffix(".json") for p in files})
        for node in nodes:
            good_file, failed_file = sub / f"{node}.json", sub / f"{node}{FAILED_SUFFIX}"
            good_shown, failed_shown = display_path(good_file, root), display_path(failed_file, root)
            good = _read(good_file, good_shown, diagnostics) if good_file.exists() else None
            failed = _read(failed_file, failed_shown, diagnostics) if failed_file.exists() else None
            for m, shown in ((good, good_shown), (failed, failed_shown)):
                if m is not None and (m.experiment != sub.name or m.node != node):
                    diagnostics.append(
                        Diagnostic(
                            shown,
                            1,
                            1,
                            f"holds experiment '{m.experiment}' on node '{m.node}', not '{sub.name}' on '{node}'",
                            f"make verify writes <experiment>/<node>.json; move it to {sub.parent.name}/"
                            f"{m.experiment}/{m.node}.json",
                        )
                    )
            if good is not None and good.status != "ok":
                diagnostics.append(
                    Diagnostic(
                        good_shown,
                        1,
                        1,
                        f"status is '{good.status}' in a file for good runs",
                        "failed runs belong in <node>.failed.json",
                    )
                )
                good = None
            stale = bool(info and good and good.code_hash != info.code_hash)
            record.runs.append(
                NodeRun(
                    node,
                    good,
                    good_shown if good else "",
                    failed,
                    failed_shown if failed else "",
                    stale,
                )
            )
    return found, diagnostics


def format_value(result: Result | None) -> str:
    """A result as a reader sees it: '17.3 ms', '8 blocks', 'yes', '75×', or 'not measured'."""
    if result is None or result.value is None:
        return "not measured"
    value = result.value
    if isinstance(value, bool):
        text = "yes" if value else "no"
    elif isinstance(value, float):
        text = f"{value:.0f}" if abs(value) >= 100 else f"{value:.3g}"
    else:
        text = str(value)
    if not result.unit:
        return text
    return f"{text}{result.unit}" if result.unit in ("×", "%") else f"{text} {result.unit}"
