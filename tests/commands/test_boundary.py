"""The command line's one error boundary, where a real process meets a reader that leaves."""

from __future__ import annotations

import subprocess
import sys

from conftest import FIXTURES, ROOT


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
