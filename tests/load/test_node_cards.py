"""A node name names one card (issue 38, part 1): the loader reads a card's earlier runs beside its
latest, and refuses, at the file, a name that stands for two cards, a card under two names, and an
earlier-run file that is not an earlier good run of the same card by the same code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cudagloss.load.measurements import MAX_EARLIER, load_measurements
from fleets import H200, _node

A, B = "GPU-aaaaaaaa-0000-0000-0000-000000000000", "GPU-bbbbbbbb-0000-0000-0000-000000000000"


def run(node: str, day: int, card: str, **changes: Any) -> dict[str, Any]:
    record = _node(node, H200, day, ms=0.1, gbs=4200.0)
    record["provenance"]["gpu_uuid"] = card
    record.update(changes)
    return record


def write(folder: Path, name: str, record: dict[str, Any], experiment: str = "copy-bench") -> None:
    (folder / experiment).mkdir(parents=True, exist_ok=True)
    record = {**record, "experiment": experiment}
    (folder / experiment / name).write_text(json.dumps(record, indent=2), encoding="utf-8")


def problems(folder: Path) -> list[str]:
    return [f"{Path(d.path).name}: {d.message}" for d in load_measurements(folder, folder.parent)[1]]


def test_a_cards_earlier_run_is_read_as_its_run_never_as_another_node(tmp_path: Path) -> None:
    write(tmp_path, "h200-a.json", run("h200-a", 21, A))
    write(tmp_path, "h200-a~20261120T120000Z.json", run("h200-a", 20, A))
    found, diagnostics = load_measurements(tmp_path, tmp_path.parent)
    assert diagnostics == []
    record = found.get("copy-bench")
    assert record is not None and [r.node for r in record.runs] == ["h200-a"]
    (only,) = record.runs
    assert only.card == A and [m.recorded_on for m in only.good_runs] == ["2026-11-20", "2026-11-21"]
    assert only.earlier_paths == (f"{tmp_path.name}/copy-bench/h200-a~20261120T120000Z.json",)


def test_a_name_on_two_cards_is_refused_at_the_file_that_says_so(tmp_path: Path) -> None:
    write(tmp_path, "h200-lent.json", run("h200-lent", 20, A), "ptx-jit")
    write(tmp_path, "h200-lent.json", run("h200-lent", 21, B), "tensor-core")
    assert problems(tmp_path) == [
        f"h200-lent.json: node 'h200-lent' was measured on card {B} here, but on card {A} in "
        f"{tmp_path.name}/ptx-jit/h200-lent.json: a node name names one card"
    ]


def test_one_card_under_two_names_is_refused(tmp_path: Path) -> None:
    write(tmp_path, "h200-lent.json", run("h200-lent", 20, A))
    write(tmp_path, "h200-second.json", run("h200-second", 20, A))
    assert problems(tmp_path) == [
        f"h200-second.json: card {A} is named 'h200-second' here, but 'h200-lent' in "
        f"{tmp_path.name}/copy-bench/h200-lent.json: two names for one card"
    ]


@pytest.mark.parametrize(
    ("name", "earlier", "said"),
    [
        ("h200-a~20261120T120000Z.json", run("h200-a", 20, B), f"ran on card {B}, not on the node's card {A}"),
        ("h200-a~20261120T120000Z.json", run("h200-a", 20, A, code_hash="sha256:other"), "by another recipe"),
        ("h200-a~20261122T120000Z.json", run("h200-a", 22, A), "is not earlier than the latest run"),
        ("h200-a~20261119T120000Z.json", run("h200-a", 20, A), "not at the 20261119T120000Z its name says"),
        ("h200-a~20261120T120000Z.json", run("h200-a", 20, A, status="failed"), "in a file for an earlier good run"),
        ("h200-a~2026-11-20.json", run("h200-a", 20, A), "is not named <node>.json, <node>~<stamp>.json"),
        ("h200-a~20261120T120000Z.failed.json", run("h200-a", 20, A), "is not named <node>.json"),
    ],
)
def test_an_earlier_run_that_is_not_one_is_refused(
    tmp_path: Path, name: str, earlier: dict[str, Any], said: str
) -> None:
    write(tmp_path, "h200-a.json", run("h200-a", 21, A))
    write(tmp_path, name, earlier)
    found = problems(tmp_path)
    assert len(found) == 1 and found[0].startswith(name) and said in found[0], found


def test_an_earlier_run_without_a_latest_one_is_refused(tmp_path: Path) -> None:
    write(tmp_path, "h200-a~20261120T120000Z.json", run("h200-a", 20, A))
    assert problems(tmp_path) == [
        "h200-a~20261120T120000Z.json: is an earlier run of a node with no latest good run (<node>.json)"
    ]


def test_earlier_runs_are_bounded(tmp_path: Path) -> None:
    write(tmp_path, "h200-a.json", run("h200-a", 28, A))
    for minute in range(MAX_EARLIER + 1):
        record = run("h200-a", 20, A)
        record["provenance"]["recorded_at"] = f"2026-11-20T12:{minute // 60:02d}:{minute % 60:02d}+00:00"
        write(tmp_path, f"h200-a~20261120T12{minute // 60:02d}{minute % 60:02d}Z.json", record)
    found = problems(tmp_path)
    assert found == [
        f"h200-a~20261120T1201{MAX_EARLIER % 60:02d}Z.json: is more than {MAX_EARLIER} earlier runs of one node"
    ]


@pytest.mark.parametrize("linked", ["measurements", "data"])
def test_a_measurements_folder_reached_through_a_link_is_refused(tmp_path: Path, linked: str) -> None:
    """A committed link as the measurements folder (or a folder above it) would read, and
    publish as raw JSON, files from anywhere: refused at the link, nothing read through it."""
    outside = tmp_path / "outside"
    write(outside, "h200-a.json", run("h200-a", 20, A))
    root = tmp_path / "repo"
    (root / "data").mkdir(parents=True)
    if linked == "measurements":
        (root / "data" / "measurements").symlink_to(outside)
    else:
        (root / "data").rmdir()
        (tmp_path / "elsewhere").mkdir()
        (tmp_path / "elsewhere" / "measurements").symlink_to(outside)
        (root / "data").symlink_to(tmp_path / "elsewhere")
    found, problems = load_measurements(root / "data" / "measurements", root)
    assert [record.id for record in found] == []  # nothing read through it
    shown = "data/measurements" if linked == "measurements" else "data"
    assert [(d.path, d.message.split(";")[0]) for d in problems] == [(shown, "is a symbolic link")]


def test_a_folder_of_many_odd_names_is_one_screen_of_diagnostics(tmp_path: Path) -> None:
    """Names on disk are a parser's input too: each refused name is one line up to a bound, the
    rest one count, however many a pull request adds."""
    from cudagloss.load.measurements import MAX_REPORTED

    folder = tmp_path / "m" / "copy-bench"
    folder.mkdir(parents=True)
    for i in range(MAX_REPORTED + 500):
        (folder / f"x~{i}.json").write_text("", encoding="utf-8")
    _, problems = load_measurements(tmp_path / "m", tmp_path)
    assert len(problems) == MAX_REPORTED + 1
    assert problems[-1].path == "m/copy-bench" and "and 500 more files" in problems[-1].message


def test_a_failed_run_of_another_card_under_a_name_is_refused_at_that_file(tmp_path: Path) -> None:
    """'The latest run on h200-a failed' must be about h200-a's card: a failed run from the card
    named h200-b, filed as h200-a's, is refused at the failed file, not accepted nor blamed on
    h200-b's good run."""
    folder = tmp_path / "m"
    write(folder, "h200-a.json", run("h200-a", 20, A))
    write(folder, "h200-b.json", run("h200-b", 20, B))
    write(folder, "h200-a.failed.json", run("h200-a", 21, B, status="failed"))
    _, problems = load_measurements(folder, tmp_path)
    assert {d.path for d in problems} == {"m/copy-bench/h200-a.failed.json"}
    assert any("a node name names one card" in d.message for d in problems)
