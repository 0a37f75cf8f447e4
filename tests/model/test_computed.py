"""Computed tables (computed/*.json): the committed file reads, and hostile files are refused
with a diagnostic at the value at fault."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import ROOT
from cudagloss.model.computed import MAX_FILE_BYTES, ComputedError, ComputedTable, parse_computed, read_computed_text
from cudagloss.model.computed_set import ComputedSet

COMMITTED = ROOT / "computed" / "compute-capabilities.json"


def _committed() -> dict[str, object]:
    data: dict[str, object] = json.loads(COMMITTED.read_text(encoding="utf-8"))
    return data


def _refused(data: object) -> ComputedError:
    text = json.dumps(data, indent=2)
    with pytest.raises(ComputedError) as caught:
        parse_computed(text, "computed/x.json", "x")
    return caught.value


def test_the_committed_file_reads() -> None:
    data = _committed()
    table = ComputedSet(ROOT / "computed", ROOT).get("compute-capabilities")
    assert table[1] == [] and isinstance(table[0], ComputedTable)
    t = table[0]
    assert t.provenance == data["provenance"]
    assert list(t.functions) == data["provenance"]["functions"]
    values = data["values"]
    assert isinstance(values, dict)
    rows = {cc: {f: list(v) if isinstance(v, tuple) else v for f, v in row.items()} for cc, row in t.values.items()}
    assert rows == values
    assert t.capabilities() == sorted(values, key=lambda cc: [int(p) for p in cc.split(".")])


def test_not_json_is_refused() -> None:
    with pytest.raises(ComputedError) as caught:
        parse_computed('{"provenance": {}, "values": {\n  "9.0": {,}}}', "computed/x.json", "x")
    d = caught.value.diagnostics[0]
    assert "not valid JSON" in d.message and (d.line, d.path) == (2, "computed/x.json") and d.hint


def test_a_capability_without_a_minor_is_refused() -> None:
    data = _committed()
    values = data["values"]
    assert isinstance(values, dict)
    values["9"] = values.pop("9.0")
    d = _refused(data).diagnostics
    assert [x.message for x in d] == ["'9' is not a compute capability like '9.0'"]
    text = json.dumps(data, indent=2)
    assert text.splitlines()[d[0].line - 1].strip().startswith('"9"')


@pytest.mark.parametrize("wrong", [1.5, "lower case", True, {"a": 1}, [1, "x"], None])
def test_a_value_of_the_wrong_type_is_refused(wrong: object) -> None:
    data = _committed()
    data["values"]["9.0"]["cudaOccMaxBlocksPerMultiprocessor"] = wrong  # type: ignore[index]
    d = _refused(data).diagnostics
    assert len(d) == 1 and d[0].message.startswith("9.0 cudaOccMaxBlocksPerMultiprocessor must be a whole number")
    line = json.dumps(data, indent=2).splitlines()[d[0].line - 1]
    assert "cudaOccMaxBlocksPerMultiprocessor" in line


def test_a_function_the_provenance_does_not_list_is_refused() -> None:
    data = _committed()
    data["values"]["8.0"]["cudaOccMadeUp"] = 1  # type: ignore[index]
    d = _refused(data).diagnostics
    assert [x.message for x in d] == ["'cudaOccMadeUp' is not one of provenance 'functions'"]


def test_a_list_of_a_thousand_is_refused() -> None:
    data = _committed()
    data["values"]["9.0"]["cudaOccAlignUpShmemSizeVoltaPlus"] = list(range(1000))  # type: ignore[index]
    d = _refused(data).diagnostics
    assert [x.message for x in d] == [
        "9.0 cudaOccAlignUpShmemSizeVoltaPlus is a list of 1,000 values; at most 64 are allowed"
    ]


def test_a_file_over_the_cap_is_refused_before_parsing(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_text("[" + "1," * (MAX_FILE_BYTES // 2) + "1]", encoding="utf-8")
    with pytest.raises(ComputedError, match="larger than 262,144 bytes"):
        read_computed_text(big, "computed/big.json")


def test_a_linked_file_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "computed"
    folder.mkdir()
    (tmp_path / "elsewhere.json").write_text(COMMITTED.read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "compute-capabilities.json").symlink_to(tmp_path / "elsewhere.json")
    table, found = ComputedSet(folder, tmp_path).get("compute-capabilities")
    assert table is None and [d.message for d in found] == ["is a symbolic link; computed files are plain files"]


def test_a_linked_folder_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "outside"
    real.mkdir()
    (real / "compute-capabilities.json").write_text(COMMITTED.read_text(encoding="utf-8"), encoding="utf-8")
    root = tmp_path / "repo"
    root.mkdir()
    (root / "computed").symlink_to(real)
    computed = ComputedSet(root / "computed", root)
    table, found = computed.get("compute-capabilities")
    assert table is None and found[0].path == "computed" and "symbolic link" in found[0].message
    assert computed.names() == []
