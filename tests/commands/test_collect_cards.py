"""`cudagloss collect` holds a node name to one card: a new name on a committed card (unless
--rename says it is that node's re-run), two new names on one card, one host in two folders and a
committed name from another card are each one `path:line:col:` line and hint, all at once, and
nothing is merged. Real files (runs of this repository's experiments, on cards and hosts made up
here, under names of our own), the real command line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, cudagloss

A = "GPU-aaaaaaaa-0000-0000-0000-000000000001"
B = "GPU-bbbbbbbb-0000-0000-0000-000000000002"
C = "GPU-cccccccc-0000-0000-0000-000000000003"
HOST_1, HOST_2 = "sha256:1111111111111111", "sha256:2222222222222222"
EXPERIMENTS = ("device-limits", "ptx-jit")


def source(experiment: str) -> dict[str, Any]:
    """A committed good run of the experiment, whichever node made it (the names change)."""
    path = next(p for p in sorted((ROOT / "measurements" / experiment).glob("*.json")) if "~" not in p.name)
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def write_node(
    folder: Path,
    node: str,
    card: str,
    *,
    host: str | None = None,
    day: int = 1,
    experiments: tuple[str, ...] = EXPERIMENTS,
) -> Path:
    """What make verify writes on node `node`, on card `card` (and host `host`), on 2026-11-<day>."""
    for experiment in experiments:
        data = source(experiment)
        data["provenance"] |= {"node": node, "gpu_uuid": card, "recorded_at": f"2026-11-{day:02d}T10:00:00+00:00"}
        for result in data["results"]:  # its history is of the day it was made: a first run of ours has none
            result.pop("first_measured", None)
        data.pop("drift", None)
        if host is not None:
            data["provenance"]["host_id"] = host
        target = folder / experiment / f"{node}.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return folder


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository whose verifier is this one and whose committed node h200-a is card A."""
    shutil.copytree(ROOT / "verifier", tmp_path / "verifier", ignore=shutil.ignore_patterns("__pycache__"))
    write_node(tmp_path / "measurements", "h200-a", A)
    return tmp_path


def refused(repo: Path, *args: str) -> str:
    """collect's standard error, after checking it refused and wrote nothing."""
    before = snapshot(repo / "measurements")
    run = cudagloss(repo, "collect", *args)
    assert run.returncode == 1, (run.stdout, run.stderr)
    assert "Traceback" not in run.stderr and snapshot(repo / "measurements") == before
    return run.stderr


def test_a_new_name_on_a_committed_card_is_refused_and_rename_merges_it_as_that_node(repo: Path) -> None:
    folder = write_node(repo / "in" / "h200-new", "h200-new", A, day=2)
    err = refused(repo, "in/h200-new")
    assert (
        f"in/h200-new/ptx-jit/h200-new.json:1:1: card {A} is named 'h200-new' here, but 'h200-a' in "
        "measurements/device-limits/h200-a.json: two names for one card\n"
        "    hint: if these are re-runs of node 'h200-a', collect them as its: --rename h200-new=h200-a\n"
    ) in err
    assert err.count("two names for one card") == 1, "one line per node and card, not per file"
    committed = (repo / "measurements" / "ptx-jit" / "h200-a.json").read_bytes()
    run = cudagloss(repo, "collect", str(folder), "--rename", "h200-new=h200-a")
    assert run.returncode == 0, run.stderr
    gpu = source("ptx-jit")["provenance"]["gpu_name"]
    assert f"node h200-a ({gpu}), from in/h200-new as node h200-new: 2 experiments" in run.stdout
    merged = json.loads((repo / "measurements" / "ptx-jit" / "h200-a.json").read_text(encoding="utf-8"))
    assert merged["provenance"]["node"] == "h200-a" and merged["provenance"]["recorded_at"].startswith("2026-11-02")
    assert not list((repo / "measurements").glob("*/h200-new*")), "merged as h200-a, under no other name"
    # The run it replaced is kept, byte for byte, as an earlier run of the card.
    assert (repo / "measurements" / "ptx-jit" / "h200-a~20261101T100000Z.json").read_bytes() == committed


def test_two_new_names_on_one_card_are_refused_across_folders_and_within_one(repo: Path) -> None:
    write_node(repo / "in" / "x1", "x1", B)
    write_node(repo / "in" / "x2", "x2", B)
    err = refused(repo, "in/x1", "in/x2")
    assert f"in/x2/ptx-jit/x2.json:1:1: card {B} is named 'x2' here, but 'x1' in in/x1/" in err
    assert "hint: one card is one node: collect its runs under one name (--rename NEW=NAME)" in err
    box = write_node(repo / "in" / "box", "box-gpu0", C, experiments=("ptx-jit",))
    write_node(box, "box-gpu1", C, experiments=("device-limits",))  # one card under two of a host's names
    err = refused(repo, "in/box")
    assert (
        f"in/box/device-limits/box-gpu1.json:1:1: card {C} is named 'box-gpu1' here, but 'box-gpu0' in in/box/ptx-jit/"
        in err
    )


def test_one_host_in_two_folders_is_refused(repo: Path) -> None:
    write_node(repo / "in" / "n1", "n1", B, host=HOST_1)
    write_node(repo / "in" / "n2", "n2", C, host=HOST_1)
    err = refused(repo, "in/n1", "in/n2")
    assert (
        f"in/n2/ptx-jit/n2.json:1:1: was measured on the same host as in/n1/ptx-jit/n1.json "
        f"(host_id {HOST_1}), which came in another folder: one host's cards arrive in one folder\n"
    ) in err
    assert "make verify DEVICES=all" in err and err.count("same host as") == 1
    write_node(repo / "in" / "n2", "n2", C, host=HOST_2)
    run = cudagloss(repo, "collect", "--dry-run", "in/n1", "in/n2")
    assert run.returncode == 0 and "would merge 4 runs from 2 nodes" in run.stderr, run.stderr


def test_a_committed_name_from_another_card_is_refused_and_can_be_named_apart(repo: Path) -> None:
    write_node(repo / "in" / "h200-a", "h200-a", B, day=2)
    err = refused(repo, "in/h200-a")
    assert (
        f"in/h200-a/ptx-jit/h200-a.json:1:1: node 'h200-a' was measured on card {B} here, but on card {A} "
        "in measurements/device-limits/h200-a.json: a node name names one card\n"
        "    hint: name this card's node apart: --rename h200-a=<new name> here, or VERIFY_NODE=<new name> on it\n"
    ) in err
    assert "CHANGED" not in err
    run = cudagloss(repo, "collect", "in/h200-a", "--rename", "h200-a=h200-b")
    assert run.returncode == 0 and "first run on this node" in run.stdout, run.stderr
    assert json.loads((repo / "measurements/ptx-jit/h200-b.json").read_text())["provenance"]["gpu_uuid"] == B
    assert json.loads((repo / "measurements/ptx-jit/h200-a.json").read_text())["provenance"]["gpu_uuid"] == A


def test_every_problem_at_once_and_an_earlier_run_is_refused(repo: Path) -> None:
    write_node(repo / "in" / "h200-a", "h200-a", B, host=HOST_1)  # a committed name, another card
    write_node(repo / "in" / "h200-new", "h200-new", A, host=HOST_1)  # a committed card, a new name; one host
    late = write_node(repo / "in" / "n3", "n3", C, experiments=("ptx-jit",))
    (late / "ptx-jit" / "n3.json").rename(late / "ptx-jit" / "n3~20261101T100000Z.json")
    write_node(late, "n3", C, day=2, experiments=("ptx-jit",))
    err = refused(repo, "in/h200-a", "in/h200-new", "in/n3")
    assert "node 'h200-a' was measured on card" in err and f"card {A} is named 'h200-new'" in err
    assert "same host as" in err
    assert (
        "in/n3/ptx-jit/n3~20261101T100000Z.json:1:1: is an earlier run (<node>~<stamp>.json): collect takes "
        "each node's latest run, and the committed folder keeps the runs it replaces itself\n"
    ) in err
    assert err.count("n3~20261101T100000Z.json") == 1, "said once, in its own words"
    assert err.rstrip().endswith("4 errors found")


def test_rename_of_a_node_no_folder_holds_and_a_bad_rename_are_usage_errors(repo: Path) -> None:
    write_node(repo / "in" / "x1", "x1", B)
    run = cudagloss(repo, "collect", "in/x1", "--rename", "x9=h200-a")
    assert run.returncode == 2 and run.stderr == "cudagloss collect: --rename x9=h200-a: no folder holds node 'x9'\n"
    run = cudagloss(repo, "collect", "in/x1", "--rename", "x1")
    assert run.returncode == 2 and "is not NEW=NAME" in run.stderr


def test_a_failed_write_undoes_the_earlier_run_it_kept(repo: Path) -> None:
    write_node(repo / "in" / "h200-a", "h200-a", A, day=2)
    write_node(repo / "in" / "h200-b", "h200-b", B, experiments=("ptx-jit",))
    stale = json.loads((repo / "measurements" / "device-limits" / "h200-a.json").read_text(encoding="utf-8"))
    stale["code_hash"], stale["provenance"]["recorded_at"] = "sha256:" + "0" * 64, "2026-10-30T10:00:00+00:00"
    earlier = repo / "measurements" / "device-limits" / "h200-a~20261030T100000Z.json"
    earlier.write_text(json.dumps(stale), encoding="utf-8")  # another recipe's: the merge would remove it
    (repo / "measurements" / "ptx-jit" / "h200-b.json").mkdir()  # the last write cannot happen
    before = snapshot(repo / "measurements")
    run = cudagloss(repo, "collect", "in/h200-a", "in/h200-b")
    assert run.returncode != 0 and "Traceback" not in run.stderr
    assert snapshot(repo / "measurements") == before, "h200-a's files as they were: none kept, none removed"
