"""Writes through committed links (issue 27, class 1): a pull request can commit a symbolic link
where a command writes; every such write is refused with one line before anything is touched,
and nothing outside the repository is written or deleted. Real files, real links, the real CLI.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from pathlib import Path

import pytest

from conftest import ROOT, copy_checkout, cudagloss
from cudagloss.errors import UsageError
from cudagloss.files.folder import MARKER, remove_stale_folders, replace_folder
from cudagloss.files.inside import refuse_links

PROJECT = ("terms", "templates", "measurements", "computed", "docs", "overrides", "mkdocs.yml")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A copy of the glossary as a pull request's checkout, beside a folder of the user's."""
    root = copy_checkout(tmp_path / "repo", PROJECT)
    user = tmp_path / "users-files"
    user.mkdir()
    (user / "precious.txt").write_text("the user's own file\n")
    return root


def untouched(user: Path) -> bool:
    return sorted(p.name for p in user.iterdir()) == ["precious.txt"] and (
        (user / "precious.txt").read_text() == "the user's own file\n"
    )


def refused(run: object, name: str) -> None:
    out = f"{run.stdout}{run.stderr}"  # type: ignore[attr-defined]
    assert run.returncode == 2, out  # type: ignore[attr-defined]
    assert f"{name} is a symbolic link: refusing to write through it" in out
    assert "Traceback" not in out and len(run.stderr.strip().splitlines()) == 1  # type: ignore[attr-defined]


def test_render_refuses_a_committed_build_link_and_writes_nothing_outside(repo: Path) -> None:
    user = repo.parent / "users-files"
    (repo / "build").symlink_to(user)
    refused(cudagloss(repo, "render", "--out", "build/site-tree"), "build")
    assert untouched(user)


def test_render_refuses_a_committed_site_link_before_make_build_empties_it(repo: Path) -> None:
    user = repo.parent / "users-files"
    (repo / "site").symlink_to(user)
    refused(cudagloss(repo, "render", "--out", "build/site-tree", "--site-dir", "site"), "site")
    assert untouched(user) and not (repo / "build").exists(), "refused before anything was written"
    assert "--site-dir site" in (ROOT / "Makefile").read_text(), "make render (and so make build) asks for it"


def test_export_refuses_a_committed_link_at_any_file_it_writes(repo: Path) -> None:
    user = repo.parent / "users-files"
    (repo / "export").mkdir()
    (repo / "export" / "llms-full.txt").symlink_to(user / "precious.txt")
    refused(cudagloss(repo, "export", "terms", "--out", "export"), "export/llms-full.txt")
    assert untouched(user) and sorted(p.name for p in (repo / "export").iterdir()) == ["llms-full.txt"]


def test_a_measurement_is_never_recorded_through_a_committed_link(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cudagloss.model.measurement import Gate, Measurement, Result, record

    user = repo.parent / "users-files"
    folder = repo / "measurements" / "ptx-jit"
    (folder / "node-a.json").symlink_to(user / "precious.txt")
    monkeypatch.chdir(repo)
    run = Measurement("ptx-jit", "test", "sha256:abc", "ok", {"node": "node-a"}, [Gate("g", True)], [Result("x", 1)])
    with pytest.raises(UsageError, match=r"measurements/ptx-jit/node-a\.json is a symbolic link"):
        record(run, repo / "measurements")
    assert untouched(user)


def test_a_link_on_the_way_is_refused_but_a_folder_the_user_names_outside_is_theirs(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "via").symlink_to(tmp_path / "real")
    with pytest.raises(UsageError, match="via is a symbolic link"):
        refuse_links(tmp_path / "via" / "deep" / "file.txt", root=tmp_path)
    refuse_links(tmp_path / "real" / "new" / "file.txt", root=tmp_path)  # no link on the way: fine
    refuse_links(tmp_path / "via" / "file.txt", root=tmp_path / "real")  # outside root: only its last part counts


def test_a_killed_write_leaves_temporaries_that_the_next_one_removes(tmp_path: Path) -> None:
    out = tmp_path / "site-tree"
    replace_folder(out, [("page.md", b"good")])
    dead = tmp_path / f".site-tree.cudagloss-{'0' * 12}.new.tmp"  # what a SIGKILL mid-write leaves
    (dead / "deep").mkdir(parents=True)
    (dead / MARKER).write_text("x")
    (dead / "deep" / "half.md").write_text("half")
    live = tmp_path / f".site-tree.cudagloss-{'1' * 12}.new.tmp"  # another write, still running
    live.mkdir()
    (live / MARKER).write_text("x")
    fd = os.open(live / MARKER, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        replace_folder(out, [("page.md", b"newer")])
        assert not dead.exists() and live.is_dir(), "the dead write's folder goes, the live one's stays"
    finally:
        os.close(fd)
    assert (out / "page.md").read_bytes() == b"newer"


def test_a_write_killed_between_its_renames_gets_its_last_good_folder_back(tmp_path: Path) -> None:
    out = tmp_path / "site-tree"
    replace_folder(out, [("page.md", b"good")])
    old = tmp_path / f".site-tree.cudagloss-{'2' * 12}.old.tmp"
    os.rename(out, old)  # the old tree moved aside; the process died before the new one moved in
    assert remove_stale_folders(out) == 0
    assert (out / "page.md").read_bytes() == b"good" and not old.exists()


def test_new_and_schema_refuse_a_committed_link_where_they_write(repo: Path) -> None:
    user = repo.parent / "users-files"
    shutil.move(repo / "terms", repo / "real-terms")
    (repo / "terms").symlink_to(repo / "real-terms")
    refused(cudagloss(repo, "new", "Zebra striping", "--terms", "terms"), "terms")
    assert not (repo / "real-terms" / "zebra-striping.yaml").exists()
    (repo / "schema").mkdir()
    (repo / "schema" / "term.schema.json").symlink_to(user / "precious.txt")
    refused(cudagloss(repo, "schema", "--out", "schema"), "schema/term.schema.json")
    assert untouched(user)
