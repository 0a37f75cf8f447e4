"""The command line, `cudagloss <verb>`, run inside the one error boundary.

Each verb is a module here (check, new, values, export, schema, links, byline, render,
serve) that adds its parser and returns an ExitCode; none prints a GlossaryError itself.
The boundary (cudagloss.boundary, the one `make verify` uses too) does: every diagnostic as
`path:line:col: message` with a hint (or, for `check --format github`, as annotations), and
ExitCode.FAILED (USAGE for `links` and `byline`, which cannot start from terms with
mistakes). A file that cannot be written (disk full, no permission, read-only file system)
is one line and ExitCode.WRITE; Ctrl-C is one line and ExitCode.INTERRUPTED; a reader that
left the pipe (`cudagloss values | head`) is no error. Nothing else is caught: a traceback
means a bug, never a user's mistake.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from cudagloss.boundary import guarded
from cudagloss.commands import byline, cards, check, collect, export, links, new, render, schema, serve, values
from cudagloss.errors import ExitCode, GlossaryError
from cudagloss.load.project import load_project
from cudagloss.model.project import CONFIG

CANNOT_START_FROM_MISTAKES = ("byline",)
"""Verbs that write into the terms, so terms with mistakes are input they cannot start
from: ExitCode.USAGE, as for `links`."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cudagloss", description="Tools for the CUDA glossary.")
    sub = parser.add_subparsers(dest="command", required=True)
    verbs = (check, new, values, export, schema, byline, render, serve, collect, cards)
    for verb in verbs:
        verb.add_parser(sub)
    # listed for `cudagloss -h` only: main hands everything after "links" to its own parser
    sub.add_parser("links", help=links.HELP, add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["links"]:  # links parses the rest itself: `links -h`, options before the folder
        return guarded("cudagloss links", lambda: links.main(argv[1:], load_project()), mistakes=ExitCode.USAGE)
    args = build_parser().parse_args(argv)
    form = getattr(args, "format", "text")

    def show(exc: GlossaryError) -> None:
        check.print_diagnostics(exc.diagnostics, form)

    mistakes = ExitCode.USAGE if args.command in CANNOT_START_FROM_MISTAKES else ExitCode.FAILED
    return guarded(f"cudagloss {args.command}", lambda: args.run(_with_project(args)), mistakes=mistakes, show=show)


def _with_project(args: argparse.Namespace) -> argparse.Namespace:
    """args with the project every verb is handed, read once from mkdocs.yml (`--config` where
    the verb takes one), inside the boundary: a mistake in it is one line."""
    args.project = load_project(Path(getattr(args, "config", None) or CONFIG))
    return args


if __name__ == "__main__":
    sys.exit(main())
