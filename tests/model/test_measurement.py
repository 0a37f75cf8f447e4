"""Measurement files: versioned, written atomically, failures kept beside the last good file."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, load_measurement
from cudagloss.model.keys import code_hash
from cudagloss.model.measurement import (
    FORMAT_VERSION,
    Drift,
    Gate,
    Measurement,
    MeasurementError,
    Result,
    parse_measurement,
    record,
)
from cudagloss.model.urls import measurement_path


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
        MeasurementError,
        match=r"x\.json:1:1: measurement format version 5 is not known \(this tool reads 1 and 2 and 3 and 4\)",
    ):
        parse_measurement(json.dumps(data), "x.json")


def test_a_result_says_how_it_was_measured_from_a_closed_set(tmp_path: Path) -> None:
    timed = replace(sample(), results=[Result("copy_4gib", 4300.0, "GB/s", samples=[4300.0], method="gpu-queued")])
    data = json.loads(timed.to_json())
    assert data["format_version"] == 3 and data["results"][0]["method"] == "gpu-queued"
    assert load_measurement(record(timed, tmp_path)) == timed
    assert "method" not in json.loads(sample().to_json())["results"][0], "a result without one leaves it out"
    data["results"][0]["method"] = "guessed"
    with pytest.raises(MeasurementError, match=r"'guessed' is not a method; one of gpu-queued, graph-replay"):
        parse_measurement(json.dumps(data, indent=2), "x.json")
    hostile: list[object] = [["info"], {}, 1, 1.5, True, None]
    for value in hostile:  # refused with a position, never a crash
        data["results"][0]["method"] = value
        with pytest.raises(MeasurementError, match="is not a method"):
            parse_measurement(json.dumps(data, indent=2), "x.json")
    data["format_version"], data["results"][0]["method"] = 2, None
    with pytest.raises(MeasurementError, match="method"):  # version 2 has no such field
        parse_measurement(json.dumps(data, indent=2), "x.json")
    data["format_version"], data["results"][0]["method"] = 2, "host"
    with pytest.raises(MeasurementError, match="method"):  # version 2 has no such field
        parse_measurement(json.dumps(data, indent=2), "x.json")


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
    assert m.code_hash == code_hash([source])
    source.write_text("A = 2\n")
    assert m.code_hash != code_hash([source])


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


def test_a_measurement_error_carries_its_position_message_and_hint() -> None:
    text = sample().to_json().replace('"value": 8', '"value": "8" ,"x": {}')
    with pytest.raises(MeasurementError) as info:
        parse_measurement(text, "m.json")
    line = text[: text.index('"x"')].count("\n") + 1
    [first] = info.value.diagnostics
    assert (first.path, first.line, first.col) == ("m.json", line, 21)
    assert info.value.message == first.message == "results[0]: unknown field 'x'"
    assert "make verify" in first.hint
    assert str(info.value) == f"m.json:{line}:21: results[0]: unknown field 'x'"


def verifier_run(**changes: object) -> Measurement:
    """A measurement built the way verifier/__main__.py builds one, from the verifier's own
    helpers (timings, gates, provenance); the GPU's own fields come from a committed file."""
    import platform
    import sys

    from verifier.experiment import Outcome, timing
    from verifier.provenance import _driver_release, _git, _version, node_name

    committed = load_measurement(ROOT / "measurements" / "ptx-jit" / "h200-3f1ceb1e.json").provenance
    commit, dirty = _git()
    outcome = Outcome(repeats=5)
    outcome.gate("ptx loads on this driver", True)
    outcome.gate("the user's own JIT cache was not touched", True, str(Path.home() / ".nv" / "ComputeCache"))
    outcome.add(*timing("load_warm_cache", [0.0003, 0.00028, 0.00031], "load from a warm JIT cache"))
    outcome.add(Result("ptx_isa_version", "9.0", "", "PTX ISA version NVRTC emitted"))
    fields: dict[str, object] = {
        "experiment": "ptx-jit",
        "purpose": "JIT-compile PTX in a fresh process",
        "code_hash": "sha256:" + "0" * 64,
        "status": "ok",
        "provenance": {
            "node": node_name(),
            **{k: committed[k] for k in ("gpu_name", "compute_capability", "sm_count", "cuda_driver_version")},
            "driver_version": _driver_release(),
            "cuda_bindings_version": _version("cuda-bindings"),
            "python": sys.version.split()[0],
            "os": platform.platform(),
            "git_commit": commit,
            "git_dirty": dirty,
            "recorded_at": "2026-12-03T02:57:46+00:00",
            "duration_s": 1.234,
            "repeats": 5,
        },
        "gates": outcome.gates,
        "results": outcome.results,
        "error": None,
    }
    return Measurement(**{**fields, **changes})  # type: ignore[arg-type]


def test_what_the_verifier_writes_is_what_the_site_reads(tmp_path: Path) -> None:
    path = record(verifier_run(), tmp_path)
    assert load_measurement(path) == verifier_run()


def test_a_crash_is_recorded_even_when_its_error_text_is_odd(tmp_path: Path) -> None:
    try:
        raise RuntimeError("worker said \x1b[31mred\x1b[0m\x00 and \u202eevil")
    except RuntimeError as exc:
        import traceback

        error = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}" + "x" * 30_000
    path = record(verifier_run(status="failed", gates=[], results=[], error=error), tmp_path)
    assert path.name.endswith(".failed.json")
    kept = load_measurement(path).error
    assert kept is not None and len(kept) <= 20_000 and "[… cut …]" in kept
    assert kept.startswith("RuntimeError: worker said \\x1b[31mred\\x1b[0m\\x00 and \\u202eevil\nTraceback")


@pytest.mark.parametrize(
    ("changes", "part"),
    [
        ({"provenance": {"node": "<script>"}}, "is not a node name"),
        ({"provenance": {"node": "../../outside"}}, "is not a node name"),
        ({"experiment": "../outside"}, "is not an experiment id"),
        ({"results": [Result("median", float("nan"), "ms")]}, "NaN is not a JSON number"),
        ({"results": [Result("median", 1.0, "ms", samples=[float("inf")])]}, "Infinity is not a JSON number"),
        ({"gates": [Gate("<b>", True)]}, "is not a gate name"),
    ],
)
def test_the_verifier_never_writes_a_file_the_site_would_refuse(
    tmp_path: Path, changes: dict[str, object], part: str
) -> None:
    with pytest.raises(MeasurementError, match=part):
        record(verifier_run(**changes), tmp_path / "measurements")
    assert not list(tmp_path.rglob("*")), "nothing is written, not even a folder"


def with_history() -> Measurement:
    """A version 2 file: one value confirmed since an earlier day, one measured by this run, a driver drift."""
    return replace(
        sample(),
        provenance={"node": "node-a", "gpu_name": "Test GPU", "recorded_at": "2026-12-01T10:00:00+00:00"},
        results=[Result("blocks_per_sm", 8, "blocks", first_measured="2026-10-02"), Result("x", 1.5, "ms")],
        drift=[Drift("driver_version", "580.159.04", "590.10"), Drift("nvrtc_version", None, "13.1")],
    )


def test_a_version_1_file_still_reads_and_a_version_2_file_round_trips() -> None:
    v1 = (FIXTURES / "good-measurements" / "warp-size" / "fixture-a.json").read_text(encoding="utf-8")
    old = parse_measurement(v1, "v1.json")
    assert (old.format_version, old.drift, {r.first_measured for r in old.results}) == (1, [], {""})
    assert old.to_json() == v1, "a file without history is still written as version 1"
    text = with_history().to_json()
    data = json.loads(text)
    assert data["format_version"] == 2
    assert [r.get("first_measured") for r in data["results"]] == ["2026-10-02", None]  # '' is left out
    assert list(data)[-2:] == ["drift", "format_version"]
    assert parse_measurement(text, "v2.json") == with_history()


V2 = with_history().to_json()
DAY = '"first_measured": "2026-10-02"'
DRIFT = '"name": "driver_version"'
HISTORY_EDITS = {  # (text of V2, its replacement, where in that the problem is reported, the message)
    "not-a-day": (
        DAY,
        '"first_measured": "2026-13-01"',
        '"2',
        "results[0].first_measured: '2026-13-01' is not a date like '2026-12-03'",
    ),
    "a-word": (
        DAY,
        '"first_measured": "yesterday"',
        '"y',
        "results[0].first_measured: 'yesterday' is not a date like '2026-12-03'",
    ),
    "empty": (DAY, '"first_measured": ""', '""', "results[0].first_measured: '' is not a date like '2026-12-03'"),
    "a-number": (DAY, '"first_measured": 20261002', "2026", "results[0].first_measured: must be text, not a number"),
    "future": (DAY, '"first_measured": "2999-01-01"', '"2', "results[0].first_measured: '2999-01-01' is in the future"),
    "after-the-run": (
        DAY,
        '"first_measured": "2026-12-02"',
        '"2',
        "results[0].first_measured: '2026-12-02' is after this run's recorded_at (2026-12-01), which confirmed it",
    ),
    "drift-object": ('"drift": [', '"drift": {}, "x": [', "{", "drift: must be an array, not an object"),
    "drift-key": (DRIFT, '"name": "<b>"', '"<', "drift[0].name: '<b>' is not a provenance key like 'driver_version'"),
    "drift-twice": ('"name": "nvrtc_version"', DRIFT, '"d', "drift[1].name: 'driver_version' appears twice"),
    "drift-list": (
        '"old": "580.159.04"',
        '"old": ["580"]',
        "[",
        "drift[0].old: must be text, a number, true/false or null, not an array",
    ),
    "drift-field": (DRIFT, '"why": "", ' + DRIFT, '"why"', "drift[0]: unknown field 'why'"),
}


@pytest.mark.parametrize("case", list(HISTORY_EDITS), ids=list(HISTORY_EDITS))
def test_a_bad_history_value_is_reported_where_it_stands(case: str) -> None:
    old, new, anchor, message = HISTORY_EDITS[case]
    at = V2.index(old)
    text = V2[:at] + new + V2[at + len(old) :]
    where = at + new.index(anchor)
    with pytest.raises(MeasurementError) as info:
        parse_measurement(text, "m.json")
    first = info.value.diagnostics[0]
    assert (first.line, first.col, first.message) == (
        text.count("\n", 0, where) + 1,
        where - text.rfind("\n", 0, where),
        message,
    )


def test_a_drift_entry_needs_all_three_fields() -> None:
    text = V2.replace('"old": null,', "")
    with pytest.raises(MeasurementError) as info:
        parse_measurement(text, "m.json")
    where = text.rfind("{", 0, text.index('"name": "nvrtc_version"'))
    line, col = text.count("\n", 0, where) + 1, where - text.rfind("\n", 0, where)
    assert str(info.value) == f"m.json:{line}:{col}: drift[1]: missing field 'old'"


def test_a_version_1_file_has_no_history_fields() -> None:
    text = V2.replace('"format_version": 2', '"format_version": 1')
    with pytest.raises(MeasurementError) as info:
        parse_measurement(text, "m.json")
    assert [d.message for d in info.value.diagnostics] == [
        "results[0]: unknown field 'first_measured'",
        "the file: unknown field 'drift'",
    ]


@pytest.mark.parametrize(
    ("unit", "value", "why"),
    [
        ("ms", -0.42, "is -0.42 ms: a duration is positive"),
        ("cycles", 0, "is 0 cycles: a duration is positive"),
        ("GB/s", -1.0, "is -1 GB/s: a rate is never negative"),
        ("%", 104.0, "is 104%: a percentage lies within 0-100"),
        ("%", -3, "is -3%: a percentage lies within 0-100"),
    ],
)
def test_a_value_out_of_the_bounds_of_its_kind_is_refused_at_its_place(unit: str, value: float, why: str) -> None:
    """Issue 27: 'loaded in -0.42 ms' was published, and called faster by compare()."""
    data = json.loads(sample().to_json())
    data["results"][0] |= {"unit": unit, "value": 1.0, "samples": [1.0, value]}
    text = json.dumps(data, indent=2)
    with pytest.raises(MeasurementError, match=re.escape(why)) as info:
        parse_measurement(text, "x.json")
    assert info.value.diagnostics[0].line == text.splitlines().index(f"        {value}") + 1
    data["results"][0] |= {"value": value, "samples": []}
    with pytest.raises(MeasurementError, match=re.escape(why)):
        parse_measurement(json.dumps(data), "x.json")
    data["results"][0] |= {"unit": "MHz"}  # a clock held below its maximum may be any number
    parse_measurement(json.dumps(data), "x.json")
