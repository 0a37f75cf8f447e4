"""`cudagloss collect`: node folders from a fleet merged into measurements/, all or nothing.

The node folders are the committed H200 runs under other node names (what a second node
running the same code on the same GPU type writes), plus hostile variants of them."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, cudagloss
from cudagloss.load.catalog import load_catalog
from cudagloss.load.measurements import load_measurements

COMMITTED = ROOT / "measurements"
EXPERIMENTS = ("ptx-jit", "device-limits", "occupancy")


def fake_card(node: str) -> str:
    """A card UUID of the node's own (a node name names one card): stable, made from the name."""
    digest = hashlib.sha256(node.encode()).hexdigest()
    return f"GPU-{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


def node_folder(
    base: Path,
    node: str,
    experiments: tuple[str, ...] = EXPERIMENTS,
    source: str = "h200-3f1ceb1e",
    card: str | None = None,
    host: str | None = None,
) -> Path:
    """What make verify writes on a node named `node`: the committed runs, renamed, on a card of
    the node's own (fake_card; the source's own card under the source's name) unless `card`
    names one, on `host` (a host_id) if given."""
    folder = base / node
    for experiment in experiments:
        data = json.loads((COMMITTED / experiment / f"{source}.json").read_text(encoding="utf-8"))
        data["provenance"]["node"] = node
        if card is not None or node != source:  # a re-run under the source's own name is its card's
            data["provenance"]["gpu_uuid"] = card or fake_card(node)
        if host is not None:
            data["provenance"]["host_id"] = host
        target = folder / experiment / f"{node}.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return folder


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A copy of the repository's measurements and verifier, where collect runs."""
    shutil.copytree(COMMITTED, tmp_path / "measurements")
    shutil.copytree(ROOT / "verifier", tmp_path / "verifier", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def test_two_nodes_merge_and_the_report_names_each(repo: Path) -> None:
    a, b = node_folder(repo / "in", "h200-b"), node_folder(repo / "in", "h200-c", ("ptx-jit",))
    run = cudagloss(repo, "collect", str(a), str(b))
    assert run.returncode == 0, run.stderr
    assert "node h200-b (NVIDIA H200)" in run.stdout and "node h200-c (NVIDIA H200)" in run.stdout
    assert "first run on this node" in run.stdout and "merged 4 runs from 2 nodes" in run.stderr
    for experiment in EXPERIMENTS:
        assert (repo / "measurements" / experiment / "h200-b.json").is_file()
    catalog = load_catalog(ROOT)
    found, problems = load_measurements(repo / "measurements", repo, catalog)
    assert not problems
    ptx = next(r for r in found if r.id == "ptx-jit")
    assert {"h200-3f1ceb1e", "h200-b", "h200-c"} <= {n.node for n in ptx.runs} and not any(n.stale for n in ptx.runs)
    again = cudagloss(repo, "collect", str(a), "--format", "json")  # a re-run of the same node: SAME, in JSON
    report = json.loads(again.stdout)
    assert again.returncode == 0 and report["nodes"] == ["h200-b"]
    verdicts = {row["verdict"] for e in report["experiments"] for row in e["rows"]}
    assert verdicts <= {"SAME", "DERIVED"} and "SAME" in verdicts


def test_a_changed_discrete_value_waits_for_review(repo: Path) -> None:
    folder = node_folder(repo / "in", "h200-3f1ceb1e", ("device-limits",))
    path = folder / "device-limits" / "h200-3f1ceb1e.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    next(r for r in data["results"] if r["name"] == "warp_size")["value"] = 64
    path.write_text(json.dumps(data), encoding="utf-8")
    before = (repo / "measurements/device-limits/h200-3f1ceb1e.json").read_bytes()
    run = cudagloss(repo, "collect", str(folder))
    assert run.returncode == 0 and "CHANGED  warp_size 32 threads/warp -> 64 threads/warp" in run.stdout
    assert (repo / "measurements/device-limits/h200-3f1ceb1e.json").read_bytes() == before
    assert (repo / "measurements/device-limits/h200-3f1ceb1e.json.new").is_file() and "waits for review" in run.stderr


def _edit(change: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    def apply(folder: Path) -> None:
        path = folder / "ptx-jit" / f"{folder.name}.json"
        data = json.loads(path.read_text(encoding="utf-8"))
        change(data)
        path.write_text(json.dumps(data), encoding="utf-8")

    return apply


def _fail_gate(data: dict[str, Any]) -> None:
    data["gates"][0]["passed"] = False


def _rename(folder: Path) -> None:
    (folder / "ptx-jit" / f"{folder.name}.json").rename(folder / "ptx-jit" / "other-node.json")


def _failed_run(folder: Path) -> None:
    src = folder / "ptx-jit" / f"{folder.name}.json"
    data = json.loads(src.read_text(encoding="utf-8"))
    data["status"], data["error"] = "failed", "boom"
    (folder / "ptx-jit" / f"{folder.name}.failed.json").write_text(json.dumps(data), encoding="utf-8")


def _review_copy(folder: Path) -> None:
    shutil.copy(folder / "ptx-jit" / f"{folder.name}.json", folder / "ptx-jit" / f"{folder.name}.json.new")


def _symlink(folder: Path) -> None:
    target = folder / "ptx-jit" / f"{folder.name}.json"
    target.unlink()
    os.symlink(COMMITTED / "ptx-jit" / "h200-3f1ceb1e.json", target)


def _garbage(folder: Path) -> None:
    (folder / "ptx-jit" / f"{folder.name}.json").write_text('{"experiment": "ptx-jit", "status": ', encoding="utf-8")


HOSTILE: dict[str, tuple[Callable[[Path], None], str]] = {
    "stale code": (_edit(lambda d: d.update(recipe="sha256:" + "0" * 64)), "differs from this repository's"),
    "a failed gate": (_edit(_fail_gate), "gates did not pass"),
    "provenance without its GPU": (_edit(lambda d: d["provenance"].pop("gpu_name")), "provenance lacks gpu_name"),
    "provenance without its commit": (_edit(lambda d: d["provenance"].pop("git_commit")), "lacks git_commit"),
    "a file named for another node": (_rename, "not 'ptx-jit' on 'other-node'"),
    "a failed run": (_failed_run, "is a failed run"),
    "a review copy": (_review_copy, ".json.new"),
    "a link": (_symlink, "link"),
    "not JSON": (_garbage, "ptx-jit"),
    "a future date": (_edit(lambda d: d["provenance"].update(recorded_at="2999-01-01T00:00:00+00:00")), "future"),
    "a format from the future": (_edit(lambda d: d.update(format_version=99)), "format"),
    "an unsafe node name": (_edit(lambda d: d["provenance"].update(node="../../etc")), "node name"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_each_bad_file_is_refused_with_its_reason_and_nothing_is_merged(repo: Path, case: str) -> None:
    good = node_folder(repo / "in", "h200-good")
    bad = node_folder(repo / "in", "h200-bad")
    spoil, reason = HOSTILE[case]
    spoil(bad)
    before = snapshot(repo / "measurements")
    run = cudagloss(repo, "collect", str(good), str(bad))
    assert run.returncode == 1, (case, run.stdout, run.stderr)
    assert reason in run.stderr, (case, run.stderr)
    assert "Traceback" not in run.stderr
    assert snapshot(repo / "measurements") == before  # the good folder was not merged either


def test_a_run_summarised_by_older_code_is_merged_and_one_of_another_recipe_is_not(repo: Path) -> None:
    """What reached the GPU is the recipe: a run whose summary code alone is older is merged (check
    then asks for make rederive, or notes it where it kept no raw samples); another recipe is stale."""
    older = node_folder(repo / "in", "h200-older", ("occupancy",))
    _edit_file(older / "occupancy" / "h200-older.json", lambda d: d.update(summary="sha256:" + "1" * 64))
    run = cudagloss(repo, "collect", str(older))
    assert run.returncode == 0, run.stderr
    assert (repo / "measurements" / "occupancy" / "h200-older.json").exists()
    other = node_folder(repo / "in2", "h200-other", ("occupancy",))
    _edit_file(other / "occupancy" / "h200-other.json", lambda d: d.update(recipe="sha256:" + "1" * 64))
    run = cudagloss(repo, "collect", str(other))
    assert run.returncode == 1 and "recipe that differs from this repository's" in run.stderr


def _edit_file(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def test_one_node_from_two_folders_is_refused(repo: Path) -> None:
    one = node_folder(repo / "a", "h200-x", ("ptx-jit",))
    two = node_folder(repo / "b", "h200-x", ("occupancy",))
    before = snapshot(repo / "measurements")
    run = cudagloss(repo, "collect", str(one), str(two))
    assert run.returncode == 1 and "node 'h200-x' also has files in" in run.stderr
    assert snapshot(repo / "measurements") == before
    run = cudagloss(repo, "collect", str(repo / "nowhere"))
    assert run.returncode == 1 and "is not a folder of measurements" in run.stderr


def test_dry_run_writes_nothing_and_a_failed_write_undoes_the_merge(repo: Path) -> None:
    a = node_folder(repo / "in", "h200-a", ("device-limits",))
    b = node_folder(repo / "in", "h200-b", ("ptx-jit",))
    before = snapshot(repo / "measurements")
    run = cudagloss(repo, "collect", "--dry-run", str(a), str(b))
    assert run.returncode == 0 and "would merge 2 runs" in run.stderr
    assert snapshot(repo / "measurements") == before
    (repo / "measurements" / "ptx-jit" / "h200-b.json").mkdir()  # the second write cannot happen
    run = cudagloss(repo, "collect", str(a), str(b))
    assert run.returncode != 0 and "Traceback" not in run.stderr
    assert not (repo / "measurements" / "device-limits" / "h200-a.json").exists()  # the first write was undone


def test_a_node_folder_may_not_carry_a_file_for_another_node(repo: Path) -> None:
    """Issue 27, class 2: one node's artifact that also holds a file named for h200-3f1ceb1e would
    replace that node's committed file; the folder is refused and nothing is written."""
    mine = node_folder(repo / "in", "h200-b", ("ptx-jit",))
    other = node_folder(repo / "forged", "h200-3f1ceb1e", ("occupancy",))
    shutil.copytree(other / "occupancy", mine / "occupancy")  # h200-3f1ceb1e's run inside h200-b's folder
    before = snapshot(repo / "measurements")
    run = cudagloss(repo, "collect", str(mine))
    assert run.returncode == 1 and "holds files of more than one node (h200-3f1ceb1e, h200-b)" in run.stderr
    assert snapshot(repo / "measurements") == before and "Traceback" not in run.stderr


def test_a_host_and_its_cards_are_one_node_folder(repo: Path) -> None:
    folder = node_folder(repo / "in", "box", ("ptx-jit",))  # DEVICES=all: the host-wide run and each card
    for card in ("box-gpu0", "box-gpu1"):
        shutil.copytree(
            node_folder(repo / "cards", card, ("occupancy",)) / "occupancy", folder / "occupancy", dirs_exist_ok=True
        )
    run = cudagloss(repo, "collect", "--dry-run", str(folder))
    assert run.returncode == 0, run.stderr
    assert "would merge 3 runs from 3 nodes" in run.stderr


@pytest.mark.parametrize("name", ["H200_3f1ceb1e", "h200_3f1ceb1e", "H200-3F1CEB1E"])
def test_a_node_name_that_folds_onto_a_committed_one_is_refused(repo: Path, name: str) -> None:
    folder = node_folder(repo / "in", name, ("ptx-jit",))
    before = snapshot(repo / "measurements")
    run = cudagloss(repo, "collect", str(folder))
    assert run.returncode == 1, run.stdout
    assert f"node '{name}' differs from node 'h200-3f1ceb1e' only by case or '_'/'-'" in run.stderr
    assert snapshot(repo / "measurements") == before
    a, b = node_folder(repo / "x", "gpu-node", ("ptx-jit",)), node_folder(repo / "y", "GPU_node", ("occupancy",))
    run = cudagloss(repo, "collect", str(a), str(b))  # two incoming folders under one folded name
    assert run.returncode == 1 and "differs from node 'gpu-node' only by case" in run.stderr
