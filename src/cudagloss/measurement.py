"""Measurement files: what one experiment found on one GPU node, with where and how.

Machines write these (as JSON, under measurements/<experiment>/<node>.json); pages cite
them. The format carries a version, and a loader refuses versions it does not know
instead of guessing. A run that failed a gate or crashed is written beside the last good
file (<node>.failed.json), never over it. Each file records the hash of the experiment's
code, so a number measured by code that has since changed is detected as stale.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from .atomic import write_text_atomic

FORMAT_VERSION = 1
Status = Literal["ok", "failed", "skipped"]
Value = float | int | str | bool | None


class MeasurementError(Exception):
    """A measurement file that cannot be used as it is; the message names the file."""


@dataclass(frozen=True)
class ExperimentInfo:
    """What the site knows of an experiment without running it: its id, purpose, the file
    its code lives in, and the hash of that code now (to tell whether a file is stale)."""

    id: str
    purpose: str
    code_hash: str
    source: str = ""
    """The experiment's module, relative to the repository root."""


@dataclass(frozen=True)
class Gate:
    """A check that must pass for the results to count (e.g. 'output matches the CPU')."""

    name: str
    passed: bool
    detail: str = ""


@dataclass(frozen=True)
class Result:
    """One named value with its unit; timed values keep their raw samples beside the summary."""

    name: str
    value: Value
    unit: str = ""
    description: str = ""
    samples: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class Measurement:
    """The whole file: experiment, provenance, gates and results."""

    experiment: str
    purpose: str
    code_hash: str
    status: Status
    provenance: dict[str, Any]
    gates: list[Gate] = field(default_factory=list)
    results: list[Result] = field(default_factory=list)
    error: str | None = None
    format_version: int = FORMAT_VERSION

    @property
    def node(self) -> str:
        return str(self.provenance.get("node", "unknown"))

    def result(self, name: str) -> Result | None:
        return next((r for r in self.results if r.name == name), None)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=False, ensure_ascii=False) + "\n"


def code_hash(paths: Iterable[Path]) -> str:
    """sha256 over the given source files (name and bytes), in the order given."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return "sha256:" + digest.hexdigest()


def _require(data: dict[str, Any], key: str, kind: type | tuple[type, ...], shown: str) -> Any:
    if key not in data:
        raise MeasurementError(f"{shown}: missing field '{key}'")
    if not isinstance(data[key], kind):
        raise MeasurementError(f"{shown}: field '{key}' has the wrong type")
    return data[key]


def parse_measurement(text: str, shown: str) -> Measurement:
    """Parse and check one measurement file's text; raise MeasurementError naming shown."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MeasurementError(f"{shown}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise MeasurementError(f"{shown}: expected a JSON object")
    version = data.get("format_version")
    if version != FORMAT_VERSION:
        raise MeasurementError(
            f"{shown}: measurement format version {version!r} is not known (this tool reads {FORMAT_VERSION}); "
            "update cudagloss, or re-run the experiment with `make verify`"
        )
    status = _require(data, "status", str, shown)
    if status not in ("ok", "failed", "skipped"):
        raise MeasurementError(f"{shown}: status {status!r} is not one of ok, failed, skipped")
    try:
        gates = [Gate(**g) for g in _require(data, "gates", list, shown)]
        results = [Result(**r) for r in _require(data, "results", list, shown)]
    except TypeError as exc:
        raise MeasurementError(f"{shown}: malformed gate or result ({exc})") from None
    return Measurement(
        experiment=_require(data, "experiment", str, shown),
        purpose=_require(data, "purpose", str, shown),
        code_hash=_require(data, "code_hash", str, shown),
        status=status,
        provenance=_require(data, "provenance", dict, shown),
        gates=gates,
        results=results,
        error=data.get("error"),
    )


def load_measurement(path: Path) -> Measurement:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise MeasurementError(f"{path}: cannot read: {exc.strerror}") from None
    return parse_measurement(text, str(path))


def measurement_path(folder: Path, experiment: str, node: str, *, failed: bool = False) -> Path:
    return folder / experiment / f"{node}{'.failed' if failed else ''}.json"


def record(measurement: Measurement, folder: Path) -> Path:
    """Write a run's file: a good run replaces the last good file (and clears an old
    failure); a failed run is written beside it, leaving the good file in place."""
    good = measurement_path(folder, measurement.experiment, measurement.node)
    bad = measurement_path(folder, measurement.experiment, measurement.node, failed=True)
    good.parent.mkdir(parents=True, exist_ok=True)
    target = good if measurement.status == "ok" else bad
    write_text_atomic(target, measurement.to_json())
    if target is good:
        bad.unlink(missing_ok=True)
    return target


def is_stale(measurement: Measurement, current_hash: str) -> bool:
    """True when the experiment's code changed since the measurement ran."""
    return measurement.code_hash != current_hash
