"""The command line, `cudagloss <verb>`, and its one error boundary.

Each verb is a module here (check, new, values, export, schema, links, byline, render,
serve) that adds its parser and returns an ExitCode; none prints a GlossaryError itself.
The boundary below does: every diagnostic as `path:line:col: message` with a hint (or, for
`check --format github`, as annotations), and ExitCode.FAILED (USAGE for `links` and
`byline`, which cannot start from terms with mistakes). A file that cannot be written (disk
full, no permission, read-only file system) is one line and ExitCode.WRITE; Ctrl-C is
ExitCode.INTERRUPTED; a reader that left the pipe (`cudagloss values | head`) is no error.
Nothing else is caught: a traceback means a bug, never a user's mistake.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from cudagloss.commands import byline, check, collect, export, links, new, render, schema, serve, values
from cudagloss.errors import ExitCode, GlossaryError, UsageError, complain
from cudagloss.files.atomic import WriteFailed
from cudagloss.load.project import load_project
from cudagloss.model.project import CONFIG

_NO_ROOM_OR_RIGHT = (errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.EROFS)
CANNOT_START_FROM_MISTAKES = ("byline",)
"""Verbs that write into the terms, so terms with mistakes are input they cannot start
from: ExitCode.USAGE, as for `links`."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cudagloss", description="Tools for the CUDA glossary.")
    sub = parser.add_subparsers(dest="command", required=True)
    verbs = (check, new, values, export, schema, byline, render, serve, collect)
    for verb in verbs:
        verb.add_parser(sub)
    # listed for `cudagloss -h` only: main hands everything after "links" to its own parser
    sub.add_parser("links", help=links.HELP, add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["links"]:  # links parses the rest itself: `links -h`, options before the folder
        return _boundary("links", lambda: links.main(argv[1:]), unusable=ExitCode.USAGE)
    args = build_parser().parse_args(argv)
    unusable = ExitCode.USAGE if args.command in CANNOT_START_FROM_MISTAKES else ExitCode.FAILED
    return _boundary(
        args.command, lambda: args.run(_with_project(args)), unusable=unusable, form=getattr(args, "format", "text")
    )


def _with_project(args: argparse.Namespace) -> argparse.Namespace:
    """args with the project every verb is handed, read once from mkdocs.yml (`--config` where
    the verb takes one), inside the boundary: a mistake in it is one line."""
    args.project = load_project(Path(getattr(args, "config", None) or CONFIG))
    return args


def _boundary(
    command: str, verb: Callable[[], ExitCode], *, unusable: ExitCode = ExitCode.FAILED, form: str = "text"
) -> ExitCode:
    """Run verb, turning what the user can fix into a report and an exit status."""
    try:
        try:
            return verb()
        except GlossaryError as exc:
            check.print_diagnostics(exc.diagnostics, form)
            return unusable
        except UsageError as exc:  # a folder that is not there, an option that cannot be used
            complain(f"cudagloss {command}", str(exc))
            return ExitCode.USAGE
        except BrokenPipeError:  # `cudagloss values | head`: the reader left, which is not an error
            _quiet_stdout()
            return ExitCode.OK
    except BrokenPipeError:  # the reader left while the report printed: the mistakes still count
        _quiet_stdout()
        return unusable
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except OSError as exc:  # `export` or `schema` on a full disk: one line, never a traceback
        if not isinstance(exc, WriteFailed) and exc.errno not in _NO_ROOM_OR_RIGHT:
            raise
        shown = exc if isinstance(exc, WriteFailed) else f"cannot write {exc.filename}: {exc.strerror}"
        complain(f"cudagloss {command}", str(shown))
        return ExitCode.WRITE


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so that Python's flush at exit does not fail again."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


if __name__ == "__main__":
    sys.exit(main())
