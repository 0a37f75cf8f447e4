"""Shared paths and helpers for the tests."""

from __future__ import annotations

import atexit
import datetime as dt
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from cudagloss.model.measurement import Measurement

ROOT = Path(__file__).resolve().parent.parent
CHECK_CACHE = tempfile.mkdtemp(prefix="cudagloss-test-cache-")
"""The check cache of every test and every command a test runs (never the user's own)."""
os.environ["CUDAGLOSS_CACHE_DIR"] = CHECK_CACHE
os.environ["CUDAGLOSS_LOCAL_SOURCES"] = "127.0.0.1/32"
"""The tests' servers listen on 127.0.0.1: the checks are told that these sources are local
(cudagloss.model.addresses); every other private address stays refused, and the tests of the
rule itself clear it."""
atexit.register(shutil.rmtree, CHECK_CACHE, True)
pytest_plugins = ["browsing"]
"""The repository's site, its server and Chromium, one of each per session (tests/browsing.py)."""
FIXTURES = Path(__file__).resolve().parent / "fixtures"
GOLDEN = Path(__file__).resolve().parent / "golden"


def check_golden(name: str, actual: str) -> None:
    """Compare with tests/golden/name; UPDATE_GOLDEN=1 rewrites it (review the diff!)."""
    import os

    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(actual, encoding="utf-8")
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, f"{name} differs from the golden file; UPDATE_GOLDEN=1 rewrites it"


@pytest.fixture
def stamp_day(request: pytest.FixtureRequest) -> None:
    """Set the test module's TODAY, the day the link checker stamps, as the test starts: a date read
    when the module was imported goes stale for a run that crosses midnight."""
    request.module.TODAY = dt.date.today().isoformat()


@pytest.fixture
def in_root(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run with the repository root as the working directory (paths print relative to it)."""
    monkeypatch.chdir(ROOT)
    return ROOT


def cudagloss(root: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the real `cudagloss` command line in root, as an author would."""
    return subprocess.run(
        [sys.executable, "-m", "cudagloss", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
    )


def copy_checkout(root: Path, names: tuple[str, ...]) -> Path:
    """root: a copy of these files and folders of the repository, as a pull request's checkout."""
    root.mkdir()
    for name in names:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, root / name)
        else:
            shutil.copy2(source, root / name)
    return root


def move_out(repo: Path, name: str) -> Path:
    """repo/name moved to a folder `outside` beside the repository and committed back as a link
    to it, as a pull request could: the hostile checkout of the read-guard tests."""
    outside = repo.parent / "outside" / name.replace("/", "-")
    outside.parent.mkdir(exist_ok=True)
    shutil.move(repo / name, outside)
    (repo / name).symlink_to(outside)
    return outside


def load_measurement(path: Path) -> Measurement:
    """One measurement file read and checked as the site reads it."""
    from cudagloss.model.measurement import parse_measurement, read_measurement_text

    return parse_measurement(read_measurement_text(path, str(path)), str(path))


@pytest.fixture
def make_copy(tmp_path: Path) -> tuple[Path, list[str]]:
    """The Makefile in a copy of the repository with one term; make runs our cudagloss."""
    if shutil.which("make") is None or not (Path(sys.executable).parent / "cudagloss").exists():
        pytest.skip("needs make and the cudagloss command beside this python")
    root = tmp_path / "repo"
    (root / "terms").mkdir(parents=True)
    for name in ("Makefile", "pyproject.toml", *(p.name for p in ROOT.glob("requirements*.lock"))):
        shutil.copy2(ROOT / name, root / name)
    shutil.copy(ROOT / "terms" / "_sections.yaml", root / "terms")
    shutil.copy(ROOT / "terms" / "ptx.yaml", root / "terms")
    installed = [f"-o{stamp}" for stamp in (".venv/.installed", ".venv/.installed-author")]  # never install here
    return root, ["make", "--no-print-directory", *installed, f"BIN={Path(sys.executable).parent}"]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Before `-m` chooses: every test that reaches a tier's machinery carries its marker."""
    from tiers import sort

    problems = sort(items)
    if problems:
        raise pytest.UsageError(
            "these tests reach a tier without its marker (tests/tiers.py):\n  " + "\n  ".join(problems)
        )
