"""The instruction-availability file (computed/instruction-availability.json): the committed
file reads, and each hostile variant is refused with a diagnostic at the value at fault,
all problems at once (capped), none of them a traceback."""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT
from cudagloss.errors import Diagnostic
from cudagloss.model.availability import MAX_FEATURES, MAX_TARGETS, AvailabilityTable, parse_availability
from cudagloss.model.computed import MAX_FILE_BYTES, MAX_REPORTED, ComputedError
from cudagloss.model.computed_set import ComputedSet

NAME = "instruction-availability"
COMMITTED = ROOT / "computed" / f"{NAME}.json"
SHOWN = f"computed/{NAME}.json"


@functools.cache
def _committed_text() -> str:
    return COMMITTED.read_text(encoding="utf-8")


def _data() -> Any:
    return copy.deepcopy(json.loads(_committed_text()))


def _refused_text(text: str) -> list[Diagnostic]:
    with pytest.raises(ComputedError) as caught:
        parse_availability(text, SHOWN, NAME)
    found = caught.value.diagnostics
    assert found and all(d.path == SHOWN and d.hint for d in found)
    return found


def _refused(data: Any) -> tuple[list[Diagnostic], list[str]]:
    text = json.dumps(data, indent=2)
    return _refused_text(text), text.splitlines()


def _at(d: Diagnostic, lines: list[str]) -> str:
    """The text from the diagnostic's line and column to the end of that line."""
    return lines[d.line - 1][d.col - 1 :]


def _one(data: Any, starts: str, message: str) -> Diagnostic:
    """The only diagnostic: its message contains message, and its place starts with starts."""
    found, lines = _refused(data)
    assert [message in d.message for d in found] == [True], [d.message for d in found]
    assert _at(found[0], lines).startswith(starts), (_at(found[0], lines), found[0])
    return found[0]


def _rename_feature(data: Any, old: str, new: str) -> None:
    """Give a feature another id, in the list and in every row, keeping the rows' order."""
    next(f for f in data["features"] if f["id"] == old)["id"] = new
    for target, row in data["values"].items():
        data["values"][target] = {new if k == old else k: v for k, v in row.items()}


def test_the_committed_file_reads() -> None:
    data = _data()
    table, found = ComputedSet(ROOT / "computed", ROOT).get(NAME)
    assert found == [] and isinstance(table, AvailabilityTable)
    assert table.provenance == data["provenance"]
    assert [f.__dict__ for f in table.features] == data["features"]
    assert table.values == data["values"]
    assert {f: {t: list(v) for t, v in rows.items()} for f, rows in table.sass.items()} == data["sass"]
    assert len(table.features) >= 20 and len(table.values) >= 20


def test_not_json_is_refused() -> None:
    text = _committed_text().replace('"compiled"', "compiled", 1)
    (d,) = _refused_text(text)
    assert "not valid JSON" in d.message
    assert text.splitlines()[d.line - 1][d.col - 1 :].startswith("compiled")


def test_nan_is_refused() -> None:
    data = _data()
    data["values"]["sm_90"]["wgmma"] = float("nan")
    text = json.dumps(data, indent=2)
    (d,) = _refused_text(text)
    assert "not valid JSON" in d.message and "NaN" in d.message
    assert _at(d, text.splitlines()).startswith("NaN")


def test_a_repeated_key_is_refused_where_it_repeats() -> None:
    text = json.dumps(_data(), indent=2)
    first = text.index('"ptx": ')
    text = text[:first] + '"ptx": "x",\n      ' + text[first:]
    (d,) = _refused_text(text)
    assert d.message == "repeats the key 'ptx'"
    assert (d.line, d.col) == (text[:first].count("\n") + 2, 7)


def test_a_missing_top_level_key_is_refused() -> None:
    data = _data()
    del data["values"]
    (d,), _ = _refused(data)
    assert "exactly the keys" in d.message and (d.line, d.col) == (1, 1)


def test_an_extra_top_level_key_is_refused_at_the_key() -> None:
    data = _data()
    data["extra"] = 1
    _one(data, '"extra": 1', "'extra'")


@pytest.mark.parametrize("top", [[], "x", 1, None])
def test_a_document_that_is_not_an_object_is_refused(top: object) -> None:
    (d,), _ = _refused(top)
    assert "must be an object" in d.message and (d.line, d.col) == (1, 1)


def test_provenance_missing_a_key_is_refused_at_the_provenance() -> None:
    data = _data()
    del data["provenance"]["tool"]
    _one(data, "{", "exactly the keys")


def test_provenance_with_an_extra_key_is_refused_at_the_key() -> None:
    data = _data()
    data["provenance"]["by"] = "me"
    _one(data, '"by": "me"', "'by'")


@pytest.mark.parametrize("when", ["yesterday", "2026-12-05", "2026-12-05T20:10:42Z\n", 20261205, None])
def test_a_bad_computed_at_is_refused_at_the_value(when: object) -> None:
    data = _data()
    data["provenance"]["computed_at"] = when
    _one(data, json.dumps(when), "computed_at")


def _with_features(data: Any, count: int) -> None:
    """count features (copies of the first, ids f0, f1...), each with a verdict in every row."""
    first = data["features"][0]
    data["features"] = [{**first, "id": f"f{i}"} for i in range(count)]
    for target in data["values"]:
        data["values"][target] = {f"f{i}": "compiled" for i in range(count)}
    data["sass"] = {}


@pytest.mark.parametrize("count", [0, MAX_FEATURES + 1])
def test_too_few_or_too_many_features_are_refused_at_the_list(count: int) -> None:
    data = _data()
    _with_features(data, count)
    _one(data, "[" if count else "[]", "'features' must be a list")


def test_as_many_features_as_allowed_read() -> None:
    data = _data()
    _with_features(data, MAX_FEATURES)
    assert len(parse_availability(json.dumps(data, indent=2), SHOWN, NAME).features) == MAX_FEATURES


def test_features_that_are_not_a_list_are_refused() -> None:
    data = _data()
    data["features"] = {"ldmatrix": data["features"][0]}
    found, lines = _refused(data)
    assert "'features' must be a list" in found[0].message and _at(found[0], lines).startswith("{")
    assert len(found) == 1  # the rows are not each refused again for naming unknown features


def test_a_feature_missing_a_field_is_refused_at_the_feature() -> None:
    data = _data()
    del data["features"][3]["term"]
    d = _one(data, "{", "exactly the keys")
    assert json.dumps(data, indent=2).splitlines()[d.line].strip() == f'"id": "{data["features"][3]["id"]}",'


def test_a_feature_with_an_extra_field_is_refused_at_the_field() -> None:
    data = _data()
    data["features"][2]["run"] = "rm -rf /"
    _one(data, '"run": "rm -rf /"', "'run'")


def test_a_feature_that_is_not_an_object_is_refused() -> None:
    data = _data()
    data["features"][0] = "ldmatrix"
    _one(data, '"ldmatrix"', "exactly the keys")


def test_a_repeated_feature_id_is_refused_at_the_second() -> None:
    data = _data()
    second = data["features"][1]["id"]
    data["features"][1]["id"] = data["features"][0]["id"]
    for row in data["values"].values():
        del row[second]
    d = _one(data, f'"{data["features"][0]["id"]}"', "listed twice")
    assert d.line > _one_line(data, '"id": ')


def _one_line(data: Any, fragment: str) -> int:
    return next(i for i, line in enumerate(json.dumps(data, indent=2).splitlines(), 1) if fragment in line)


@pytest.mark.parametrize("bad", ["LdMatrix", "ld matrix", "ldmatrix-", "-x", "", "a" * 3 + "-a" * 8, "é"])
def test_a_feature_id_not_like_a_slug_is_refused_at_the_id(bad: str) -> None:
    data = _data()
    _rename_feature(data, "stmatrix", bad)
    _one(data, json.dumps(bad), "feature 'id'")


@pytest.mark.parametrize(
    ("field", "bad"),
    [
        ("ptx", "mma.sync\n.aligned"),
        ("ptx", ""),
        ("label", "x" * 301),
        ("term", "Tensor Core"),
        ("source", "__global__ void k() {}\x00"),
        ("source", "x" * 4001),
        ("source", ""),
        ("ptx", 12),
        ("label", None),
        ("source", ["int x;"]),
        ("id", 7),
        ("id", None),
    ],
)
def test_a_bad_feature_field_is_refused_at_the_value(field: str, bad: object) -> None:
    data = _data()
    data["features"][5][field] = bad
    _one(data, "[" if isinstance(bad, list) else json.dumps(bad)[:20], f"feature '{field}'")


@pytest.mark.parametrize("field", ["label", "ptx", "term", "source"])
@pytest.mark.parametrize("bad", ["\ud800", "a\u202eb", "\x1b[31m", "a\rb"])
def test_a_feature_field_with_an_unseen_character_is_refused(field: str, bad: str) -> None:
    """A lone surrogate (JSON's \\ud800) would crash the page's writer; controls and
    direction marks hide what a reader sees. Only newline and tab may be in a kernel's source."""
    data = _data()
    data["features"][5][field] = bad
    _one(data, json.dumps(bad), f"feature '{field}'")


@pytest.mark.parametrize("field", ["label", "ptx"])
def test_a_one_line_field_with_a_tab_is_refused(field: str) -> None:
    data = _data()
    data["features"][2][field] = "a\tb"
    _one(data, '"a\\tb"', f"feature '{field}'")


def test_a_source_may_have_tabs_and_newlines() -> None:
    data = _data()
    data["features"][0]["source"] = "\n__global__ void k() {\n\treturn;\n}\n"
    assert parse_availability(json.dumps(data, indent=2), SHOWN, NAME).features[0].source.startswith("\n")


def test_empty_values_are_refused() -> None:
    data = _data()
    data["values"] = {}
    _one(data, "{}", "'values' must be an object")


def test_too_many_targets_are_refused() -> None:
    data = _data()
    row = data["values"]["sm_90"]
    data["values"] = {f"sm_{100 + i}": dict(row) for i in range(MAX_TARGETS + 1)}
    _one(data, "{", "'values' must be an object")


@pytest.mark.parametrize(
    "bad", ["compute_90", "sm_9", "sm_90x", "sm_1000", "SM_90", "sm_90 ", "sm_090", "sm_\u0669\u0660"]
)
def test_a_target_not_like_sm_90a_is_refused_at_its_key(bad: str) -> None:
    data = _data()
    data["values"][bad] = data["values"].pop("sm_89")
    _one(data, json.dumps(bad) + ":", "is not a target like")


def test_a_suffixed_target_without_its_plain_target_is_refused() -> None:
    """The page has a column per plain target: sm_90a's verdicts would not be shown."""
    data = _data()
    del data["values"]["sm_90"]
    _one(data, '"sm_90a": {', "sm_90")


def test_a_target_with_escape_characters_is_quoted_in_the_message() -> None:
    data = _data()
    data["values"]["\x1b[2J"] = data["values"].pop("sm_89")
    (d,), _ = _refused(data)
    assert "\x1b" not in d.message and "\\x1b" in d.message


def test_a_row_missing_a_feature_is_refused_at_the_row() -> None:
    data = _data()
    del data["values"]["sm_100"]["wgmma"]
    _one(data, "{", "sm_100 must give a verdict for every feature")
    assert _one_line(data, '"sm_100": {') == _refused(data)[0][0].line


def test_a_row_with_an_unknown_feature_is_refused_at_its_key() -> None:
    data = _data()
    data["values"]["sm_100"]["made-up"] = "compiled"
    _one(data, '"made-up": "compiled"', "made-up")


def test_a_row_that_is_not_an_object_is_refused() -> None:
    data = _data()
    data["values"]["sm_86"] = ["compiled"]
    _one(data, "[", "sm_86 must give a verdict")


@pytest.mark.parametrize(
    "bad",
    [
        "yes",
        "ptxas: a\nb",
        "ptxas: " + "x" * 400,
        "ptxas: ",
        "nvcc: no",
        " ptxas: x",
        "compiled ",
        "ptxas: \ud800",
        "ptxas: a\u2028b",
        1,
        None,
        True,
        {"ptxas": "x"},
    ],
)
def test_a_verdict_that_is_neither_compiled_nor_one_refusal_line_is_refused(bad: object) -> None:
    data = _data()
    data["values"]["sm_90a"]["stmatrix"] = bad
    _one(data, "{" if isinstance(bad, dict) else json.dumps(bad)[:12], "sm_90a stmatrix: must be 'compiled'")


def test_nesting_deeper_than_the_bound_is_refused_without_recursion() -> None:
    text = '{"provenance": ' + "[" * 100_000 + "]" * 100_000 + ', "features": [], "values": {}}'
    (d,) = _refused_text(text)
    assert "not valid JSON: nested deeper than 4 levels" in d.message and (d.line, d.col) == (1, 19)


def test_a_field_nested_one_level_too_deep_is_refused() -> None:
    data = _data()
    data["features"][0]["ptx"] = [["x"]]
    found, lines = _refused(data)
    assert len(found) == 1 and "nested deeper" in found[0].message
    assert lines[found[0].line - 1].strip() == "["  # the inner list, on its own line


def test_a_huge_number_of_values_is_refused() -> None:
    data = _data()
    data["features"] = [0] * 30_000
    text = json.dumps(data, separators=(",", ":"))
    assert len(text.encode()) < MAX_FILE_BYTES
    (d,) = _refused_text(text)
    assert "more than 20,000 values" in d.message and d.line == 1


def test_a_file_over_the_size_limit_is_refused_before_parsing() -> None:
    data = _data()
    data["features"][0]["label"] = "x" * MAX_FILE_BYTES
    (d,) = _refused_text(json.dumps(data))
    assert "larger than 262,144 bytes" in d.message


def test_every_problem_is_reported_at_once() -> None:
    data = _data()
    data["provenance"]["nvrtc_version"] = "thirteen"
    data["features"][7]["ptx"] = "a\nb"
    data["values"]["sm_75"]["ldmatrix"] = "yes"
    found, lines = _refused(data)
    assert list(data) == ["features", "provenance", "sass", "values"]  # the order of the lines
    assert [(_at(d, lines)[:8], d.message[:24]) for d in found] == [
        ('"a\\nb",', "feature 'ptx' is not lik"),
        ('"thirtee', "provenance 'nvrtc_versio"),
        ('"yes",', "sm_75 ldmatrix: must be "),
    ]


def test_a_thousand_problems_are_capped() -> None:
    data = _data()
    count = 0
    for row in data["values"].values():
        for fid in row:
            row[fid], count = "yes", count + 1
    found, lines = _refused(data)
    assert count > MAX_REPORTED + 10 and len(found) == MAX_REPORTED + 1
    assert all(_at(d, lines) == '"yes",' or _at(d, lines) == '"yes"' for d in found[:-1])
    assert [d.line for d in found[:-1]] == sorted(d.line for d in found[:-1])
    assert found[-1].message == f"and {count - MAX_REPORTED:,} more problems"


def test_a_linked_file_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "computed"
    folder.mkdir()
    (tmp_path / "elsewhere.json").write_text(_committed_text(), encoding="utf-8")
    (folder / f"{NAME}.json").symlink_to(tmp_path / "elsewhere.json")
    table, found = ComputedSet(folder, tmp_path).get(NAME)
    assert table is None and [d.message for d in found] == ["is a symbolic link; computed files are plain files"]


def test_an_oversized_file_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "computed"
    folder.mkdir()
    (folder / f"{NAME}.json").write_text(_committed_text() + " " * MAX_FILE_BYTES, encoding="utf-8")
    table, found = ComputedSet(folder, tmp_path).get(NAME)
    assert table is None and len(found) == 1 and "larger than 262,144 bytes" in found[0].message


def test_a_copy_of_the_committed_file_reads_through_the_set(tmp_path: Path) -> None:
    folder = tmp_path / "computed"
    folder.mkdir()
    (folder / f"{NAME}.json").write_text(_committed_text(), encoding="utf-8")
    table, found = ComputedSet(folder, tmp_path).get(NAME)
    assert found == [] and table is not None and table.name == NAME


def test_sass_of_a_feature_or_target_the_table_does_not_have_is_refused_at_its_key() -> None:
    data = _data()
    data["sass"]["no-such-feature"] = {}
    _one(data, '"no-such-feature"', "is not one of the features")
    data = _data()
    data["sass"]["mma-f64"]["sm_75"] = ["DMMA.884 R4, R2, R2, R4"]  # mma-f64 was refused for sm_75
    _one(data, '"sm_75"', "did not compile for 'sm_75'")


@pytest.mark.parametrize("lines", [["HMMA"] * 17, ["HMMA\nR1"], [7], "HMMA", ["\u202eAMMH"]])
def test_sass_lines_past_their_bounds_are_refused_at_the_list(lines: Any) -> None:
    data = _data()
    data["sass"]["mma-f16"]["sm_90"] = lines
    _one(data, "[" if isinstance(lines, list) else '"HMMA"', "at most 16 instructions, each one line")


def test_sass_that_is_not_an_object_is_one_problem() -> None:
    data = _data()
    data["sass"] = ["HMMA"]
    _one(data, "[", "'sass' must be an object")
