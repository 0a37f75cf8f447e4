"""Loaded data: the measurement files of a glossary, grouped by experiment and node.

The site reads measurements/<experiment>/<node>.json (the last good run on that node) and
<node>.failed.json (a later run that failed, kept beside it). With the verifier's catalog
it also knows which experiments exist and whether each file was made by the experiment's
code as it is now; a file made by older code is stale.

Names on disk are untrusted like the files' contents: only folders named by an experiment
id and files named <node>.json or <node>.failed.json (a node name as make verify writes
it) are read; links, other files and other names are diagnostics, shown escaped.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .diagnostics import Diagnostic, display_path
from .measurement import (
    HINT,
    ExperimentInfo,
    Measurement,
    MeasurementError,
    Result,
    parse_measurement,
    read_measurement_text,
)
from .measurement_check import is_experiment_id, is_node_name

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
        return parse_measurement(read_measurement_text(path, shown), shown)
    except MeasurementError as exc:
        diagnostics.extend(Diagnostic(shown, p.line, p.col, p.message, p.hint) for p in exc.problems)
    return None


def _refuse(diagnostics: list[Diagnostic], shown: str, message: str, hint: str = HINT) -> None:
    diagnostics.append(Diagnostic(shown, 1, 1, message, hint))


def _shown_name(folder: str, name: str) -> str:
    """A file name from disk as a diagnostic shows it: escaped unless plain printable ASCII."""
    return f"{folder}/{name if name.isascii() and name.isprintable() else ascii(name)[1:-1]}"


def _node_files(sub: Path, shown: str, diagnostics: list[Diagnostic]) -> dict[str, dict[bool, Path]]:
    """node -> {failed?: path} for the files named <node>.json or <node>.failed.json; every
    other .json name is refused (it is not something make verify writes)."""
    nodes: dict[str, dict[bool, Path]] = {}
    folded: dict[str, str] = {}
    for entry in sorted(sub.iterdir()):
        name = entry.name
        if not name.endswith(".json"):
            continue
        failed = name.endswith(FAILED_SUFFIX)
        node = name.removesuffix(FAILED_SUFFIX if failed else ".json")
        if not is_node_name(node):
            _refuse(
                diagnostics,
                _shown_name(shown, name),
                "is not named <node>.json or <node>.failed.json with a node name like 'h200-lent'",
                "make verify writes only those names; remove or rename this file",
            )
            continue
        key = node.lower().replace(".", "-").replace("_", "-")
        if folded.setdefault(key, node) != node:
            _refuse(
                diagnostics,
                _shown_name(shown, name),
                f"node '{node}' cannot be told apart from node '{folded[key]}' on a page",
                "give each node a name that differs in more than case or '.', '-', '_'",
            )
            continue
        nodes.setdefault(node, {})[failed] = entry
    return nodes


def _experiment_folders(folder: Path, root: Path | None, diagnostics: list[Diagnostic]) -> Iterator[Path]:
    """The experiment folders that hold .json files; a link, an unreadable folder or a name
    that is not an experiment id is refused."""
    shown_folder = display_path(folder, root)
    try:
        subs = sorted(folder.iterdir())
    except OSError as exc:
        _refuse(diagnostics, shown_folder, f"cannot read: {exc.strerror}")
        return
    for sub in subs:
        if not sub.is_dir():
            continue
        shown = _shown_name(shown_folder, sub.name)
        if sub.is_symlink():
            _refuse(diagnostics, shown, "is a symbolic link; measurement folders are plain folders")
            continue
        try:
            if not any(p.name.endswith(".json") for p in sub.iterdir()):
                continue
        except OSError as exc:
            _refuse(diagnostics, shown, f"cannot read: {exc.strerror}")
            continue
        if not is_experiment_id(sub.name):
            _refuse(diagnostics, shown, "is not named by an experiment id like 'ptx-jit'")
            continue
        yield sub


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
    for sub in _experiment_folders(folder, root, diagnostics):
        info = known.get(sub.name) if known else None
        shown_sub = display_path(sub, root)  # not a link: file paths are shown under it, unresolved
        files = _node_files(sub, shown_sub, diagnostics)
        if not files:
            continue
        record = found.experiments.setdefault(sub.name, ExperimentRecord(sub.name, info))
        for node, paths in files.items():
            good_file, failed_file = sub / f"{node}.json", sub / f"{node}{FAILED_SUFFIX}"
            good_shown, failed_shown = (_shown_name(shown_sub, p.name) for p in (good_file, failed_file))
            good = _read(good_file, good_shown, diagnostics) if False in paths else None
            failed = _read(failed_file, failed_shown, diagnostics) if True in paths else None
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
