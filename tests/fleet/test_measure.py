"""`make measure` (fleet/measure.py): the node name a reader's card gets, and what it refuses.

No GPU here: a stand-in `nvidia-smi` (a mock, named as such: no real local part prints a GPU's
name and UUID) is a two-line shell script on PATH; everything else is the real script."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "fleet" / "measure.py"


def _run(tmp_path: Path, says: str, *args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    smi = bin_dir / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\nprintf '%s\\n' {says!r}\nexit {code}\n", encoding="utf-8")
    smi.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin"}
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=60)


def test_the_node_is_the_model_and_the_card(tmp_path: Path) -> None:
    done = _run(tmp_path, "NVIDIA GeForce RTX 4090, GPU-3f1ceb1e-aaaa-bbbb-cccc-0123456789ab", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "node nvidia-geforce-rtx-4090-3f1ceb1e, writing contributed/nvidia-geforce-rtx-4090-3f1ceb1e/" in done.stdout


@pytest.mark.parametrize(
    "says",
    ["../../etc/x; rm -rf /, GPU-deadbeef-0000", "$(touch pwned) `id`, GPU-0badc0de-1111", "A,B,C, GPU-12345678-9"],
)
def test_a_hostile_gpu_name_becomes_a_safe_node_name(tmp_path: Path, says: str) -> None:
    done = _run(tmp_path, says, "--dry-run")
    assert done.returncode == 0, done.stderr
    node = done.stdout.split("node ", 1)[1].split(",", 1)[0]
    assert all(c.isalnum() or c in "._-" for c in node) and ".." not in node and not node.startswith(("-", "."))
    assert not (ROOT / "pwned").exists() and not (tmp_path / "pwned").exists()


@pytest.mark.parametrize(("says", "code"), [("", 0), ("No devices were found", 6)])
def test_no_gpu_is_one_line_and_exit_3(tmp_path: Path, says: str, code: int) -> None:
    done = _run(tmp_path, says, "--dry-run", code=code)
    assert done.returncode == 3 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("make measure: ")


def test_no_nvidia_smi_is_one_line_and_exit_3() -> None:
    env = {**os.environ, "PATH": "/nonexistent"}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--dry-run"], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 3 and "no nvidia-smi on PATH" in done.stderr and done.stderr.count("\n") == 1
