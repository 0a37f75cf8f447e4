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
from cudagloss.model.value_checks import first_unseen
from cudagloss.model.value_checks import shown as quoted
from cudagloss.text.strictjson import JsonProblem, Where, line_col, parse

COMPILED = "compiled"
REFUSAL = re.compile(r"(ptxas|nvrtc): [^\n]{1,300}")
"""A refusal: who refused (ptxas, or NVRTC's front end), then the first error line it wrote."""
TARGET = re.compile(r"sm_([1-9][0-9]{1,2})([af]?)")
MAX_FEATURES = 64
MAX_TARGETS = 64
MAX_SASS = 16
"""SASS instructions kept for one feature on one target (the matrix instructions of a tiny kernel)."""
SASS_LINE = re.compile(r"[^\n]{1,200}")
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
    "nvrtc_version": re.compile(r"[0-9]{1,3}\.[0-9]{1,3}"),
    "compiler": re.compile(r"[^\n]{1,300}"),
    "targets": re.compile(r"[^\n]{1,300}"),
    "disassembler": re.compile(r"[^\n]{1,200}"),
    "computed_at": re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]{1,20}Z"),
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


Issue = tuple[int, str]


def _keys(found: dict[str, Any], wanted: list[str], at: Any, path: tuple[str | int, ...], what: str) -> list[Issue]:
    """found's keys that are not wanted, each at its key; and the wanted it lacks, at the object."""
    issues = [
        (at(*path, k, key=True), f"{what} has the key {quoted(k)}, not one of its keys")
        for k in found
        if k not in wanted
    ]
    missing = [k for k in wanted if k not in found]
    if missing:
        names = ", ".join(missing[:4]) + (", …" if len(missing) > 4 else "")
        issues.append(
            (at(*path), f"{what} must have exactly the keys {', '.join(sorted(wanted))[:200]}: lacks {names}")
        )
    return issues


def _text_ok(value: Any, pattern: re.Pattern[str], *, multiline: bool = False) -> bool:
    """A string like pattern, without a control, invisible or surrogate character."""
    return (
        isinstance(value, str) and bool(pattern.fullmatch(value)) and first_unseen(value, multiline=multiline) is None
    )


def _features(features: Any, at: Any) -> tuple[list[Issue], list[str] | None]:
    """The features' problems, and their ids (None where the list cannot say which they are)."""
    if not isinstance(features, list):
        return [(at("features"), f"'features' must be a list of 1 to {MAX_FEATURES} features")], None
    issues: list[Issue] = []
    if not 0 < len(features) <= MAX_FEATURES:
        issues.append((at("features"), f"'features' must be a list of 1 to {MAX_FEATURES} features"))
    ids: list[str] = []
    known = True
    for i, feature in enumerate(features):
        if not isinstance(feature, dict):
            issues.append((at("features", i), f"a feature must be an object with exactly the keys {', '.join(FIELDS)}"))
            known = False
            continue
        issues += _keys(feature, list(FIELDS), at, ("features", i), "a feature")
        for key, pattern in FIELDS.items():
            if key in feature and not _text_ok(feature[key], pattern, multiline=key == "source"):
                issues.append((at("features", i, key), f"feature '{key}' is not like '{pattern.pattern[:40]}'"))
        if isinstance(feature.get("id"), str):
            if feature["id"] in ids:
                issues.append((at("features", i, "id"), f"feature {quoted(feature['id'])} is listed twice"))
            ids.append(feature["id"])
        else:
            known = False  # a row's verdict for it cannot be told from one for an unknown feature
    return issues, ids if known else None


def _problems(data: Any, at: Any) -> list[Issue]:
    """Every problem of the parsed document, at its offset."""
    issues: list[Issue] = []
    provenance, features, values = data["provenance"], data["features"], data["values"]
    if not isinstance(provenance, dict):
        issues.append((at("provenance"), f"'provenance' must have exactly the keys {', '.join(sorted(PROVENANCE))}"))
    else:
        issues += _keys(provenance, list(PROVENANCE), at, ("provenance",), "'provenance'")
        for key, pattern in PROVENANCE.items():
            if key in provenance and not _text_ok(provenance[key], pattern):
                issues.append((at("provenance", key), f"provenance '{key}' is not like '{pattern.pattern}'"))
    found, ids = _features(features, at)
    issues += found
    if not isinstance(values, dict) or not 0 < len(values) <= MAX_TARGETS:
        issues.append((at("values"), f"'values' must be an object of 1 to {MAX_TARGETS} targets like 'sm_90a'"))
        values = {}
    for target, row in values.items():
        if not (target_found := TARGET.fullmatch(target)):
            issues.append(
                (at("values", target, key=True), f"{quoted(target, 16)} is not a target like 'sm_90' or 'sm_90a'")
            )
            continue
        if target_found[2] and f"sm_{target_found[1]}" not in values:
            message = (
                f"{target} needs its plain target sm_{target_found[1]} too: the page has a column per plain target"
            )
            issues.append((at("values", target, key=True), message))
        if not isinstance(row, dict):
            issues.append((at("values", target), f"{target} must give a verdict for every feature, and no other"))
            continue
        if ids is not None:
            issues += _keys(
                row, ids, at, ("values", target), f"{target} must give a verdict for every feature, and no other;"
            )
        for fid, verdict in row.items():
            if not (isinstance(verdict, str) and (verdict == COMPILED or _text_ok(verdict, REFUSAL))):
                named = fid if FIELDS["id"].fullmatch(fid) else quoted(fid, 64)
                message = f"{target} {named}: must be '{COMPILED}' or 'ptxas: ' or 'nvrtc: ' and one line"
                issues.append((at("values", target, fid), message))
    # Which features and targets the SASS may name is asked only of a sound table: else every
    # problem above would come back once more as a SASS key naming what it broke.
    return issues + _sass_problems(data["sass"], None if issues or ids is None else (ids, values), at)


def _sass_problems(sass: Any, table: tuple[list[str], dict[str, Any]] | None, at: Any) -> list[Issue]:
    """The kept SASS: by feature, then by a target that compiled it (where table, the feature ids
    and the verdicts, is given), a short list of one-line strings."""
    if not isinstance(sass, dict) or len(sass) > MAX_FEATURES:
        return [(at("sass"), f"'sass' must be an object of at most {MAX_FEATURES} features")]
    issues: list[Issue] = []
    for fid, rows in sass.items():
        if table is not None and fid not in table[0]:
            issues.append((at("sass", fid, key=True), f"{quoted(fid, 64)} is not one of the features"))
            continue
        if not isinstance(rows, dict):
            issues.append((at("sass", fid), f"the SASS of {quoted(fid, 64)} must be an object of targets"))
            continue
        for target, lines in rows.items():
            if table is not None and table[1].get(target, {}).get(fid) != COMPILED:
                issues.append((at("sass", fid, target, key=True), f"{fid} did not compile for {quoted(target, 16)}"))
            elif not (
                isinstance(lines, list) and len(lines) <= MAX_SASS and all(_text_ok(line, SASS_LINE) for line in lines)
            ):
                message = f"{quoted(fid, 64)} on {quoted(target, 16)}: at most {MAX_SASS} instructions, each one line"
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

    top = ["features", "provenance", "sass", "values"]
    if not isinstance(data, dict):
        raise ComputedError.one(shown, f"must be an object with exactly the keys {', '.join(top)}")
    issues = [(offset, f"repeats the key {quoted(key)}") for offset, key in parsed.duplicates]
    if wrong := _keys(data, top, at, (), "the file"):
        issues += wrong
    else:
        issues += _problems(data, at)
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
