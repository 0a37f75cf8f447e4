"""`cudagloss collect` with a committed symbolic link (issue 39): a measurement file, an experiment
folder or a node folder that links outside is refused with one line before anything is read, and
the canary outside keeps its bytes, inode and mtime; a failed merge's undo never follows a link."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from conftest import ROOT, cudagloss
from cudagloss.merge.guard import Undo

NODE, EXPERIMENT = "h200-3f1ceb1e", "device-limits"
RUN = f"{NODE}.json"


def state(folder: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every file under folder, links not followed: inode, mtime and bytes."""
    return {
        p.relative_to(folder).as_posix(): (p.lstat().st_ino, p.lstat().st_mtime_ns, p.read_bytes())
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A checkout with the committed measurements and a node folder that re-runs EXPERIMENT
    (its latest run, changed so that a merge would write), and a canary folder outside it."""
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "measurements", root / "measurements")
    shutil.copytree(ROOT / "verifier", root / "verifier", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "in" / NODE / EXPERIMENT).mkdir(parents=True)
    shutil.copy(root / "measurements" / EXPERIMENT / RUN, root / "in" / NODE / EXPERIMENT / RUN)
    (tmp_path / "canary").mkdir()
    return root


def plant(repo: Path, where: str) -> Path:
    """Move repo/where into the canary folder and commit a link to it in its place."""
    inside, outside = repo / where, repo.parent / "canary" / Path(where).name
    shutil.move(inside, outside)
    inside.symlink_to(outside, target_is_directory=outside.is_dir())
    for name in (f"{NODE}.failed.json", f"{NODE}.json.new"):  # what an undo would have removed through it
        if outside.is_dir():
            (outside / name).write_text("{}\n", encoding="utf-8")
    return outside


@pytest.mark.parametrize(
    "where",
    [
        f"measurements/{EXPERIMENT}/{RUN}",
        f"measurements/{EXPERIMENT}",
        "measurements",
        f"in/{NODE}/{EXPERIMENT}",
        f"in/{NODE}",
    ],
    ids=["committed-file", "committed-folder", "measurements", "node-experiment-folder", "node-folder"],
)
def test_a_link_refuses_the_merge_and_nothing_outside_changes(repo: Path, where: str) -> None:
    plant(repo, where)
    canary = repo.parent / "canary"
    before, names = state(canary), sorted(os.listdir(canary))
    run = cudagloss(repo, "collect", f"in/{NODE}")
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    errors = [line for line in run.stderr.splitlines() if ":1:1: " in line]
    assert errors == [f"{where}:1:1: is a symbolic link: collect reads and writes the measurement folders, never "
                      "through a link"], run.stderr  # fmt: skip
    assert state(canary) == before and sorted(os.listdir(canary)) == names


def test_the_undo_restores_only_what_changed_and_never_through_a_link(tmp_path: Path) -> None:
    folder, outside = tmp_path / "repo", tmp_path / "outside"
    kept, swapped, made = folder / "kept.json", folder / "swapped.json", folder / "made.json"
    for path, text in ((kept, "old\n"), (swapped, "old\n"), (outside / "swapped.json", "outside\n")):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    undo = Undo()
    cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        for path in (kept, swapped, made):
            undo.remember(path)
        kept_status = kept.lstat()
        swapped.unlink()
        swapped.symlink_to(outside / "swapped.json")  # the merge went wrong and a link stands there now
        made.write_text("new\n")
        before = state(outside)
        undo.restore()
    finally:
        os.chdir(cwd)
    assert state(outside) == before  # nothing written through the link
    assert not made.exists()  # made by the run: removed
    assert (kept.lstat().st_ino, kept.lstat().st_mtime_ns) == (kept_status.st_ino, kept_status.st_mtime_ns)
