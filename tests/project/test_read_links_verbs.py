"""`make verify`, `cudagloss new` and `cudagloss schema` with a committed folder or file link
(issue 39): each refuses with one line naming the link before it lists or opens anything
through it, and the folder outside is left as it was. strace confirms "nothing opened outside"
(tests/project/hostile_checkout.py); here, as root, the exit, the line and the canary tell.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import copy_checkout, cudagloss, move_out

PROJECT = ("terms", "measurements", "computed", "schema", "verifier", "src", "mkdocs.yml")
SECRET = "s3cr3t-0UTSIDE-39v"
READ = "{}:1:1: is a symbolic link; the {} and the folders above it are plain folders"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A checkout with the verifier and the schemas, beside a folder outside it."""
    root = copy_checkout(tmp_path / "repo", PROJECT)
    (tmp_path / "outside").mkdir()
    return root


def state(folder: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every file under folder: inode, mtime and bytes (what a write or a replace changes)."""
    return {
        p.relative_to(folder).as_posix(): (p.stat().st_ino, p.stat().st_mtime_ns, p.read_bytes())
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def verify(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`make verify` as the Makefile runs it: the checkout's own verifier and src."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(repo / "src"), str(repo)])}
    return subprocess.run(
        [sys.executable, "-m", "verifier", *args], cwd=repo, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("args", [(), ("--list",), ("--all",)], ids=["cited", "list", "all"])
@pytest.mark.parametrize("name,what", [("terms", "terms folder"), ("measurements", "measurements folder")])
def test_verify_refuses_a_folder_link_before_it_looks_for_a_gpu(repo: Path, args: tuple[str, ...], name: str,
                                                                what: str) -> None:  # fmt: skip
    outside = move_out(repo, name)
    (outside / "leak.yaml").write_text(f"name: {SECRET}\n", encoding="utf-8")
    before = state(outside)
    run = verify(repo, *args)
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    assert READ.format(name, what) in run.stderr.splitlines(), run.stderr
    assert "cannot tell which experiments" not in run.stderr and SECRET not in run.stdout + run.stderr
    assert state(outside) == before


def test_new_refuses_a_terms_folder_link_and_writes_nothing(repo: Path) -> None:
    outside = move_out(repo, "terms")
    before, names = state(outside), sorted(os.listdir(outside))
    run = cudagloss(repo, "new", "Canary probe")
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    assert run.stderr.startswith("cudagloss new: terms is a symbolic link: refusing to write through it"), run.stderr
    assert state(outside) == before and sorted(os.listdir(outside)) == names


@pytest.mark.parametrize("check", [False, True], ids=["write", "check"])
@pytest.mark.parametrize("name", ["schema", "schema/term.schema.json"], ids=["folder", "file"])
def test_schema_refuses_a_link_before_reading_it(repo: Path, name: str, check: bool) -> None:
    outside = move_out(repo, name)
    if outside.is_file():
        outside.write_text(SECRET, encoding="utf-8")
    watched = outside if outside.is_dir() else outside.parent
    before = state(watched)
    run = cudagloss(repo, "schema", *(["--check"] if check else []))
    assert run.returncode in (1, 2) and "Traceback" not in run.stderr, run.stderr
    line = READ.format(name, "schema") if check else f"cudagloss schema: {name} is a symbolic link: refusing to write"
    assert any(out.startswith(line) for out in run.stderr.splitlines()), run.stderr
    assert state(watched) == before


@pytest.mark.parametrize("name", ["terms/active-cycle.yaml", "terms/_sections.yaml"])
def test_verify_and_new_refuse_a_term_file_link_before_the_loader_resolves_it(repo: Path, name: str) -> None:
    outside = move_out(repo, name)
    before = state(outside.parent)
    line = f"{name}:1:1: is a symbolic link; the term files are plain files"
    run = verify(repo)
    assert run.returncode == 2 and line in run.stderr.splitlines(), run.stderr
    made = cudagloss(repo, "new", "Canary probe")
    assert made.returncode == 1 and line in made.stderr.splitlines(), made.stderr
    assert not (repo / "terms" / "canary-probe.yaml").exists() and state(outside.parent) == before
