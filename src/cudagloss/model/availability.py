"""The instruction-availability table: for each feature's smallest kernel, which compiler
targets NVRTC compiled it for, and the compiler's own words where it refused
(computed/instruction-availability.json, written by `make generations`, verifier/availability.py).

Untrusted like every computed file: read as strict JSON of a bounded size, every string held
to a pattern and a length, nothing in it evaluated or opened; a kernel's source is shown as a
code block, never compiled here. Problems are diagnostics at the line and column of the value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from cudagloss.errors import Diagnostic
from cudagloss.model.computed import HINT, MAX_FILE_BYTES, MAX_REPORTED, ComputedError
from cudagloss.text.strictjson import JsonProblem, Where, line_col, parse

COMPILED = "compiled"
REFUSAL = re.compile(r"(ptxas|nvrtc): [^\n]{1,300}")
"""A refusal: who refused (ptxas, or NVRTC's front end), then the first error line it wrote."""
TARGET = re.compile(r"sm_(\d{2,3})([af]?)")
MAX_FEATURES = 64
MAX_TARGETS = 64
MAX_SASS = 16
"""SASS instructions kept for one feature on one target (the matrix instructions of a tiny kernel)."""
SASS_LINE = re.compile(r"[^\n]{1,200}")
KEYS = {"provenance", "features", "values", "sass"}
FIELDS = {
    "id": re.compile(r"[a-z0-9]+(?:-[a-z0-9]+){0,7}"),
    "ptx": re.compile(r"[^\n]{1,200}"),
    "label": re.compile(r"[^\n]{1,300}"),
    "term": re.compile(r"[a-z0-9]+(?:-[a-z0-9]+){0,15}"),
    "source": re.compile(r"[^\x00]{1,4000}"),
}
"""Each feature's fields, each as it must be written."""
PROVENANCE = {
    "tool": re.compile(r"[^\n]{1,200}"),
    "nvrtc_version": re.compile(r"\d{1,3}\.\d{1,3}"),
    "compiler": re.compile(r"[^\n]{1,300}"),
    "targets": re.compile(r"[^\n]{1,300}"),
    "disassembler": re.compile(r"[^\n]{1,200}"),
    "computed_at": re.compile(r"\d{4}-\d\d-\d\dT[0-9:.]{1,20}Z"),
}
"""What the file says of how it was made: exactly these keys."""


@dataclass(frozen=True)
class Feature:
    id: str
    ptx: str
    label: str
    term: str
    source: str


@dataclass(frozen=True)
class AvailabilityTable:
    """One availability file: what made it, the features, and each target's verdicts by feature."""

    name: str
    provenance: dict[str, str]
    features: tuple[Feature, ...]
    values: dict[str, dict[str, str]]
    sass: dict[str, dict[str, tuple[str, ...]]]
    """For a few features, the SASS instructions each target that compiled them got (cuobjdump)."""

    def targets(self) -> list[str]:
        """Targets in the compiler's order: by compute capability, then plain, a, f."""
        return sorted(self.values, key=target_key)


def target_key(target: str) -> tuple[int, str]:
    found = TARGET.fullmatch(target)
    return (int(found[1]), found[2]) if found else (0, target)


def _problems(data: Any, at: Any) -> tuple[list[tuple[int, str]], list[str]]:
    """Every problem of the parsed document, at its offset; and the feature ids found."""
    issues: list[tuple[int, str]] = []
    provenance, features, values = data["provenance"], data["features"], data["values"]
    if not isinstance(provenance, dict) or set(provenance) != set(PROVENANCE):
        issues.append((at("provenance"), f"'provenance' must have exactly the keys {', '.join(sorted(PROVENANCE))}"))
    else:
        for key, pattern in PROVENANCE.items():
            if not (isinstance(provenance[key], str) and pattern.fullmatch(provenance[key])):
                issues.append((at("provenance", key), f"provenance '{key}' is not like '{pattern.pattern}'"))
    ids: list[str] = []
    if not isinstance(features, list) or not 0 < len(features) <= MAX_FEATURES:
        issues.append((at("features"), f"'features' must be a list of 1 to {MAX_FEATURES} features"))
        features = []
    for i, feature in enumerate(features):
        if not isinstance(feature, dict) or set(feature) != set(FIELDS):
            issues.append((at("features", i), f"a feature must have exactly the keys {', '.join(sorted(FIELDS))}"))
            continue
        for key, pattern in FIELDS.items():
            if not (isinstance(feature[key], str) and pattern.fullmatch(feature[key])):
                issues.append((at("features", i, key), f"feature '{key}' is not like '{pattern.pattern[:40]}'"))
        if isinstance(feature["id"], str):
            if feature["id"] in ids:
                issues.append((at("features", i, "id"), f"feature '{feature['id'][:64]}' is listed twice"))
            ids.append(feature["id"])
    if not isinstance(values, dict) or not 0 < len(values) <= MAX_TARGETS:
        issues.append((at("values"), f"'values' must be an object of 1 to {MAX_TARGETS} targets like 'sm_90a'"))
        values = {}
    for target, row in values.items():
        if not TARGET.fullmatch(target):
            issues.append((at("values", target, key=True), f"'{target[:16]}' is not a target like 'sm_90' or 'sm_90a'"))
            continue
        if not isinstance(row, dict) or set(row) != set(ids):
            issues.append((at("values", target), f"{target} must give a verdict for every feature, and no other"))
            continue
        for fid, verdict in row.items():
            if not (isinstance(verdict, str) and (verdict == COMPILED or REFUSAL.fullmatch(verdict))):
                message = f"{target} {fid}: must be '{COMPILED}' or 'ptxas: ' or 'nvrtc: ' and one line"
                issues.append((at("values", target, fid), message))
    issues += _sass_problems(data["sass"], ids, values, at)
    return issues, ids


def _sass_problems(sass: Any, ids: list[str], values: dict[str, Any], at: Any) -> list[tuple[int, str]]:
    """The kept SASS: by feature, then by a target that compiled it, a short list of lines."""
    if not isinstance(sass, dict) or len(sass) > MAX_FEATURES:
        return [(at("sass"), f"'sass' must be an object of at most {MAX_FEATURES} features")]
    issues: list[tuple[int, str]] = []
    for fid, rows in sass.items():
        if fid not in ids:
            issues.append((at("sass", fid, key=True), f"'{fid[:64]}' is not one of the features"))
            continue
        if not isinstance(rows, dict):
            issues.append((at("sass", fid), f"the SASS of {fid} must be an object of targets"))
            continue
        for target, lines in rows.items():
            if not isinstance(values.get(target), dict) or values[target].get(fid) != COMPILED:
                issues.append((at("sass", fid, target, key=True), f"{fid} did not compile for '{target[:16]}'"))
            elif not (
                isinstance(lines, list)
                and len(lines) <= MAX_SASS
                and all(isinstance(line, str) and SASS_LINE.fullmatch(line) for line in lines)
            ):
                message = f"{fid} on {target}: at most {MAX_SASS} instructions, each one line"
                issues.append((at("sass", fid, target), message))
    return issues


def parse_availability(text: str, shown: str, name: str) -> AvailabilityTable:
    """Parse and check one availability file's text; raise ComputedError (naming shown) with
    every problem found, each at the line and column of the value at fault."""
    if len(text.encode("utf-8")) > MAX_FILE_BYTES:
        raise ComputedError.one(shown, f"is larger than {MAX_FILE_BYTES:,} bytes, the limit for a computed file")
    try:
        parsed = parse(text, max_depth=4, max_values=20_000)
    except JsonProblem as exc:
        raise ComputedError.one(shown, f"not valid JSON: {exc.message}", *line_col(text, exc.offset)) from None
    data, where = parsed.value, parsed.where

    def at(*path: str | int, key: bool = False) -> int:
        return where.offset(path, key=key) if isinstance(where, Where) else 0

    if not isinstance(data, dict) or set(data) != KEYS:
        raise ComputedError.one(shown, f"must be an object with exactly the keys {', '.join(sorted(KEYS))}")
    issues = [(offset, f"repeats the key '{key}'") for offset, key in parsed.duplicates]
    found, _ = _problems(data, at)
    issues += found
    if issues:
        issues.sort(key=lambda i: i[0])
        diagnostics = [Diagnostic(shown, *line_col(text, offset), message, HINT) for offset, message in issues]
        if len(diagnostics) > MAX_REPORTED:
            extra = len(diagnostics) - MAX_REPORTED
            diagnostics = [*diagnostics[:MAX_REPORTED], Diagnostic(shown, 1, 1, f"and {extra:,} more problems", HINT)]
        raise ComputedError(diagnostics)
    features = tuple(Feature(**f) for f in data["features"])
    values = {t: dict(r) for t, r in data["values"].items()}
    sass = {f: {t: tuple(lines) for t, lines in rows.items()} for f, rows in data["sass"].items()}
    return AvailabilityTable(name, dict(data["provenance"]), features, values, sass)
