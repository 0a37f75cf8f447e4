"""`cudagloss collect` where the committed review copy (<node>.json.new), or the run or its
failure, is a folder (issue 39, class 3c): one line for each, nothing written, no traceback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import ROOT, cudagloss
from cudagloss.files.atomic import WriteFailed
from cudagloss.merge.rerun import against_committed, write
from cudagloss.model.measurement import Gate, Measurement, Result

NODE, EXPERIMENT = "h200-3f1ceb1e", "device-limits"
COMMITTED = ROOT / "measurements"


def node_folder(base: Path) -> Path:
    """What make verify writes on the committed node re-running EXPERIMENT: its committed run."""
    (base / NODE / EXPERIMENT).mkdir(parents=True)
    shutil.copy(COMMITTED / EXPERIMENT / f"{NODE}.json", base / NODE / EXPERIMENT / f"{NODE}.json")
    return base / NODE


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def run(day: int) -> Measurement:
    """A good run of experiment 'copy' on node-a, recorded on that day of November 2026."""
    card = "GPU-11111111-2222-3333-4444-555555555555"
    provenance = {"node": "node-a", "gpu_name": "NVIDIA H200", "gpu_uuid": card, "duration_s": 1.0}
    provenance["recorded_at"] = f"2026-11-{day:02d}T10:00:00+00:00"
    results = [Result("warp_size", 32, "threads")]
    return Measurement("copy", "test", "sha256:now", "ok", provenance, [Gate("ok", True)], results)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    shutil.copytree(COMMITTED, tmp_path / "measurements")
    shutil.copytree(ROOT / "verifier", tmp_path / "verifier", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


@pytest.mark.parametrize("changed", [False, True], ids=["same-run-removes-it", "changed-run-writes-it"])
@pytest.mark.parametrize("name", [f"{NODE}.json.new", f"{NODE}.failed.json"])
def test_a_committed_path_that_is_a_folder_is_one_line(repo: Path, changed: bool, name: str) -> None:
    folder = node_folder(repo / "in")
    if changed:
        path = folder / EXPERIMENT / f"{NODE}.json"
        data = json.loads(path.read_text(encoding="utf-8"))
        next(r for r in data["results"] if r["name"] == "warp_size")["value"] = 64
        path.write_text(json.dumps(data), encoding="utf-8")
    (repo / "measurements" / EXPERIMENT / name).mkdir()
    (repo / "measurements" / EXPERIMENT / name / "inside").write_text("x", encoding="utf-8")
    before = snapshot(repo / "measurements")
    run = cudagloss(repo, "collect", str(folder))
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    line = f"measurements/{EXPERIMENT}/{name}:1:1: is not a regular file: a merge writes or removes this path"
    assert line in run.stderr and "hint: remove it from the repository" in run.stderr
    assert snapshot(repo / "measurements") == before


def test_write_refuses_a_review_copy_that_is_a_folder_before_writing_anything(tmp_path: Path) -> None:
    first = run(1)
    write(first, tmp_path, against_committed(first, tmp_path))
    (tmp_path / "copy" / "node-a.json.new").mkdir()
    before = snapshot(tmp_path)
    second = run(2)
    with pytest.raises(WriteFailed, match=r"node-a\.json\.new: not a regular file; left as it is"):
        write(second, tmp_path, against_committed(second, tmp_path))
    assert snapshot(tmp_path) == before
