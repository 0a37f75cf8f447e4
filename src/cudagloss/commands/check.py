"""`cudagloss check terms/`: every mistake in the terms, and the measurements they cite.

It reads the terms with the measurements they cite (measurements/ beside the terms folder)
and the verifier's catalog (verifier/ in the working directory), as the site does.
Mistakes are raised, for the command line's one boundary to report; `--format github`
prints them as annotations on the pull request instead of `path:line:col: message`.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from cudagloss.errors import Diagnostic, ExitCode, GlossaryError, count, display_path, report


def _escape(text: str, *, prop: bool = False) -> str:
    """GitHub's workflow-command escaping (properties also escape ':' and ',')."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def github_annotation(d: Diagnostic) -> str:
    """One diagnostic as a GitHub Actions annotation, shown on the line of the pull request."""
    kind = "warning" if d.warning else "error"
    where = f"file={_escape(d.path, prop=True)},line={d.line},col={d.col}"
    message = f"{d.message}\nhint: {d.hint}" if d.hint else d.message
    return f"::{kind} {where},title=cudagloss check::{_escape(message)}"


def print_diagnostics(diagnostics: list[Diagnostic], form: str) -> None:
    """The report on stderr; in the github form, annotations on stdout and the count on stderr."""
    if form == "github":
        for d in sorted(diagnostics):
            print(github_annotation(d))
        print(count(diagnostics), file=sys.stderr)
    else:
        print(report(diagnostics), file=sys.stderr)


def run(args: argparse.Namespace) -> ExitCode:
    from cudagloss.load.glossary import check_glossary  # the whole check stage, for this verb only

    project = args.project.for_terms(Path(args.terms)) if args.terms else args.project
    if args.measurements or args.no_measurements:
        project = project.with_measurements(None if args.no_measurements else Path(args.measurements))
    report = check_glossary(project, cache=not args.no_cache)
    if report.warnings:
        if args.strict:
            raise GlossaryError(report.warnings)
        print_diagnostics(report.warnings, args.format)
    if not args.quiet:
        shown = args.terms or display_path(project.terms_dir)
        print(f"{shown}: {report.terms} terms in {report.sections} sections, no errors")
        if report.summarised_before:
            print(summarised_before(report.summarised_before))
    return ExitCode.OK


def summarised_before(paths: list[str]) -> str:
    """One line for the files an older summary made that kept no raw samples: by card, so the
    next GPU runs can be planned (they are not mistakes, and fail no check)."""
    nodes = sorted({Path(p).name.removesuffix(".json").split("~")[0] for p in paths})
    return (
        f"note: {len(paths)} measurement file(s) of {len(nodes)} card(s) ({', '.join(nodes)}) were summarised by "
        "older code and kept no raw samples to derive again; each card's next `make verify` summarises them anew"
    )


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    check = sub.add_parser("check", help="check every term file of a folder and report all mistakes")
    check.add_argument("terms", nargs="?", help="the terms folder (default: the project's, terms/)")
    check.add_argument("-q", "--quiet", action="store_true", help="print nothing when there is no error")
    check.add_argument(
        "--measurements", help="the measurements folder the terms cite (default: the project's, measurements/)"
    )
    check.add_argument("--no-measurements", action="store_true", help="check the terms without their measurements")
    check.add_argument(
        "--no-cache",
        action="store_true",
        help="check every file again, ignoring the per-user check cache (CUDAGLOSS_CACHE=off does the same)",
    )
    check.add_argument("--strict", action="store_true", help="fail on warnings too (e.g. stale measurements)")
    check.add_argument(
        "--format",
        choices=("text", "github"),
        default="github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text",
        help="text (path:line:col: message) or github (annotations on the pull request; "
        "the default inside GitHub Actions)",
    )
    check.set_defaults(run=run)
