"""make rederive on the CPU: a file made by today's recipe but summarised by other code, with
its raw samples kept, is derived again from them and becomes current; a file without raw
samples, or made by another recipe, is left stale and said to be; a node's earlier runs follow
its latest or are dropped; a summary that fails a gate writes nothing.

The files are the committed warp-divergence run, its results replaced by what the summary
makes of fixture samples (tests/verifier/test_warp_divergence.py's, not measurements)."""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("numpy")

from verifier.experiment import ROOT
from verifier.experiments import warp_divergence as wd
from verifier.rawcall import RUNNER_GATES
from verifier.recipe import recipe_key, summary_key
from verifier.registry import catalog

from cudagloss.load.measurements import load_measurements
from cudagloss.model.measurement import Gate, Measurement, Result, parse_measurement, read_measurement_text
from cudagloss.model.raw import arguments, call, decode, encode
from outcomes import values
from raw_fixtures import fixture
from verifier import rederive

COMMITTED = ROOT / "measurements" / "warp-divergence" / "h200-3f1ceb1e.json"
OLDER = "sha256:" + "0" * 64
"""A summary key no code has: the file was summarised by code since changed."""


def committed() -> Measurement:
    return parse_measurement(read_measurement_text(COMMITTED, "committed"), "committed")


def summarised(raw: bool, summary: str = OLDER, **change: Any) -> Measurement:
    """The committed run as if its summary had made these results from the fixture (kept as its raw
    samples where raw)."""
    outcome = wd.summarise(fixture())
    kept = call((fixture(),), {}) if raw else None
    m = dataclasses.replace(committed(), results=outcome.results, gates=outcome.gates, recipe=recipe_key(wd))
    return dataclasses.replace(m, summary=summary, raw=kept, **change)


def write(folder: Path, m: Measurement, name: str = "h200-3f1ceb1e.json") -> Path:
    path = folder / "warp-divergence" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(m.to_json(), encoding="utf-8")
    return path


def node_state(folder: Path) -> tuple[bool, bool]:
    found, problems = load_measurements(folder, ROOT, catalog())
    assert problems == []
    (run,) = found.experiments["warp-divergence"].runs
    return run.stale, run.rederivable


def test_raw_samples_come_back_as_they_were_kept() -> None:
    raw = fixture()
    raw["odd"] = {(1, "a"): (float("nan"), math.inf), "__map__": [1], 3.5: None, True: [False]}
    back = decode(encode(raw))
    assert back["cases"].keys() == raw["cases"].keys() and all(isinstance(k, int) for k in back["cases"])
    assert math.isnan(back["odd"][(1, "a")][0]) and back["odd"][(1, "a")][1] == math.inf
    assert back["odd"]["__map__"] == [1] and back["odd"][3.5] is None and back["odd"][True] == [False]
    args, kwargs = arguments(call((raw, 7), {"repeats": 3}))
    assert args[1] == 7 and kwargs == {"repeats": 3}
    assert wd.summarise(*arguments(call((fixture(),), {}))[0]).results == wd.summarise(fixture()).results


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ({"args": [], "kwargs": {}, "more": 1}, "exactly the keys"),
        ({"args": {"__tuple__": 1}, "kwargs": {}}, "must hold a list"),
        ({"args": [{"__float__": "1e999"}], "kwargs": {}}, "not one of"),
        ({"args": [{"__map__": [[[1], 2]]}], "kwargs": {}}, "cannot be a key"),
        ({"args": [{"__map__": [[1, 2], [1, 3]]}], "kwargs": {}}, "appears twice"),
        ({"args": [], "kwargs": {"no such": 1}}, "argument names"),
    ],
)
def test_a_file_whose_raw_samples_cannot_be_read_back_is_refused_at_its_line(raw: Any, says: str) -> None:
    text = (
        committed()
        .to_json()
        .replace('"format_version"', f'"raw": {__import__("json").dumps(raw)},\n  "format_version"')
    )
    with pytest.raises(Exception, match=says) as caught:
        parse_measurement(text, "x.json")
    assert "raw" in str(caught.value)


def test_a_file_summarised_by_older_code_is_derived_again_and_becomes_current(tmp_path: Path) -> None:
    m = summarised(raw=True)
    kept_gates = [Gate(name, True, "the runner's own") for name in RUNNER_GATES]
    m = dataclasses.replace(m, gates=[*m.gates, *kept_gates])
    changed = [dataclasses.replace(r, value=9.99) if r.name == "slowdown_2_paths" else r for r in m.results]
    path = write(tmp_path, dataclasses.replace(m, results=[*changed, Result("retired_result", 1, "ns")]))
    assert node_state(tmp_path) == (True, True)
    todo, left = rederive.plan(tmp_path, None)
    assert left == [] and len(todo) == 1
    lines = todo[0][1][0].lines
    assert "CHANGED  slowdown_2_paths 9.99 × -> 2.0 ×" in lines and "GONE     retired_result" in lines
    assert "SAME     ns_per_element_1_paths" in lines
    rederive.apply(todo)
    again = parse_measurement(read_measurement_text(path, "again"), "again")
    assert again.summary == summary_key(wd) and again.recipe == m.recipe and again.provenance == m.provenance
    assert again.gates[-len(kept_gates) :] == kept_gates and len(RUNNER_GATES) == 2
    assert values(again)["slowdown_2_paths"] == 2.0 and "retired_result" not in values(again)
    assert node_state(tmp_path) == (False, False)
    assert rederive.plan(tmp_path, None) == ([], [])


def test_without_raw_samples_or_with_another_recipe_the_file_is_left_and_says_why(tmp_path: Path) -> None:
    """Without raw samples a file of today's recipe is kept as its run summarised it, not stale (issue 40:
    a summary fold needs no GPU run); with another recipe it is stale."""
    path = write(tmp_path, summarised(raw=False))
    assert node_state(tmp_path) == (False, False)
    found, _ = load_measurements(tmp_path, ROOT, catalog())
    assert [run.summarised_before for run in found.experiments["warp-divergence"].runs] == [True]
    assert rederive.plan(tmp_path, None)[1] == [
        f"{path}: kept as its run summarised it (it kept no raw samples; the recipe is today's): "
        "the card's next GPU run summarises it with today's code"
    ]
    write(tmp_path, summarised(raw=True, recipe="sha256:" + "1" * 64))
    assert node_state(tmp_path) == (True, False)
    assert "stays stale (its recipe changed)" in rederive.plan(tmp_path, None)[1][0]


def test_earlier_runs_follow_the_latest_or_are_dropped(tmp_path: Path) -> None:
    latest = summarised(raw=True)
    earlier = dataclasses.replace(latest, provenance={**latest.provenance, "recorded_at": "2026-12-04T10:00:00+00:00"})
    kept = write(tmp_path, earlier, "h200-3f1ceb1e~20261204T100000Z.json")
    older = dataclasses.replace(
        earlier, raw=None, provenance={**earlier.provenance, "recorded_at": "2026-12-04T09:00:00+00:00"}
    )
    dropped = write(tmp_path, older, "h200-3f1ceb1e~20261204T090000Z.json")
    write(tmp_path, latest)
    todo, left = rederive.plan(tmp_path, None)
    assert left == [] and [d.path for d in todo[0][1]][1:] == [kept] and todo[0][2] == [dropped]
    rederive.apply(todo)
    assert not dropped.exists() and parse_measurement(kept.read_text(), "k").summary == summary_key(wd)
    assert node_state(tmp_path) == (False, False)


def test_a_summary_that_now_fails_a_gate_writes_nothing(tmp_path: Path) -> None:
    bad = fixture(max_rel_error=dict.fromkeys(wd.PATHS, 0.5))
    m = dataclasses.replace(summarised(raw=True), raw=call((bad,), {}))
    path = write(tmp_path, m)
    before = path.read_bytes()
    todo, left = rederive.plan(tmp_path, None)
    assert todo == [] and "now fails 1 gate(s): every branch count's outputs equal" in left[0]
    assert path.read_bytes() == before


def test_a_failed_write_restores_every_file_of_the_node(tmp_path: Path) -> None:
    latest = summarised(raw=True)
    earlier = dataclasses.replace(latest, provenance={**latest.provenance, "recorded_at": "2026-12-04T10:00:00+00:00"})
    first = write(tmp_path, earlier, "h200-3f1ceb1e~20261204T100000Z.json")
    second = write(tmp_path, latest)
    before = {p: p.read_bytes() for p in (first, second)}
    todo, _ = rederive.plan(tmp_path, None)
    todo[0][1][1].path = tmp_path / "warp-divergence" / "missing-folder" / "x.json"  # a write that fails
    with pytest.raises(OSError):
        rederive.apply(todo)
    assert {p: p.read_bytes() for p in before} == before


def test_the_command_line_reports_and_refuses_a_folder_outside_the_repository(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert rederive.main(["--measurements", str(tmp_path), "--dry-run"]) == 2
    assert "is not a folder inside the repository" in capsys.readouterr().err
    assert rederive.main(["--experiment", "no-such", "--dry-run"]) == 2
    assert rederive.main(["--dry-run"]) == 0
    assert "would derive" in capsys.readouterr().out
    shutil.rmtree(tmp_path)


def test_the_runner_keeps_what_run_handed_summarise_and_puts_summarise_back() -> None:
    import types

    from verifier.rawcall import keeping

    module = types.ModuleType("fake_experiment")
    exec(  # a module as an experiment is written: run() calls summarise() by its global name
        "def summarise(raw, repeats):\n    raw['seen'] = True\n    return len(raw['cases'])\n"
        "def run():\n    return summarise({'cases': {1: (0.5, float('inf'))}}, repeats=3)\n",
        module.__dict__,
    )
    original = module.summarise
    with keeping(module) as kept:
        assert module.run() == 1
    assert module.summarise is original and kept.problem == ""
    args, kwargs = arguments(kept.raw)
    assert args == [{"cases": {1: (0.5, math.inf)}}] and kwargs == {"repeats": 3}  # as handed, before summarise ran
    with keeping(module) as kept:
        module.run()
        module.run()
    assert kept.raw is None and "more than once" in kept.problem
    module.run = lambda: module.summarise({"x": object()}, repeats=1)  # type: ignore[attr-defined]
    with keeping(module) as kept, pytest.raises(KeyError):  # the summary still runs, and fails as it would
        module.run()
    assert kept.raw is None and "cannot be kept" in kept.problem and module.summarise is original


def test_raw_samples_that_would_make_the_file_refused_are_dropped_not_the_run() -> None:
    from verifier.rawcall import fitting

    said: list[str] = []
    small = summarised(raw=True)
    assert fitting(small, said.append) is small and said == []
    huge = dataclasses.replace(small, raw={"args": [[1.2345678912345] * 390_000], "kwargs": {}})
    kept = fitting(huge, said.append)
    assert kept.raw is None and kept.results == small.results and "would be refused" in said[0]
    parse_measurement(kept.to_json(), "kept.json")


def test_a_summary_that_runs_too_long_is_stopped_and_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    write(tmp_path, summarised(raw=True))
    monkeypatch.setattr(rederive, "SUMMARY_SECONDS", 1)
    monkeypatch.setattr(wd, "summarise", lambda raw: time.sleep(30))  # raw samples that make a summary spin
    started = time.monotonic()
    todo, left = rederive.plan(tmp_path, None)
    assert todo == [] and "summarise() raised OutOfTime: it ran past 1 s" in left[0]
    assert time.monotonic() - started < 20


def test_raw_samples_are_written_on_one_line_and_read_back_the_same() -> None:
    m = summarised(raw=True)
    text = m.to_json()
    (line,) = [x for x in text.splitlines() if x.lstrip().startswith('"raw": ')]
    assert line.endswith("},") and parse_measurement(text, "m.json") == m
    spread = json.dumps({**json.loads(text), "raw": m.raw}, indent=2)
    assert len(text) < 0.7 * len(spread)
