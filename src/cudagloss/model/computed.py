"""A computed table: values a tool of NVIDIA's computed per compute capability, as a file of the
project's computed/ folder holds them (computed/compute-capabilities.json, written by
`make generations`, verifier/generations.py), and shown as a table on the pages that cite it.

The file is untrusted like a measurement file: it is read only as strict JSON of a bounded
size (cudagloss.text.strictjson), every value is held to its shape, and nothing in it is
evaluated or opened. Problems are diagnostics at the line and column of the value at fault.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cudagloss.errors import Diagnostic, GlossaryError
from cudagloss.text.strictjson import JsonProblem, Where, line_col, parse

MAX_FILE_BYTES = 256 * 1024
"""The largest computed file read; the committed one is a few KiB."""
MAX_LIST = 64
"""Ints in one list value (the carveout sizes are ten)."""
MAX_REPORTED = 50
HINT = "computed files are written by `make generations`; run it again rather than editing the file"
CC_PATTERN = re.compile(r"\d{1,2}\.\d")
ENUM_PATTERN = re.compile(r"[A-Z_]{1,64}")
NAME_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")
"""A provenance key or a function name."""
TEXT_MAX = 2000
STATED = {
    "header": re.compile(r"[^\n]{1,400}"),
    "header_sha256": re.compile(r"[0-9a-f]{64}"),
    "cuda_version": re.compile(r"\d{1,6}"),
    "compiler": re.compile(r"[^\n]{1,200}"),
    "nvrtc_version": re.compile(r"\d{1,3}\.\d{1,3}"),
    "computed_at": re.compile(r"\d{4}-\d\d-\d\dT[0-9:.]{1,20}Z"),
}
"""What a page says of where the values come from, each as it must be written."""

Value = int | str | tuple[int, ...]


class ComputedError(GlossaryError):
    """A computed file that cannot be used: every problem found, in the order of the file."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        super().__init__(diagnostics)
        self.diagnostics = diagnostics

    @classmethod
    def one(cls, shown: str, message: str, line: int = 1, col: int = 1) -> ComputedError:
        return cls([Diagnostic(shown, line, col, message, HINT)])

    def __str__(self) -> str:
        return "\n".join(f"{d.path}:{d.line}:{d.col}: {d.message}" for d in self.diagnostics)


@dataclass(frozen=True)
class ComputedTable:
    """One computed file: what made it, and each compute capability's values by function."""

    name: str
    provenance: dict[str, Any]
    functions: tuple[str, ...]
    values: dict[str, dict[str, Value]]

    def capabilities(self) -> list[str]:
        """The compute capabilities in numeric order (7.5 before 10.0)."""
        return sorted(self.values, key=lambda cc: tuple(int(p) for p in cc.split(".")))


def read_computed_text(path: Path, shown: str) -> str:
    """A computed file's text, refusing a link, anything but a regular file, more than
    MAX_FILE_BYTES (before a byte is parsed) and bytes that are not UTF-8."""
    try:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            raise ComputedError.one(shown, "is a symbolic link; computed files are plain files")
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise ComputedError.one(shown, f"cannot read: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ComputedError.one(shown, "is not a regular file")
        if info.st_size > MAX_FILE_BYTES:
            raise ComputedError.one(shown, f"is larger than {MAX_FILE_BYTES:,} bytes, the limit for a computed file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ComputedError.one(shown, f"cannot read: {exc.strerror}") from None
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES:
        raise ComputedError.one(shown, f"is larger than {MAX_FILE_BYTES:,} bytes, the limit for a computed file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ComputedError.one(shown, f"is not UTF-8: byte 0x{data[exc.start]:02X} at byte {exc.start}") from None


def _text_ok(value: object) -> bool:
    return isinstance(value, str) and len(value) <= TEXT_MAX


def _provenance_problem(key: str, value: object) -> str | None:
    if not NAME_PATTERN.fullmatch(key):
        return "is not a name like 'cuda_version'"
    if key == "inputs":
        ok = isinstance(value, dict) and all(NAME_PATTERN.fullmatch(k) and _text_ok(v) for k, v in value.items())
        return None if ok else "must map function names to strings"
    if key == "functions":
        names = value if isinstance(value, list) and 0 < len(value) <= MAX_LIST else [None]
        ok = all(isinstance(v, str) and NAME_PATTERN.fullmatch(v) for v in names) and len(set(names)) == len(names)
        return None if ok else "must be a list of distinct function names"
    listed = isinstance(value, list) and len(value) <= MAX_LIST and all(_text_ok(v) for v in value)
    if isinstance(value, bool) or not (isinstance(value, int) or _text_ok(value) or listed):
        return "must be a string, a whole number or a list of strings"
    return None


def _value_problem(value: object) -> str | None:
    if isinstance(value, bool):
        return "must be a whole number, a name in capitals like 'PARTITIONED_GC_SUPPORTED' or a list of whole numbers"
    if isinstance(value, int) or (isinstance(value, str) and ENUM_PATTERN.fullmatch(value)):
        return None
    if isinstance(value, list):
        if len(value) > MAX_LIST:
            return f"is a list of {len(value):,} values; at most {MAX_LIST} are allowed"
        if all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            return None
    return "must be a whole number, a name in capitals like 'PARTITIONED_GC_SUPPORTED' or a list of whole numbers"


def parse_computed(text: str, shown: str, name: str) -> ComputedTable:
    """Parse and check one computed file's text; raise ComputedError (naming shown) with every
    problem found, each at the line and column of the value at fault."""
    if len(text.encode("utf-8")) > MAX_FILE_BYTES:
        raise ComputedError.one(shown, f"is larger than {MAX_FILE_BYTES:,} bytes, the limit for a computed file")
    try:
        parsed = parse(text, max_depth=4, max_values=20_000)
    except JsonProblem as exc:
        raise ComputedError.one(shown, f"not valid JSON: {exc.message}", *line_col(text, exc.offset)) from None
    issues: list[tuple[int, str]] = [(at, f"repeats the key '{key}'") for at, key in parsed.duplicates]
    data, where = parsed.value, parsed.where

    def at(*path: str | int, key: bool = False) -> int:
        return where.offset(path, key=key) if isinstance(where, Where) else 0

    if not isinstance(data, dict) or set(data) != {"provenance", "values"}:
        raise ComputedError.one(shown, "must be an object with exactly the keys 'provenance' and 'values'")
    provenance, values = data["provenance"], data["values"]
    functions: list[str] = []
    if not isinstance(provenance, dict):
        issues.append((at("provenance"), "'provenance' must be an object"))
    else:
        for key, value in provenance.items():
            if (problem := _provenance_problem(key, value)) is not None:
                issues.append((at("provenance", key), f"provenance '{key[:64]}' {problem}"))
        for key in (k for k in STATED if not STATED[k].fullmatch(str(provenance.get(k, "")))):
            issues.append((at("provenance", key), f"provenance '{key}' is missing or not like '{STATED[key].pattern}'"))
        if "functions" not in provenance:
            issues.append((at("provenance"), "provenance has no 'functions', the functions the values are named by"))
        elif isinstance(provenance["functions"], list):
            functions = [f for f in provenance["functions"] if isinstance(f, str)]
    if not isinstance(values, dict) or not values:
        issues.append((at("values"), "'values' must be an object of compute capabilities like '9.0'"))
        values = {}
    for cc, row in values.items():
        if not CC_PATTERN.fullmatch(cc):
            issues.append((at("values", cc, key=True), f"'{cc[:16]}' is not a compute capability like '9.0'"))
            continue
        if not isinstance(row, dict):
            issues.append((at("values", cc), f"the values of {cc} must be an object of functions"))
            continue
        for function, value in row.items():
            if function not in functions:
                message = f"'{function[:64]}' is not one of provenance 'functions'"
                issues.append((at("values", cc, function, key=True), message))
            elif (problem := _value_problem(value)) is not None:
                issues.append((at("values", cc, function), f"{cc} {function} {problem}"))
    if issues:
        issues.sort(key=lambda i: i[0])
        found = [Diagnostic(shown, *line_col(text, offset), message, HINT) for offset, message in issues[:MAX_REPORTED]]
        if len(issues) > MAX_REPORTED:
            found.append(Diagnostic(shown, 1, 1, f"and {len(issues) - MAX_REPORTED:,} more problems not shown", HINT))
        raise ComputedError(found)
    rows = {cc: {f: tuple(v) if isinstance(v, list) else v for f, v in row.items()} for cc, row in values.items()}
    return ComputedTable(name, dict(provenance), tuple(functions), rows)
