"""The one error boundary: how each of the glossary's programs ends when something goes wrong.

`cudagloss` (cudagloss.commands.main) and `make verify` (verifier/__main__.py and
verifier/devices.py) run their work through :func:`guarded`; the MkDocs adapter, where MkDocs
owns the process and its exit, sorts what it catches with the same :func:`classify`. What
the user can fix is said without a traceback; anything else is a bug and keeps its traceback.

    what happened                              what is shown                              exit status
    GlossaryError: mistakes in the input       every diagnostic (path:line:col: message,  1 FAILED, or 2 USAGE where the
                                               hint), then the count                      program cannot start from them
    UsageError: asked for what is not there    one line, `prog: message`                  2 USAGE
    a write that failed: WriteFailed, or an    one line, `prog: cannot write PATH:        5 WRITE
      OSError ENOSPC, EDQUOT, EACCES, EPERM,     reason` (standard output named so)
      EROFS (full disk, read-only file
      system, no permission)
    Ctrl-C (KeyboardInterrupt)                 one line, `prog: interrupted`              130 INTERRUPTED
    the reader of standard output left         nothing                                    what the work returned (0 if
      (BrokenPipeError: `... | head`)                                                     it was cut short)
    anything else                              the traceback (a bug)                      Python's own, 1

(argparse's own usage errors exit 2 before any work; `make verify` without a GPU is 3, a
link check without a network 4 and a SIGTERM'd one 143: ExitCode lists them all.) While the
work runs, a write to standard output that fails names it (an OSError from a stream names no
file), and standard output is flushed inside the boundary, so that a full disk or a departed
reader met by the last buffered line is classified too, never printed by Python at exit as
'Exception ignored'.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

from cudagloss.errors import ExitCode, GlossaryError, UsageError
from cudagloss.files.atomic import WriteFailed

NO_ROOM_OR_RIGHT = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.EROFS})
"""The errnos of an OSError that is a write the user can do something about."""
STDOUT = "standard output"


@dataclass(frozen=True)
class Failure:
    """What the user is told when work stops, and the exit status."""

    status: ExitCode
    line: str = ""
    """One line, `prog: message`; '' when there is nothing to say (a reader that left)."""
    mistakes: GlossaryError | None = None
    """The diagnostics, for a GlossaryError: the program shows them in its own form."""


def classify(exc: BaseException, prog: str) -> Failure | None:
    """What the user is told for exc, or None when exc is a bug (and must keep its traceback)."""
    if isinstance(exc, GlossaryError):
        return Failure(ExitCode.FAILED, mistakes=exc)
    if isinstance(exc, UsageError):
        return Failure(ExitCode.USAGE, f"{prog}: {exc}")
    if isinstance(exc, KeyboardInterrupt):
        return Failure(ExitCode.INTERRUPTED, f"{prog}: interrupted")
    if isinstance(exc, BrokenPipeError):
        return Failure(ExitCode.OK)
    if isinstance(exc, WriteFailed) or (isinstance(exc, OSError) and exc.errno in NO_ROOM_OR_RIGHT):
        return Failure(ExitCode.WRITE, f"{prog}: {_cannot_write(exc)}")
    return None


def guarded(
    prog: str,
    work: Callable[[], int],
    *,
    mistakes: ExitCode = ExitCode.FAILED,
    show: Callable[[GlossaryError], None] | None = None,
) -> int:
    """Run work and return its exit status, or the status of what stopped it (see the table
    above). mistakes: the status for a GlossaryError; show: how its diagnostics are printed
    (default: the report on stderr)."""
    status: int = ExitCode.OK
    stdout = sys.stdout
    sys.stdout = _Named(stdout)  # a TextIO in all but its class
    try:
        try:
            status = work()
        except GlossaryError as exc:
            status = mistakes
            (show or _report)(exc)
        sys.stdout.flush()  # the last buffered line meets a full disk or a departed reader here
        return status
    except BaseException as exc:  # SystemExit (argparse, sys.exit) is no Failure: it passes
        failure = classify(exc, prog)
        if failure is None:
            raise
        if isinstance(exc, BrokenPipeError):  # the reader left: not an error; what was found still counts
            quiet_stdout()
            return status
        print(failure.line, file=sys.stderr)
        return failure.status
    finally:
        if isinstance(sys.stdout, _Named):
            sys.stdout = stdout


class _Named:
    """Standard output while work runs: the same stream, but a write to it that fails (a full
    disk under `> file`) says it was standard output, as an OSError from a stream names no file."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as exc:
            raise _named(exc) from exc

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as exc:
            raise _named(exc) from exc

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _named(exc: OSError) -> OSError:
    if isinstance(exc, BrokenPipeError) or exc.filename is not None:
        return exc
    quiet_stdout()  # what it still buffers would fail again at exit
    return OSError(exc.errno, exc.strerror, STDOUT)


def _report(exc: GlossaryError) -> None:
    print(exc.report(), file=sys.stderr)


def _cannot_write(exc: OSError) -> str:
    if isinstance(exc, WriteFailed):
        return str(exc)
    where = f" {exc.filename}" if exc.filename is not None else ""
    return f"cannot write{where}: {exc.strerror}"


def quiet_stdout() -> None:
    """Point standard output at /dev/null, so that Python's flush at exit does not fail again
    (and print 'Exception ignored')."""
    try:
        fd = sys.stdout.fileno()
    except (OSError, ValueError):  # not a file (a test's capture): nothing to quiet
        return
    os.dup2(os.open(os.devnull, os.O_WRONLY), fd)
