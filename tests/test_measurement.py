"""Measurement files: versioned, written atomically, failures kept beside the last good file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import ROOT
from cudagloss.measurement import (
    FORMAT_VERSION,
    Gate,
    Measurement,
    MeasurementError,
    Result,
    code_hash,
    is_stale,
    load_measurement,
    measurement_path,
    parse_measurement,
    record,
)


def sample(status: str = "ok", value: float = 8) -> Measurement:
    return Measurement(
        experiment="ptx-jit",
        purpose="test",
        code_hash="sha256:abc",
        status=status,  # type: ignore[arg-type]
        provenance={"node": "node-a", "gpu_name": "Test GPU"},
        gates=[Gate("correct", status == "ok")],
        results=[Result("blocks_per_sm", value, "blocks", samples=[1.0])],
    )


def test_round_trip(tmp_path: Path) -> None:
    path = record(sample(), tmp_path)
    assert path == tmp_path / "ptx-jit" / "node-a.json"
    loaded = load_measurement(path)
    assert loaded == sample()
    assert loaded.result("blocks_per_sm") == Result("blocks_per_sm", 8, "blocks", samples=[1.0])


def test_unknown_version_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    data = json.loads(sample().to_json())
    data["format_version"] = FORMAT_VERSION + 1
    with pytest.raises(
        MeasurementError, match=r"x\.json: measurement format version 2 is not known \(this tool reads 1\)"
    ):
        parse_measurement(json.dumps(data), "x.json")


def test_bad_json_names_the_position() -> None:
    with pytest.raises(MeasurementError, match=r"^m\.json:1:2: not valid JSON"):
        parse_measurement("{,}", "m.json")


def test_a_failed_run_never_replaces_the_last_good_file(tmp_path: Path) -> None:
    good = record(sample(value=8), tmp_path)
    before = good.read_bytes()
    bad = record(sample(status="failed", value=0), tmp_path)
    assert bad == measurement_path(tmp_path, "ptx-jit", "node-a", failed=True)
    assert good.read_bytes() == before
    assert load_measurement(bad).status == "failed"
    record(sample(value=9), tmp_path)  # a later good run clears the failure
    assert not bad.exists()
    assert load_measurement(good).result("blocks_per_sm").value == 9  # type: ignore[union-attr]


def test_interrupted_write_leaves_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    good = record(sample(value=8), tmp_path)
    before = good.read_bytes()

    def boom(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("os.replace", boom)
    with pytest.raises(KeyboardInterrupt):
        record(sample(value=9), tmp_path)
    assert good.read_bytes() == before
    assert [p.name for p in good.parent.iterdir()] == ["node-a.json"]  # no temporary file left


def test_code_hash_detects_changed_experiment_code(tmp_path: Path) -> None:
    source = tmp_path / "exp.py"
    source.write_text("A = 1\n")
    first = code_hash([source])
    m = Measurement("e", "p", first, "ok", {"node": "n"})
    assert not is_stale(m, code_hash([source]))
    source.write_text("A = 2\n")
    assert is_stale(m, code_hash([source]))


def test_committed_measurements_load() -> None:
    files = sorted((ROOT / "measurements").glob("*/*.json"))
    assert files, "no measurement committed"
    for path in files:
        m = load_measurement(path)
        assert m.provenance["gpu_name"] and m.provenance["compute_capability"]
        for key in (
            "node",
            "driver_version",
            "cuda_driver_version",
            "nvrtc_version",
            "cuda_bindings_version",
            "python",
            "os",
            "git_commit",
            "git_dirty",
            "recorded_at",
            "duration_s",
            "repeats",
            "sm_count",
        ):
            assert key in m.provenance, (path.name, key)
