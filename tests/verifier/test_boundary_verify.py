"""`make verify` inside the one error boundary (cudagloss.boundary), as `python -m verifier`
runs: a full disk, a reader that leaves and Ctrl-C are one line and an exit status, never a
traceback. Without a GPU, what it writes is its standard output (`--list`); on a GPU node a
measurement file is written onto a full disk too."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ROOT
from disks import small_tmpfs

VERIFY = [sys.executable, "-m", "verifier"]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
FULL = "No space left on device"


def test_a_list_written_to_a_full_device_is_one_line_and_exit_5() -> None:
    """`make verify ARGS=--list > /dev/full`: the list cannot be written anywhere."""
    with open("/dev/full", "w") as full:
        run = subprocess.run(
            [*VERIFY, "--list"], cwd=ROOT, env=ENV, stdout=full, stderr=subprocess.PIPE, text=True, timeout=120
        )
    assert (run.returncode, run.stderr) == (5, f"make verify: cannot write standard output: {FULL}\n")


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A real 64 KiB tmpfs, filled to the last block (root only; CI runs as root)."""
    with small_tmpfs(tmp_path, folder="out", full=True) as disk:
        yield disk


def test_a_list_redirected_onto_a_full_disk_is_one_line_and_exit_5(full_disk: Path) -> None:
    with open(full_disk / "list.txt", "w") as out:
        run = subprocess.run(
            [*VERIFY, "--list"], cwd=ROOT, env=ENV, stdout=out, stderr=subprocess.PIPE, text=True, timeout=120
        )
    assert (run.returncode, run.stderr) == (5, f"make verify: cannot write standard output: {FULL}\n")


def test_a_reader_that_leaves_is_no_error() -> None:
    """`make verify ARGS=--list | head -c0`: the reader is gone before a line is written."""
    run = subprocess.Popen(
        [*VERIFY, "--list"], cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert run.stdout is not None and run.stderr is not None
    run.stdout.close()
    with run.stderr:
        err = run.stderr.read()
    assert (run.wait(timeout=120), err) == (0, "")  # no 'Exception ignored', no traceback


STAND_IN = """
    # A stand-in for cuda-bindings whose driver takes its time to load (a GPU being reset,
    # a slow persistence daemon): it says so, then waits until it is interrupted.
    import sys, time
    print("cuda.bindings: waiting for the driver", file=sys.stderr, flush=True)
    while True:
        time.sleep(0.05)
"""


def test_ctrl_c_is_one_line_and_exit_130(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT) once the run is waiting for the driver: one line, 130, the private
    JIT cache folder removed as the run unwinds."""
    package = tmp_path / "stand-in" / "cuda" / "bindings"
    package.mkdir(parents=True)
    (package.parent / "__init__.py").write_text("")
    (package / "__init__.py").write_text(textwrap.dedent(STAND_IN))
    env = {**ENV, "PYTHONPATH": os.pathsep.join([str(package.parent.parent), ENV["PYTHONPATH"]])}
    env["TMPDIR"] = str(tmp_path)
    proc = subprocess.Popen(
        [*VERIFY, "--experiment", "ptx-jit", "--out", str(tmp_path / "out")],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    assert proc.stderr.readline() == "cuda.bindings: waiting for the driver\n"  # the condition
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, err) == (130, "make verify: interrupted\n"), out
    assert not list(tmp_path.glob("verify-cache-*")) and not (tmp_path / "out").exists()


def test_a_measurement_written_onto_a_full_disk_is_one_line_and_exit_5(full_disk: Path) -> None:
    """On a GPU node: the run measures, then cannot write its file."""
    pytest.importorskip("cuda.bindings")
    env = {**ENV, "VERIFY_NODE": "boundary-test"}
    run = subprocess.run(
        [*VERIFY, "--experiment", "device-limits", "--out", str(full_disk / "out")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if run.returncode == 3:
        pytest.skip("no GPU here: " + run.stderr.strip())
    assert run.returncode == 5 and "Traceback" not in run.stderr, run.stdout + run.stderr
    lines = run.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"make verify: cannot write {full_disk}/out/device-limits/"), lines
    assert FULL in lines[0], lines
