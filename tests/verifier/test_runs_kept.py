"""A re-run keeps the run it replaces as <node>~<stamp>.json when both are the same recipe on
the same card; a new recipe drops the earlier runs; a card keeps at most MAX_RUNS. Real files
through the runner's own settle() (verify) and merge.rerun.write (collect shares it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from verifier.settle import settle

from cudagloss.errors import UsageError
from cudagloss.merge.rerun import against_committed, write
from cudagloss.merge.runs import MAX_RUNS, earlier_runs, file_node
from cudagloss.model.measurement import Gate, Measurement, Result

CARD = "GPU-11111111-2222-3333-4444-555555555555"
QUIET = lambda line: None  # noqa: E731


def run(day: int, *, recipe: str = "sha256:now", warp: int = 32, status: str = "ok", card: str = CARD) -> Measurement:
    provenance = {
        "node": "node-a",
        "gpu_name": "NVIDIA H200",
        "gpu_uuid": card,
        "recorded_at": f"2026-11-{day:02d}T10:00:00+00:00",
        "duration_s": 1.0,
    }
    results = [Result("warp_size", warp, "threads"), Result("copy_ms", 1.0, "ms", "", [1.0, 1.01, 0.99])]
    return Measurement("copy", "test", recipe, status, provenance, [Gate("ok", status == "ok")], results)  # type: ignore[arg-type]


def files(folder: Path) -> list[str]:
    return sorted(p.name for p in (folder / "copy").iterdir())


def test_a_rerun_of_the_same_recipe_keeps_the_run_it_replaces_byte_for_byte(tmp_path: Path) -> None:
    settle(run(1), tmp_path, QUIET)
    first = (tmp_path / "copy" / "node-a.json").read_bytes()
    settle(run(2), tmp_path, QUIET)
    assert files(tmp_path) == ["node-a.json", "node-a~20261101T100000Z.json"]
    assert (tmp_path / "copy" / "node-a~20261101T100000Z.json").read_bytes() == first
    assert '"recorded_at": "2026-11-02' in (tmp_path / "copy" / "node-a.json").read_text()
    settle(run(2), tmp_path, QUIET)  # the same run collected again is one run, not two
    assert files(tmp_path) == ["node-a.json", "node-a~20261101T100000Z.json"]


def test_a_new_recipe_keeps_nothing_and_drops_the_earlier_runs(tmp_path: Path) -> None:
    for day in (1, 2, 3):
        settle(run(day), tmp_path, QUIET)
    assert len(earlier_runs(tmp_path, "copy", "node-a")) == 2
    settle(run(4, recipe="sha256:changed"), tmp_path, QUIET)
    assert files(tmp_path) == ["node-a.json"], "stale runs are removed (git keeps them)"
    settle(run(5, recipe="sha256:changed"), tmp_path, QUIET)
    assert files(tmp_path) == ["node-a.json", "node-a~20261104T100000Z.json"]


def test_a_card_keeps_at_most_max_runs_the_oldest_go_first(tmp_path: Path) -> None:
    last = MAX_RUNS + 3
    for day in range(1, last + 1):
        settle(run(day), tmp_path, QUIET)
    stamps = list(earlier_runs(tmp_path, "copy", "node-a"))
    assert len(stamps) == MAX_RUNS - 1, "the latest and MAX_RUNS - 1 earlier runs"
    assert stamps == [f"202611{day:02d}T100000Z" for day in range(last - MAX_RUNS + 1, last)]


def test_a_run_for_review_and_a_failed_run_keep_and_drop_nothing(tmp_path: Path) -> None:
    settle(run(1), tmp_path, QUIET)
    settle(run(2), tmp_path, QUIET)
    before = files(tmp_path)
    rerun = settle(run(3, warp=64), tmp_path, QUIET)  # a discrete value CHANGED: beside, for review
    assert rerun is not None and rerun.changed
    assert files(tmp_path) == sorted([*before, "node-a.json.new"])
    settle(run(4, status="failed"), tmp_path, QUIET)
    assert files(tmp_path) == sorted([*before, "node-a.failed.json", "node-a.json.new"])


def test_a_run_the_format_refuses_leaves_no_earlier_run_behind(tmp_path: Path) -> None:
    settle(run(1), tmp_path, QUIET)
    bad = run(2)
    bad.results.append(Result("not a name", 1))
    said: list[str] = []
    assert settle(bad, tmp_path, said.append) is None and said[0].startswith("    not recorded:")
    assert files(tmp_path) == ["node-a.json"], "the copy made before the write is undone"


def test_an_earlier_run_that_is_a_link_refuses_the_write_before_anything_is_written(tmp_path: Path) -> None:
    settle(run(1), tmp_path, QUIET)
    (tmp_path / "elsewhere.json").write_text("{}")
    (tmp_path / "copy" / "node-a~20261001T100000Z.json").symlink_to(tmp_path / "elsewhere.json")
    before = (tmp_path / "copy" / "node-a.json").read_bytes()
    with pytest.raises(UsageError, match="symbolic link"):
        settle(run(2), tmp_path, QUIET)
    assert (tmp_path / "copy" / "node-a.json").read_bytes() == before
    assert files(tmp_path) == ["node-a.json", "node-a~20261001T100000Z.json"]


def test_another_cards_file_under_the_name_is_never_compared(tmp_path: Path) -> None:
    settle(run(1), tmp_path, QUIET)
    other = run(2, card="GPU-99999999-2222-3333-4444-555555555555", warp=64)
    with pytest.raises(UsageError, match=r"node 'node-a' is card GPU-1111.*this run is card GPU-9999"):
        against_committed(other, tmp_path)
    assert files(tmp_path) == ["node-a.json"]


def test_write_keeps_the_previous_run_for_collect_too(tmp_path: Path) -> None:
    for day in (1, 2):
        new = run(day)
        write(new, tmp_path, against_committed(new, tmp_path))
    assert files(tmp_path) == ["node-a.json", "node-a~20261101T100000Z.json"]


@pytest.mark.parametrize(
    ("name", "named"),
    [
        ("a.json", ("a", "")),
        ("a.failed.json", ("a", "")),
        ("a~20261101T100000Z.json", ("a", "20261101T100000Z")),
        ("a~2026.json", None),
        ("a~20261101T100000Z.failed.json", None),
        ("a.json.new", None),
    ],
)
def test_file_names(name: str, named: tuple[str, str] | None) -> None:
    assert file_node(name) == named


def test_a_run_that_names_no_card_is_not_kept_beside_one_that_does(tmp_path: Path) -> None:
    """The loader holds an earlier run to the latest run's card; a run from before gpu_uuid was
    recorded, kept beside one that names its card, was a tree make check refused."""
    from cudagloss.load.measurements import load_measurements

    old = run(1)
    del old.provenance["gpu_uuid"]
    settle(old, tmp_path, QUIET)
    settle(run(2), tmp_path, QUIET)
    assert files(tmp_path) == ["node-a.json"]
    assert [d.format() for d in load_measurements(tmp_path, tmp_path)[1] if not d.warning] == []


@pytest.mark.parametrize("kind", ["not utf-8", "fifo", "folder"])
def test_a_file_in_the_way_of_the_kept_run_is_refused_not_a_traceback(tmp_path: Path, kind: str) -> None:
    """The file already at the kept run's name is read to be put back if the write fails: one
    that is not plain UTF-8 text is a MeasurementError (make verify says 'not recorded'), never
    a UnicodeDecodeError, a wait on a FIFO or a write over a folder; nothing is written."""
    import os

    settle(run(1), tmp_path, QUIET)
    target = tmp_path / "copy" / "node-a~20261101T100000Z.json"
    if kind == "not utf-8":
        target.write_bytes(b"\xff\xfe")
    elif kind == "fifo":
        os.mkfifo(target)
    else:
        target.mkdir()
    before = (tmp_path / "copy" / "node-a.json").read_bytes()
    said: list[str] = []
    assert settle(run(2), tmp_path, said.append) is None and said[0].startswith("    not recorded:")
    assert (tmp_path / "copy" / "node-a.json").read_bytes() == before
