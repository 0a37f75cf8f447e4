"""Measurement files: what one experiment found on one GPU node, with where and how.

Machines write these (as JSON, under measurements/<experiment>/<node>.json); pages cite
them. The format carries a version, and a loader refuses versions it does not know
instead of guessing. A run that failed a gate or crashed is written beside the last good
file (<node>.failed.json), never over it. Each file records the hash of the experiment's
code, so a number measured by code that has since changed is detected as stale. Since
version 2 a file also says when each value was first measured with the value it has (the
run's own recorded_at is when it was last confirmed) and which of the node's environment
changed since its previous good run (drift).
"""

from __future__ import annotations

import dataclasses
import json
import os
import stat
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from cudagloss.errors import Diagnostic, GlossaryError
from cudagloss.files.atomic import write_text_atomic
from cudagloss.files.inside import refuse_links
from cudagloss.model.measurement_rules import (
    FORMAT_VERSION,
    MAX_DEPTH,
    MAX_FILE_BYTES,
    MAX_VALUES,
    TEXT_MAX,
    check,
    fit_text,
    recorded_day,
)
from cudagloss.model.urls import measurement_path
from cudagloss.text.strictjson import JsonProblem, line_col, parse

__all__ = [
    "FORMAT_VERSION",
    "HINT",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "Drift",
    "ExperimentInfo",
    "Gate",
    "Measurement",
    "MeasurementError",
    "Result",
    "parse_measurement",
    "read_measurement_text",
    "record",
]

Status = Literal["ok", "failed", "skipped"]
Value = float | int | str | bool | None
HINT = "measurement files are written by make verify; re-run it on a GPU node rather than editing the file"
MAX_REPORTED = 50
"""Problems reported per file; a file with more says how many it left out."""


class MeasurementError(GlossaryError):
    """A measurement file that cannot be used as it is: every problem found in it, as
    diagnostics in the order of the file (a count of those left out comes last); message is
    the first one's (what the verifier prints). str() is one line per problem,
    `path:line:col: message`."""

    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        super().__init__(diagnostics)
        self.diagnostics = list(diagnostics) or [Diagnostic("measurement", 1, 1, "cannot be used", HINT)]
        self.message = self.diagnostics[0].message

    @classmethod
    def one(cls, shown: str, message: str, line: int = 1, col: int = 1) -> MeasurementError:
        return cls([Diagnostic(shown, line, col, message, HINT)])

    def __str__(self) -> str:
        return "\n".join(f"{d.path}:{d.line}:{d.col}: {d.message}" for d in self.diagnostics)


@dataclass(frozen=True)
class KernelSource:
    """One source string an experiment compiles with NVRTC, as its measurement page shows it."""

    where: str
    """module:CONSTANT, relative to the repository root (verifier/experiments/x.py:SOURCE)."""
    language: Literal["cuda", "ptx"]
    source: str


@dataclass(frozen=True)
class ExperimentInfo:
    """What the site knows of an experiment without running it: its id, purpose, the file
    its code lives in, and the hash of that code now (to tell whether a file is stale)."""

    id: str
    purpose: str
    code_hash: str
    source: str = ""
    """The experiment's module, relative to the repository root."""
    kernels: tuple[KernelSource, ...] = ()
    """The kernels it compiles (verifier/anatomy.py reads them from its code)."""
    api_calls: tuple[str, ...] = ()
    """The CUDA driver and NVRTC functions behind its values, its helpers' included."""
    recipe: str = ""
    """The recipe key now (verifier/recipe.py): what reaches the GPU and how it is timed."""
    summary: str = ""
    """The summary key now: the code that turns raw samples into results."""


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
    first_measured: str = ""
    """The day (YYYY-MM-DD) this value was first measured as it is now; '' where not known."""
    method: str = ""
    """How it was measured (measurement_rules.METHODS: 'gpu-queued', 'host', ...); '' for a
    value counted, read or derived."""

    @property
    def counted(self) -> bool:
        """A fact counted or read (text, a truth value, an integer with no samples and no method):
        it is the same on every run and card or it differs. An integer measured (a clock read in
        the kernel) may move a little, as any measurement does."""
        value = self.value
        return isinstance(value, str | bool) or (isinstance(value, int) and not self.samples and not self.method)


@dataclass(frozen=True)
class Drift:
    """A key of the node's environment (driver, CUDA, ...) that differs from its previous good run."""

    name: str
    old: Value
    new: Value


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
    drift: list[Drift] = field(default_factory=list)
    recipe: str = ""
    """Hash of what reached the GPU and how it was timed (verifier/recipe.py); '' in files
    older than format 4, which go stale by code_hash instead."""
    summary: str = ""
    """Hash of the code that turned the raw samples into these results."""
    raw: dict[str, Any] | None = None
    """What run() handed summarise(), as model.raw wrote it: the results derive from it again on
    the CPU when only the summary changed (make rederive). None where the run kept none."""

    @property
    def format_version(self) -> int:
        """The oldest version that holds this file: one without history stays a version 1 file."""
        if self.recipe:
            return FORMAT_VERSION
        if any(r.method for r in self.results):
            return 3
            return FORMAT_VERSION
        return 2 if self.drift or any(r.first_measured for r in self.results) else 1

    @property
    def node(self) -> str:
        return str(self.provenance.get("node", "unknown"))

    @property
    def recorded_on(self) -> str:
        """The day of recorded_at as written (YYYY-MM-DD), or '' when there is none."""
        day = recorded_day(self.provenance)
        return day.isoformat() if day else ""

    def result(self, name: str) -> Result | None:
        return next((r for r in self.results if r.name == name), None)

    def to_json(self) -> str:
        """The file's text; the history fields are left out where empty."""
        data = asdict(self)
        for result in data["results"]:
            for key in ("first_measured", "method"):
                if not result[key]:
                    del result[key]
        if not self.drift:
            del data["drift"]
        for key in ("recipe", "summary", "raw"):
            if not data[key]:
                del data[key]
        data["format_version"] = self.format_version
        if "raw" not in data:
            return json.dumps(data, indent=2, sort_keys=False, ensure_ascii=False) + "\n"
        # The raw samples on one line: a run's thousands of numbers, one a line, would triple the
        # file; they are written once and read by make rederive, never reviewed number by number.
        mark = f"raw-{uuid.uuid4().hex}"
        data["raw"] = mark
        text = json.dumps(data, indent=2, sort_keys=False, ensure_ascii=False) + "\n"
        compact = json.dumps(self.raw, separators=(",", ":"), ensure_ascii=False)
        return text.replace(f'"{mark}"', compact, 1)


def parse_measurement(text: str, shown: str) -> Measurement:
    """Parse and check one measurement file's text; raise MeasurementError (naming shown) with
    every problem found, each at the line and column of the value at fault."""
    try:
        parsed = parse(text, max_depth=MAX_DEPTH, max_values=MAX_VALUES)
    except JsonProblem as exc:
        raise MeasurementError.one(shown, f"not valid JSON: {exc.message}", *line_col(text, exc.offset)) from None
    fields, issues = check(parsed.value, parsed.where, parsed.duplicates)
    if issues:
        issues.sort(key=lambda i: i.offset)  # stable: one value's issues stay in the order found
        found = [Diagnostic(shown, *line_col(text, i.offset), i.message, i.hint or HINT) for i in issues[:MAX_REPORTED]]
        if len(issues) > MAX_REPORTED:  # positions cost a scan each: count the rest, never place them
            found.append(Diagnostic(shown, 1, 1, f"and {len(issues) - MAX_REPORTED:,} more problems not shown", HINT))
        raise MeasurementError(found)
    assert fields is not None
    return Measurement(
        experiment=fields["experiment"],
        purpose=fields["purpose"],
        code_hash=fields["code_hash"],
        status=fields["status"],
        provenance=fields["provenance"],
        gates=[Gate(**g) for g in fields["gates"]],
        results=[Result(**r) for r in fields["results"]],
        error=fields["error"],
        drift=[Drift(**d) for d in fields["drift"]],
        recipe=fields.get("recipe") or "",
        summary=fields.get("summary") or "",
        raw=fields.get("raw"),
    )


def readable(text: str, shown: str) -> Measurement:
    """text parsed as the site will read it back from a file: its size included."""
    if len(text.encode("utf-8")) > MAX_FILE_BYTES:
        raise MeasurementError.one(
            shown, f"would be larger than {MAX_FILE_BYTES:,} bytes, the limit for a measurement file"
        )
    return parse_measurement(text, shown)


def read_measurement_text(path: Path, shown: str) -> str:
    """A measurement file's text, refusing what no run of make verify writes: a link, anything
    but a regular file, more than MAX_FILE_BYTES, bytes that are not UTF-8, a byte-order mark."""
    try:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            raise MeasurementError.one(shown, "is a symbolic link; measurement files are plain files")
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise MeasurementError.one(shown, f"cannot read: {exc.strerror}") from None
    try:  # a FIFO opened without blocking, or a folder, is refused before a byte is read
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise MeasurementError.one(shown, "is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(MAX_FILE_BYTES + 1) if info.st_size <= MAX_FILE_BYTES else b"x" * (MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise MeasurementError.one(shown, f"cannot read: {exc.strerror}") from None
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES:
        raise MeasurementError.one(shown, f"is larger than {MAX_FILE_BYTES:,} bytes, the limit for a measurement file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        start = data.rfind(b"\n", 0, exc.start) + 1
        col = len(data[start : exc.start].decode("utf-8", errors="replace")) + 1
        line = data.count(b"\n", 0, exc.start) + 1
        raise MeasurementError.one(shown, f"is not UTF-8: byte 0x{data[exc.start]:02X} here", line, col) from None
    if text.startswith("\ufeff"):
        raise MeasurementError.one(shown, "starts with a byte-order mark (U+FEFF), which JSON does not allow")
    return text


def record(measurement: Measurement, folder: Path) -> Path:
    """Write a run's file: a good run replaces the last good file (and clears an old
    failure); a failed run is written beside it, leaving the good file in place. The text is
    checked by the same rules as the site reads it with, before its path is even formed, so
    make verify never writes a file (or a name) that the site would refuse; a crash's error
    text is made to fit them first."""
    if measurement.error is not None:
        measurement = dataclasses.replace(measurement, error=fit_text(measurement.error, TEXT_MAX))
    text = measurement.to_json()
    escaped = [ascii(name)[1:-1] for name in (measurement.experiment, measurement.node)]
    readable(text, measurement_path(folder, *escaped, failed=measurement.status != "ok").as_posix())
    good = measurement_path(folder, measurement.experiment, measurement.node)
    bad = measurement_path(folder, measurement.experiment, measurement.node, failed=True)
    for path in (good, bad):  # a committed link there would be written (or removed) through
        refuse_links(path)
    good.parent.mkdir(parents=True, exist_ok=True)
    target = good if measurement.status == "ok" else bad
    write_text_atomic(target, text)
    if target is good:
        bad.unlink(missing_ok=True)
    return target
