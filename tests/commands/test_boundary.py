"""The one error boundary (cudagloss.boundary), where a real `cudagloss` process meets a reader
that leaves, a full disk, a read-only file system and Ctrl-C: one line each, never a traceback,
and the exit status the boundary's table gives. `make verify`'s are in tests/verifier/test_boundary_verify.py."""

from __future__ import annotations

import errno
import fcntl
import os
import signal
import subprocess
import sys
import termios
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT
from cudagloss.boundary import classify
from cudagloss.errors import Diagnostic, ExitCode, GlossaryError, UsageError
from cudagloss.files.atomic import WriteFailed
from disks import small_tmpfs

CLI = [sys.executable, "-m", "cudagloss"]


def test_a_reader_leaving_while_the_report_prints_is_no_traceback() -> None:
    """`cudagloss check broken/ --format github | head -c1`: the annotations go to stdout;
    with the pipe already closed, printing them raises BrokenPipeError inside the boundary."""
    run = subprocess.Popen(
        [sys.executable, "-m", "cudagloss", "check", str(FIXTURES / "broken"), "--format", "github"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert run.stdout is not None and run.stderr is not None
    run.stdout.close()  # the reader is gone before a line is printed
    with run.stderr:
        err = run.stderr.read()
    assert run.wait(timeout=120) == 1, err  # the mistakes still fail the command
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("exc", "status", "line"),
    [
        (GlossaryError([Diagnostic("t.yaml", 1, 1, "bad")]), ExitCode.FAILED, ""),
        (UsageError("no folder x"), ExitCode.USAGE, "prog: no folder x"),
        (
            WriteFailed(errno.EISDIR, "not a regular file", "a/b"),
            ExitCode.WRITE,
            "prog: cannot write a/b: not a regular file",
        ),
        (
            OSError(errno.ENOSPC, "No space left on device", "f"),
            ExitCode.WRITE,
            "prog: cannot write f: No space left on device",
        ),
        (
            OSError(errno.EROFS, "Read-only file system", "f"),
            ExitCode.WRITE,
            "prog: cannot write f: Read-only file system",
        ),
        (KeyboardInterrupt(), ExitCode.INTERRUPTED, "prog: interrupted"),
        (BrokenPipeError(errno.EPIPE, "Broken pipe"), ExitCode.OK, ""),
    ],
    ids=["mistakes", "usage", "write-failed", "full-disk", "read-only", "ctrl-c", "reader-left"],
)
def test_each_failure_class_has_its_exit_status_and_one_line(exc: BaseException, status: int, line: str) -> None:
    failure = classify(exc, "prog")
    assert failure is not None and (failure.status, failure.line) == (status, line)


@pytest.mark.parametrize(
    "exc", [ValueError("a bug"), OSError(errno.EIO, "Input/output error", "f"), SystemExit(2)], ids=str
)
def test_a_bug_is_no_failure_of_the_users_and_keeps_its_traceback(exc: BaseException) -> None:
    assert classify(exc, "prog") is None


def test_output_to_a_full_device_is_one_line_and_exit_5() -> None:
    """`cudagloss values > /dev/full`: every write to standard output fails with ENOSPC."""
    with open("/dev/full", "w") as full:
        run = subprocess.run([*CLI, "values"], cwd=ROOT, stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert run.returncode == 5, run.stderr
    assert run.stderr == "cudagloss values: cannot write standard output: No space left on device\n"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A real 64 KiB tmpfs, filled to the last block (root only; CI runs as root)."""
    with small_tmpfs(tmp_path, folder="schema", full=True) as disk:
        yield disk


def test_a_full_disk_names_the_file_in_one_line_and_exits_5(small_disk: Path) -> None:
    run = subprocess.run(
        [*CLI, "schema", "--out", str(small_disk / "schema")], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 5, run.stderr
    assert run.stderr.splitlines() == [
        f"cudagloss schema: cannot write {small_disk}/schema/term.schema.json: "
        "No space left on device (free some space and run it again)"
    ]
    with open(small_disk / "values.txt", "w") as out:  # standard output redirected onto the full disk
        run = subprocess.run([*CLI, "values"], cwd=ROOT, stdout=out, stderr=subprocess.PIPE, text=True, timeout=120)
    assert run.returncode == 5
    assert run.stderr == "cudagloss values: cannot write standard output: No space left on device\n"


def interrupted_while_blocked_on_output(command: list[str], cwd: Path) -> tuple[int, str]:
    """Run command with its standard output a pipe of one page that nobody reads. Once the
    pipe holds anything, the command is inside its work (it has started printing) and cannot
    finish it (it prints far more than a page and its buffer): Ctrl-C it there (SIGINT), then
    read the rest. Returns the exit status and standard error."""
    read, write = os.pipe()
    fcntl.fcntl(write, fcntl.F_SETPIPE_SZ, 4096)
    proc = subprocess.Popen(command, cwd=cwd, stdout=write, stderr=subprocess.PIPE, text=True)
    os.close(write)
    deadline = time.monotonic() + 120
    held = bytearray(4)
    while not int.from_bytes(held, sys.byteorder):  # the condition, polled: the pipe holds output
        assert proc.poll() is None, "it ended before it printed"
        assert time.monotonic() < deadline, "it never printed"
        time.sleep(0.01)
        fcntl.ioctl(read, termios.FIONREAD, held)
    proc.send_signal(signal.SIGINT)
    with os.fdopen(read, "rb") as rest:
        rest.read()
    assert proc.stderr is not None
    with proc.stderr:
        err = proc.stderr.read()
    return proc.wait(timeout=60), err


def test_ctrl_c_is_one_line_and_exit_130() -> None:
    """`cudagloss values` prints about 90 KB; Ctrl-C while it waits for its reader."""
    status, err = interrupted_while_blocked_on_output([*CLI, "values"], ROOT)
    assert status == 130 and err == "cudagloss values: interrupted\n", err
