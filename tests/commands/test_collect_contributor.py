"""A reader's card is credited from git (cudagloss.merge.contributor): collect writes who added
contributed/<node>/ into each run's provenance as contributed_by, and nothing else can set it.
Real git repositories, the real collect plan."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_collect import node_folder

from conftest import ROOT
from cudagloss.load.catalog import load_catalog
from cudagloss.merge.collect import plan
from cudagloss.merge.contributor import clean, contributor
from gitrepo import git


def _repo(tmp_path: Path, author: str, node: str = "h200-c0ffee02") -> tuple[Path, Path]:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    folder = node_folder(repo / "contributed", node, experiments=("device-limits",))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "my card", author=author)
    return repo, folder


def _credited(repo: Path, folder: Path) -> object:
    catalog = load_catalog(ROOT)
    assert catalog is not None
    found = plan([folder], repo / "measurements", catalog, repo)
    assert not found.refused, found.refused
    return found.runs[0][0].measurement.provenance.get("contributed_by")


def test_collect_credits_who_added_the_folder(tmp_path: Path) -> None:
    repo, folder = _repo(tmp_path, "Grace Hopper")
    git(repo, "commit", "-q", "--allow-empty", "-m", "later", author="Someone Else")
    assert contributor(folder, repo) == "Grace Hopper"
    assert _credited(repo, folder) == "Grace Hopper"


def test_a_name_the_file_brings_is_not_believed(tmp_path: Path) -> None:
    repo, folder = _repo(tmp_path, "Grace Hopper")
    path = folder / "device-limits" / "h200-c0ffee02.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["provenance"]["contributed_by"] = "NVIDIA Corporation"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert _credited(repo, folder) == "Grace Hopper"
    outside = tmp_path / "elsewhere" / "h200-c0ffee02"
    outside.parent.mkdir()
    folder.rename(outside)
    assert contributor(outside, repo) is None and _credited(repo, outside) is None


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("Ada\u202e Lovelace\u0007", "Ada Lovelace"),
        ("  Ada \n\t Lovelace ", "Ada Lovelace"),
        ("ada@example.com", None),
        ("Ada <ada@example.com>", None),
        ("\u200b\u2028", None),
        ("x" * 500, "x" * 80),
        ("<script>alert(1)</script>", "<script>alert(1)</script>"),  # text: the page escapes it
    ],
)
def test_a_name_is_cleaned_and_an_address_never_kept(raw: str, shown: str | None) -> None:
    assert clean(raw) == shown


def test_git_that_cannot_say_credits_no_one(tmp_path: Path) -> None:
    folder = node_folder(tmp_path / "contributed", "h200-c0ffee03", experiments=("device-limits",))
    assert contributor(folder, tmp_path) is None  # not a git repository
