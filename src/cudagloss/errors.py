"""What the user can fix, and how every command says so.

Every stage collects :class:`Diagnostic` (path, line, col, message, hint) instead of
raising on the first problem, so that an author fixes every mistake in one pass.
:class:`GlossaryError` is the one exception for what the user can fix; anything else
escaping is a bug and may show a traceback. It is printed in one place, the error boundary
that `cudagloss` and `make verify` run in (cudagloss.boundary, whose classification the
MkDocs adapter uses too). :func:`report`
formats diagnostics for every command (the CLI, `links`, the verifier, the MkDocs adapter),
:class:`ExitCode` is the one list of exit statuses, and :func:`shown` makes untrusted text
safe to print.

    Exception
    ├── UsageError               a command asked for what does not exist: one line
    └── GlossaryError            diagnostics: every mistake found, sorted
        └── MeasurementError     one measurement file's problems, in file order (cudagloss.model.measurement)
    OSError
    └── WriteFailed              a file that could not be written (cudagloss.files.atomic)

A mistake inside one field's text (AuthorTextError, CitationError) carries its position
within that text; the check stage turns it into a Diagnostic at its place in the file.
"""

from __future__ import annotations

import difflib
import enum
import functools
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path


class ExitCode(enum.IntEnum):
    """Every exit status of every command, in one place."""

    OK = 0
    FAILED = 1
    """Mistakes in the input, a broken or invalid link, an experiment that failed its gates."""
    USAGE = 2
    """A command used wrongly, or input the command cannot start from (`links` on terms it cannot read)."""
    NO_GPU = 3
    """`make verify` on a machine without a usable CUDA GPU."""
    OFFLINE = 4
    """`links` with no network at all: nothing was stamped."""
    WRITE = 5
    """A file could not be written (disk full, no permission, read-only file system)."""
    INTERRUPTED = 130
    """Ctrl-C."""
    TERMINATED = 143
    """SIGTERM."""


class UsageError(Exception):
    """A command asked for something that does not exist (an experiment id, a folder): one
    line through complain() and ExitCode.USAGE, as the command's boundary reports it."""


def complain(prog: str, message: str) -> None:
    """One line on stderr, `prog: message`: how every command states a problem that has no
    file position (a usage mistake, a file it cannot write)."""
    print(f"{prog}: {message}", file=sys.stderr)


@dataclass(frozen=True, order=True)
class Diagnostic:
    """One mistake: `path:line:col: message`, then an indented hint line."""

    path: str
    line: int
    col: int
    message: str
    hint: str = ""
    warning: bool = False
    """A warning (e.g. a stale measurement) is reported but only fails a strict run."""

    def format(self) -> str:
        head = f"{self.path}:{self.line}:{self.col}: {'warning: ' if self.warning else ''}{self.message}"
        return f"{head}\n    hint: {self.hint}" if self.hint else head


class GlossaryError(Exception):
    """Raised with every diagnostic found when input cannot be used as it is."""

    def __init__(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics = sorted(diagnostics)
        super().__init__(self.report())

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if not d.warning]

    def report(self) -> str:
        """All diagnostics, then a count line."""
        return report(self.diagnostics)


def count(diagnostics: Iterable[Diagnostic]) -> str:
    """'3 errors found', '1 error and 2 warnings found', '1 warning found'."""
    found = list(diagnostics)
    errors = sum(not d.warning for d in found)
    warnings = len(found) - errors
    parts = []
    if errors or not warnings:
        parts.append(f"{errors} error{'s' if errors != 1 else ''}")
    if warnings:
        parts.append(f"{warnings} warning{'s' if warnings != 1 else ''}")
    return " and ".join(parts) + " found"


def report(diagnostics: Iterable[Diagnostic]) -> str:
    """Every diagnostic, sorted, then the count line."""
    found = sorted(diagnostics)
    return "\n".join([*(d.format() for d in found), count(found)])


def display_path(path: Path, root: Path | None = None) -> str:
    """A path as the author would type it: relative to root (or the cwd) when inside it."""
    base = root if root is not None else Path.cwd()
    try:
        return _resolved(path, _cwd_for(path)).relative_to(_resolved(base, _cwd_for(base))).as_posix()
    except ValueError:
        return path.as_posix()


def _cwd_for(path: Path) -> str:
    return "" if path.is_absolute() else os.getcwd()


@functools.lru_cache(maxsize=1 << 16)
def _resolved(path: Path, cwd: str) -> Path:
    """Path.resolve, remembered (per working directory, for a relative path): a 1,000-term
    build asks for the same few thousand paths on every rebuild, and each answer costs a
    stat per path component."""
    return path.resolve()


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """' (did you mean 'x'?)' for the closest candidate, or '' when none is close."""
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def shown(text: str, limit: int = 200) -> str:
    """text as it may appear in a report: controls, bidi overrides and other invisibles
    escaped (a server's bytes must not drive the terminal), and at most `limit` characters."""
    out = "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text[: limit + 1])
    return out if len(out) <= limit else out[: limit - 1] + "…"
