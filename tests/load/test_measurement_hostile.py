"""Hostile measurement files: anything a pull request can put under measurements/ is a
diagnostic at its measurements/...:line:col, never a traceback, a hang or a published value.

Each case edits one spot of a file written the way make verify writes it, and asserts the
diagnostic lands on that spot; the position is counted here from the edited text, not asked
of the parser. The whole-file cases (encodings, sizes, nesting) and the names of files and
folders follow, then the command line on a folder of them.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import ROOT
from cudagloss.errors import Diagnostic
from cudagloss.load.measurements import load_measurements
from cudagloss.model.measurement import MAX_DEPTH, MAX_FILE_BYTES, Gate, Measurement, Result
from cudagloss.model.measurement_rules import fit_text
from cudagloss.model.measurements import MeasurementSet

SHOWN = "measurements/ptx-jit/node-a.json"


def verifier_like() -> Measurement:
    return Measurement(
        experiment="ptx-jit",
        purpose="JIT-compile PTX in a fresh process",
        code_hash="sha256:" + "ab" * 32,
        status="ok",
        provenance={
            "node": "node-a",
            "gpu_name": "NVIDIA H200",
            "sm_count": 132,
            "git_dirty": False,
            "recorded_at": "2026-12-03T02:57:46+00:00",
            "duration_s": 6.024,
        },
        gates=[Gate("ptx loads on this driver", True, ""), Gate("the user's own JIT cache was not touched", True)],
        results=[
            Result("load_warm_cache_median", 0.3024, "ms", "load from a warm JIT cache (median)", [0.35, 0.27]),
            Result("blocks_per_sm", 8, "blocks", "active blocks per SM"),
            Result("ptx_isa_version", "9.0", "", "PTX ISA version"),
        ],
    )


BASE = verifier_like().to_json()


def load(tmp_path: Path, files: dict[str, bytes]) -> tuple[MeasurementSet, list[Diagnostic]]:
    folder = tmp_path / "measurements" / "ptx-jit"
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return load_measurements(tmp_path / "measurements", tmp_path)


def assert_refused(found: MeasurementSet, diags: list[Diagnostic], path: str, line: int, col: int, part: str) -> None:
    hits = [d for d in diags if d.path == path and (d.line, d.col) == (line, col) and part in d.message]
    assert hits, f"no {path}:{line}:{col}: …{part}… in\n" + "\n".join(d.format() for d in diags)
    assert all(not d.warning and d.hint for d in diags)
    record = found.get("ptx-jit")
    assert record is None or not record.measured, "a refused file must not be published"


@dataclass(frozen=True)
class Edit:
    old: str
    """Text of BASE to replace (its first occurrence)."""
    new: str
    anchor: str
    """Where in new the diagnostic must point (the first occurrence of this text)."""
    part: str
    """Part of the diagnostic's message."""


EDITS = {
    # Numbers: finite, in range, and numbers.
    "nan": Edit('"value": 8,', '"value": NaN,', "NaN", "NaN is not a JSON number"),
    "infinity-sample": Edit("0.35,", "Infinity,", "Infinity", "Infinity is not a JSON number"),
    "minus-infinity": Edit('"duration_s": 6.024', '"duration_s": -Infinity', "-Inf", "-Infinity is not"),
    "1e999": Edit('"value": 8,', '"value": 1e999,', "1e999", "too large to be a finite number"),
    "-1e999-sample": Edit("0.27\n", "-1e999\n", "-1e999", "too large to be a finite number"),
    "huge-float": Edit('"value": 0.3024', '"value": 1e300', "1e300", "is 1e+300, beyond ±2^53"),
    "huge-int": Edit('"value": 8,', '"value": 1000000000000000000000000000000,', "1000", "beyond ±2^53"),
    "5000-digit-int": Edit('"sm_count": 132', '"sm_count": ' + "9" * 5000, "999", "5,000 characters long"),
    "text-sample": Edit("0.35,", '"0.35",', '"0.35"', "must be a number, not text"),
    "object-sample": Edit("0.35,", '{"a": 1},', "{", "must be a number, not an object"),
    "bool-sample": Edit("0.35,", "true,", "true", "must be a number, not true/false"),
    "object-value": Edit('"value": 8,', '"value": {"x": 1},', "{", "not an object"),
    "array-value": Edit('"value": 8,', '"value": [8],', "[", "not an array"),
    "passed-text": Edit('"passed": true', '"passed": "yes"', '"yes"', "must be true or false, not text"),
    "passed-number": Edit('"passed": true', '"passed": 1', "1", "must be true or false, not a number"),
    "version-true": Edit('"format_version": 1', '"format_version": true', '"', "format version True is not known"),
    "version-float": Edit('"format_version": 1', '"format_version": 1.0', '"', "format version 1.0 is not known"),
    "version-text": Edit('"format_version": 1', '"format_version": "1"', '"', "format version '1' is not known"),
    # Objects, arrays and numbers where text goes; lengths.
    "object-gpu": Edit('"NVIDIA H200"', '{"a": "b"}', "{", "gpu_name: must be text, a number, true/false or null"),
    "number-unit": Edit('"unit": "ms"', '"unit": 5', "5", "unit: must be text, not a number"),
    "array-name": Edit('"name": "blocks_per_sm"', '"name": ["x"]', "[", "name: must be text, not an array"),
    "null-purpose": Edit('"purpose": "JIT', '"purpose": null, "x": "JIT', "null", "purpose: must be text, not null"),
    "long-gpu": Edit('"NVIDIA H200"', '"' + "G" * 201 + '"', '"G', "201 characters long; the limit is 200"),
    "long-description": Edit('"active blocks per SM"', '"' + "d" * 1001 + '"', '"d', "1,001 characters long"),
    "long-error": Edit('"error": null', '"error": "' + "e" * 20_001 + '"', '"eee', "20,001 characters long"),
    "results-object": Edit('"results": [', '"results": {}, "more": [', "{", "results: must be an array, not an object"),
    # Characters nobody sees, or that turn text around.
    "bell-gpu": Edit('"NVIDIA H200"', '"NVIDIA\\u0007H200"', '"NV', "U+0007"),
    "raw-control": Edit('"NVIDIA H200"', '"NVIDIA\x01H200"', "\x01", "a control character inside a string"),
    "rtl-override-gpu": Edit('"NVIDIA H200"', '"NVIDIA \\u202eH200"', '"NV', "U+202E (RIGHT-TO-LEFT OVERRIDE)"),
    "rtl-raw-gpu": Edit('"NVIDIA H200"', '"NVIDIA \u202eH200"', '"NV', "U+202E"),
    "bidi-isolate-detail": Edit('"detail": ""', '"detail": "a\u2066b"', '"a', "U+2066"),
    "zero-width-name": Edit('"blocks_per_sm"', '"blocks\u200b_per_sm"', '"blocks', "U+200B (ZERO WIDTH SPACE)"),
    "zero-width-joiner-unit": Edit('"unit": "ms"', '"unit": "m\u200ds"', '"m', "U+200D"),
    "bom-in-description": Edit('"active blocks', '"\ufeffactive blocks', '"', "U+FEFF"),
    "lone-surrogate": Edit('"detail": ""', '"detail": "\\ud800"', '"\\', "U+D800"),
    "line-separator": Edit('"purpose": "JIT', '"purpose": "\u2028JIT', '"\u2028', "U+2028"),
    "newline-gate-name": Edit('"ptx loads', '"ptx\\nloads', '"ptx', "U+000A"),
    "ansi-error": Edit('"error": null', '"error": "\\u001b[2J"', '"\\', "U+001B"),
    "nbsp-provenance": Edit('"NVIDIA H200"', '"NVIDIA\u00a0H200"', '"', "U+00A0"),
    # Markup in names: names are identifiers, units an alphabet; markup there is an error.
    "script-gate": Edit('"ptx loads on this driver"', '"<script>alert(1)</script>"', '"<', "is not a gate name"),
    "markdown-gate": Edit('"ptx loads on this driver"', '"[x](javascript:alert(1))"', '"[', "is not a gate name"),
    "script-unit": Edit('"unit": "ms"', '"unit": "<script>"', '"<', "is not a unit"),
    "script-result-name": Edit('"blocks_per_sm"', '"<script>"', '"<', "is not a result name"),
    "upper-result-name": Edit('"blocks_per_sm"', '"Blocks"', '"B', "is not a result name"),
    "script-node": Edit('"node": "node-a"', '"node": "<script>"', '"<', "is not a node name"),
    "traversal-node": Edit('"node": "node-a"', '"node": "../../etc"', '"..', "is not a node name"),
    "failed-node": Edit('"node": "node-a"', '"node": "x.failed"', '"x', "is not a node name"),
    "traversal-experiment": Edit('"experiment": "ptx-jit"', '"experiment": "../x"', '"..', "is not an experiment id"),
    "script-code-hash": Edit('"code_hash": "sha256', '"code_hash": "<b>', '"<', "is not a hash"),
    "status-unknown": Edit('"status": "ok"', '"status": "done"', '"done"', "is not one of ok, failed, skipped"),
    "provenance-key": Edit('"gpu_name"', '"<b>"', '"<b>"', "is not a name like 'gpu_name'"),
    "provenance-list": Edit('"sm_count": 132', '"sm_count": [132]', "[", "not an array"),
    "provenance-date": Edit('"2026-12-03T02:57:46+00:00"', '"yesterday"', '"y', "is not an ISO 8601 date"),
    "provenance-many": Edit(
        '"sm_count": 132', ", ".join(f'"k{i}": {i}' for i in range(65)), "", "70 entries; the limit is 64"
    ),
    # Shape: unknown and missing fields, repeated keys and names.
    "unknown-field": Edit('"error": null', '"error": null,\n  "extra": 1', '"extra"', "unknown field 'extra'"),
    "escape-key": Edit('"unit": "ms"', '"\\u001b[2J": 1, "unit": "ms"', '"\\u', "unknown field '\\x1b[2J'"),
    "escape-provenance-key": Edit('"gpu_name"', '"a\\u001bb"', '"a', "provenance: 'a\\x1bb' is not a name"),
    "unknown-result-field": Edit('"unit": "ms"', '"html": "<b>", "unit": "ms"', '"html"', "unknown field 'html'"),
    "missing-name": Edit('"name": "blocks_per_sm",', "", "", "missing field 'name'"),
    "duplicate-top-key": Edit(
        '"status": "ok",', '"status": "ok", "status": "failed",', '"status": "f', "appears twice"
    ),
    "duplicate-provenance": Edit('"sm_count": 132,', '"sm_count": 132, "sm_count": 1,', '"sm_count": 1,', "twice"),
    "escaped-duplicate": Edit('"status": "ok",', '"status": "ok", "\\u0073tatus": "ok",', '"\\u', "appears twice"),
    "duplicate-result": Edit('"blocks_per_sm"', '"load_warm_cache_median"', '"', "appears twice"),
    # Text that is not JSON.
    "trailing-comma": Edit('"error": null,\n  "format_version": 1', '"error": null,}', "}", "not valid JSON"),
    "comment": Edit('"error": null,', '"error": null, // x', "//", "not valid JSON"),
    "single-quotes": Edit('"error": null', "'error': null", "'", "not valid JSON"),
    "python-literal": Edit('"error": null', '"error": None', "None", "not valid JSON"),
    "hex-number": Edit('"value": 8,', '"value": 0x8,', "x", "not valid JSON"),
    "plus-number": Edit('"value": 8,', '"value": +8,', "+", "not valid JSON"),
    "leading-zero": Edit('"value": 8,', '"value": 08,', "8,", "not valid JSON"),
    "bad-escape": Edit('"NVIDIA H200"', '"NVIDIA \\x41"', "\\x", "not valid JSON"),
    "trailing-data": Edit('"format_version": 1\n}', '"format_version": 1\n} <script>', "<", "more text after"),
    # E-mail addresses in any text (they would be published) and a recorded_at in the future.
    "email-gpu": Edit('"NVIDIA H200"', '"NVIDIA H200 (ada@example.org)"', '"NV', "gpu_name: holds an e-mail"),
    "email-purpose": Edit('"JIT-compile', '"mail ops@gpu.example.com to JIT-compile', '"m', "purpose: holds an e-mail"),
    "email-description": Edit('"active blocks', '"<ada@lab.example> active blocks', '"<', "description: holds an e"),
    "email-text-value": Edit('"9.0"', '"9.0 built by \\"b.c\\"@example.org"', '"9', "value: holds an e-mail"),
    "email-ip-detail": Edit('"detail": ""', '"detail": "charles@[192.0.2.7]"', '"c', "detail: holds an e-mail"),
    "email-encoded-error": Edit('"error": null', '"error": "ada%40example.org"', '"a', "error: holds an e-mail"),
    "email-entity-node-gpu": Edit('"NVIDIA H200"', '"ada&#64;example.org"', '"a', "gpu_name: holds an e-mail"),
    "email-provenance-extra": Edit('"sm_count": 132', '"operator": "root@gpu01.example.org"', '"r', "operator: holds"),
    "future-recorded-at": Edit('"2026-12-03T02:57:46+00:00"', '"2999-01-01T00:00:00+00:00"', '"2', "is in the future"),
    "future-naive-recorded-at": Edit('"2026-12-03T02:57:46+00:00"', '"2999-01-01T00:00:00"', '"2', "in the future"),
    "future-date-only": Edit('"2026-12-03T02:57:46+00:00"', '"9999-12-31"', '"9', "in the future"),
    "future-far-zone": Edit('"2026-12-03T02:57:46+00:00"', '"9999-12-31T23:59:59-23:59"', '"9', "in the future"),
}


def _edit(edit: Edit) -> tuple[str, int, int]:
    at = BASE.index(edit.old)
    text = BASE[:at] + edit.new + BASE[at + len(edit.old) :]
    where = at + edit.new.index(edit.anchor) if edit.anchor else text.rfind("{", 0, at)
    return text, text.count("\n", 0, where) + 1, where - (text.rfind("\n", 0, where) + 1) + 1


def test_the_base_file_loads_and_is_what_the_verifier_wrote(tmp_path: Path) -> None:
    found, diags = load(tmp_path, {"node-a.json": BASE.encode()})
    assert diags == []
    record = found.get("ptx-jit")
    assert record is not None and record.measured[0].good == verifier_like()


@pytest.mark.parametrize("case", list(EDITS), ids=list(EDITS))
def test_an_edited_value_is_refused_where_it_stands(tmp_path: Path, case: str) -> None:
    text, line, col = _edit(EDITS[case])
    found, diags = load(tmp_path, {"node-a.json": text.encode()})
    if "format version" in EDITS[case].part:
        line, col = 1, 1  # the whole file is in a format this tool does not read
    assert_refused(found, diags, SHOWN, line, col, EDITS[case].part)


def _upto(prefix: str) -> tuple[int, int]:
    """The line and column just after prefix."""
    return prefix.count("\n") + 1, len(prefix) - prefix.rfind("\n")


_GPU = BASE.index("H200") + 1
_CUT = BASE.index('"value": 8') + len('"value": ')
WHOLE = {
    "empty": (b"", (1, 1), "the file is empty"),
    "white-space": (b"  \n\t\n", (3, 1), "only white space"),
    "bom": (b"\xef\xbb\xbf" + BASE.encode(), (1, 1), "byte-order mark"),
    "utf-16": (BASE.encode("utf-16"), (1, 1), "is not UTF-8: byte 0xFF"),
    "invalid-utf-8": (BASE[:_GPU].encode() + b"\xff" + BASE[_GPU:].encode(), _upto(BASE[:_GPU]), "not UTF-8"),
    "truncated-utf-8": (BASE.encode()[:-3] + "×".encode()[:1], _upto(BASE[:-3]), "not UTF-8: byte 0xC3"),
    "truncated-json": (BASE[:_CUT].encode(), _upto(BASE[:_CUT]), "expected a JSON value here, found the end"),
    "unterminated-string": (BASE[: _GPU + 2].encode(), _upto(BASE[: BASE.index('"NVIDIA')]), "never ends"),
    "array": (b"[1, 2]", (1, 1), "must be a JSON object, not an array"),
    "string": (b'"<script>"', (1, 1), "must be a JSON object, not text"),
    "number": (b"  42", (1, 3), "must be a JSON object, not a number"),
    "null": (b"null", (1, 1), "must be a JSON object, not null"),
    "deep-arrays": (b"[" * 10_000 + b"]" * 10_000, (1, MAX_DEPTH + 1), f"nested deeper than {MAX_DEPTH} levels"),
    "deep-objects": (
        b'{"a":' * 10_000 + b"1" + b"}" * 10_000,
        (1, 5 * MAX_DEPTH + 1),
        f"nested deeper than {MAX_DEPTH} levels",
    ),
    "deep-in-provenance": (
        BASE.replace('"sm_count": 132', '"sm_count": ' + "[" * 10_000).encode(),
        _upto(BASE[: BASE.index('"sm_count": 132')] + '"sm_count": ' + "[" * (MAX_DEPTH - 2)),
        f"nested deeper than {MAX_DEPTH} levels",
    ),
    "only-a-version": (b'{"format_version": 1}', (1, 1), "missing field 'experiment'"),
}


@pytest.mark.parametrize("case", list(WHOLE), ids=list(WHOLE))
def test_a_hostile_file_is_refused_where_it_goes_wrong(tmp_path: Path, case: str) -> None:
    data, (line, col), part = WHOLE[case]
    found, diags = load(tmp_path, {"node-a.json": data})
    assert_refused(found, diags, SHOWN, line, col, part)


def test_every_problem_in_a_file_is_reported_at_once(tmp_path: Path) -> None:
    text = BASE.replace('"value": 8', '"value": 1e999').replace('"unit": "ms"', '"unit": "<i>"')
    text = text.replace('"NVIDIA H200"', '"\u202e"').replace('"status": "ok"', '"status": 1')
    _, diags = load(tmp_path, {"node-a.json": text.encode()})
    assert len(diags) == 4 and len({(d.line, d.col) for d in diags}) == 4


def test_a_file_of_many_problems_reports_the_first_fifty_and_a_count(tmp_path: Path) -> None:
    text = BASE.replace("0.35,", "true, " * 99_998 + "0.35,")
    _, diags = load(tmp_path, {"node-a.json": text.encode()})
    assert len(diags) == 51 and diags[-1].message == "and 99,948 more problems not shown"
    assert [d.col for d in diags[:3]] == [9, 15, 21]


def test_a_file_just_over_the_size_limit_is_refused_unread(tmp_path: Path) -> None:
    folder = tmp_path / "measurements" / "ptx-jit"
    folder.mkdir(parents=True)
    with open(folder / "node-a.json", "wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)  # sparse: no megabytes written
    found, diags = load(tmp_path, {})
    assert_refused(found, diags, SHOWN, 1, 1, f"larger than {MAX_FILE_BYTES:,} bytes")


def test_a_file_at_the_size_limit_is_parsed(tmp_path: Path) -> None:
    padded = BASE.replace('"error": null', '"error": null,"x":1' + " " * (MAX_FILE_BYTES - len(BASE.encode()) - 6))
    assert len(padded.encode()) == MAX_FILE_BYTES
    _, diags = load(tmp_path, {"node-a.json": padded.encode()})
    assert [d.message for d in diags] == ["the file: unknown field 'x'"]


NAMES = {
    "script": "<script>.json",
    "space": "node a.json",
    "dot-file": ".node-a.json",
    "no-node": ".json",
    "failed-failed": "x.failed.failed.json",
    "double-dot": "a..b.json",
    "escape": "a\x1b[2J.json",
    "rtl": "a\u202enoj.json",
    "newline": "a\nb.json",
    "non-ascii": "nöde.json",
}


@pytest.mark.parametrize("case", list(NAMES), ids=list(NAMES))
def test_a_file_name_that_is_not_a_node_is_refused_unread(tmp_path: Path, case: str) -> None:
    name = NAMES[case]
    found, diags = load(tmp_path, {name: b"not even JSON"})
    assert len(diags) == 1 and "is not named <node>.json" in diags[0].message
    shown = diags[0].path.removeprefix("measurements/ptx-jit/")
    assert shown.isascii() and shown.isprintable(), shown
    assert found.get("ptx-jit") is None


def test_undecodable_name_is_refused_and_shown_escaped(tmp_path: Path) -> None:
    folder = tmp_path / "measurements" / "ptx-jit"
    folder.mkdir(parents=True)
    os.close(os.open(os.fsencode(folder) + b"/\xff.json", os.O_CREAT | os.O_WRONLY))
    _, diags = load(tmp_path, {})
    assert [d.path for d in diags] == ["measurements/ptx-jit/\\udcff.json"]


@pytest.mark.parametrize("name", ["Bad Name", ".hidden", "<script>", "UPPER", "a_b"])
def test_an_experiment_folder_that_is_not_an_id_is_refused(tmp_path: Path, name: str) -> None:
    folder = tmp_path / "measurements" / name
    folder.mkdir(parents=True)
    (folder / "node-a.json").write_text(BASE.replace('"ptx-jit"', '"x"'))
    found, diags = load_measurements(tmp_path / "measurements", tmp_path)
    assert len(diags) == 1 and "is not named by an experiment id" in diags[0].message
    assert list(found) == []


def test_links_fifos_and_folders_are_refused_without_reading_them(tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text(BASE)
    folder = tmp_path / "measurements" / "ptx-jit"
    folder.mkdir(parents=True)
    (folder / "node-a.json").symlink_to(outside)
    os.mkfifo(folder / "node-b.json")  # opening it for reading would wait for a writer forever
    (folder / "node-c.json").mkdir()
    (tmp_path / "measurements" / "jit-cache").symlink_to(folder)
    found, diags = load(tmp_path, {})
    assert [(d.path, d.message) for d in diags] == [
        ("measurements/jit-cache", "is a symbolic link; measurement folders are plain folders"),
        ("measurements/ptx-jit/node-a.json", "is a symbolic link; measurement files are plain files"),
        ("measurements/ptx-jit/node-b.json", "is not a regular file"),
        ("measurements/ptx-jit/node-c.json", "is not a regular file"),
    ]
    assert not found.get("ptx-jit").measured  # type: ignore[union-attr]


def test_node_names_that_collide_on_a_page_are_refused(tmp_path: Path) -> None:
    other = BASE.replace('"node": "node-a"', '"node": "Node_A"')
    _, diags = load(tmp_path, {"node-a.json": BASE.encode(), "Node_A.json": other.encode()})
    assert [d.message for d in diags] == ["node 'node-a' cannot be told apart from node 'Node_A' on a page"]


def test_markup_in_a_gpu_name_is_kept_as_data(tmp_path: Path) -> None:
    text = BASE.replace('"NVIDIA H200"', '"<script>alert(1)</script> [x](javascript:y)"')
    found, diags = load(tmp_path, {"node-a.json": text.encode()})
    assert diags == []
    assert found.get("ptx-jit").measured[0].gpu == "<script>alert(1)</script> [x](javascript:y)"  # type: ignore[union-attr]


def test_the_command_line_reports_hostile_files_without_a_traceback(tmp_path: Path) -> None:
    folder = tmp_path / "measurements" / "ptx-jit"
    folder.mkdir(parents=True)
    (folder / "node-a.json").write_text(BASE.replace('"value": 8', '"value": NaN'))
    (folder / "node-b.json").write_text("[" * 100_000)
    (folder / "a\x1b]0;pwned\x07.json").write_text(BASE)
    run = subprocess.run(
        [sys.executable, "-m", "cudagloss", "values", "--measurements", "measurements"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        check=False,
    )
    assert run.returncode == 1 and "Traceback" not in run.stderr and "\x1b" not in run.stderr
    line, col = _upto(BASE[:_CUT])
    assert f"measurements/ptx-jit/node-a.json:{line}:{col}: not valid JSON: NaN is not a JSON number" in run.stderr
    assert (
        f"measurements/ptx-jit/node-b.json:1:{MAX_DEPTH + 1}: not valid JSON: nested deeper than {MAX_DEPTH} levels"
        in run.stderr
    )
    assert "measurements/ptx-jit/a\\x1b]0;pwned\\x07.json:1:1: is not named" in run.stderr
    assert "hint: measurement files are written by make verify" in run.stderr


def test_plain_at_signs_and_todays_stamps_are_not_refused(tmp_path: Path) -> None:
    """'sm_90@home', a Python matrix product, a decorator: no address; a recorded_at within
    the day's slack (another clock, another zone) passes."""
    soon = (dt.datetime.now(dt.UTC) + dt.timedelta(hours=20)).isoformat(timespec="seconds")
    text = (
        BASE.replace('"NVIDIA H200"', '"NVIDIA H200 sm_90@home"')
        .replace('"9.0"', '"y = a@b.T and @cuda.jit"')
        .replace('"2026-12-03T02:57:46+00:00"', f'"{soon}"')
    )
    found, diags = load(tmp_path, {"node-a.json": text.encode()})
    assert diags == []
    assert found.get("ptx-jit").measured  # type: ignore[union-attr]


def test_the_verifier_keeps_a_crash_log_but_not_the_address_in_it() -> None:
    assert fit_text("report to bugs@gpu.example.com, or <ops@lab>") == "report to [e-mail address], or [e-mail address]"
    assert fit_text("sm_90@home") == "sm_90@home"
