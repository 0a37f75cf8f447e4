"""`cudagloss links [terms/]`: check every source URL of the terms and stamp them.

It parses its own arguments (options may come before the folder, and `links -h` shows its
own help); the run itself is cudagloss.links.run. SIGTERM (a CI timeout, `docker stop`)
stops it like Ctrl-C but stamps nothing more, and exits with ExitCode.TERMINATED.
"""

from __future__ import annotations

import argparse
import math
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from cudagloss.errors import ExitCode
from cudagloss.model.project import Project

HELP = "check every source URL and stamp the terms (see `links -h`)"


def main(argv: Sequence[str], project: Project) -> ExitCode:
    """Parse argv (what follows `links`) and run on the project's terms (or the folder named);
    GlossaryError, for terms that cannot be read, is left to the command line's boundary."""
    from cudagloss.links.run import run  # the HTTP client only for this verb

    args = build_parser().parse_args(argv)
    with sigterm_stops() as terminated:
        try:
            return run(
                project.for_terms(Path(args.terms)) if args.terms else project,
                max_age=args.max_age,
                force=args.force,
                form=args.format,
                stamp=not args.no_stamp,
                timeout=args.timeout,
                terminated=terminated,
                report_file=_report_file(args.report),
                archive_api=None if args.no_archive else args.archive_api,
            )
        except KeyboardInterrupt:
            if not terminated:
                raise
            print("cudagloss links: terminated", file=sys.stderr)
            return ExitCode.TERMINATED


def _report_file(name: str | None) -> Path | None:
    """The --report file, refused before anything is checked where a committed link leads there."""
    if name is None:
        return None
    from cudagloss.files.inside import refuse_links

    refuse_links(Path(name))
    return Path(name)


def _api(text: str) -> str:
    """The archive's availability API: an http(s) address a source could have, no query of its own."""
    from cudagloss.model.addresses import url_host_problem
    from cudagloss.model.urls import url_problem

    problem = url_problem(text) or url_host_problem(text)
    if problem is None and ("?" in text or "#" in text):
        problem = "the archive's address takes no query or fragment (the URL and day are added)"
    if problem is not None:
        raise argparse.ArgumentTypeError(f"{text!r}: {problem}")
    return text


def _seconds(text: str) -> float:
    """A timeout: a finite number of seconds over 0 (nan, inf or -1 would never end or never start)."""
    value = _number(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds over 0")
    return value


def _days(text: str) -> float:
    value = _number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of days (0 or more)")
    return value


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def build_parser() -> argparse.ArgumentParser:
    from cudagloss.links.archive import DEFAULT_API
    from cudagloss.links.checker import CheckerOptions
    from cudagloss.links.report import FORMATS

    timeout = CheckerOptions.total_timeout
    parser = argparse.ArgumentParser(prog="cudagloss links", description="Check every source URL and stamp the terms.")
    parser.add_argument("terms", nargs="?", help="the terms folder (default: the project's, terms/)")
    parser.add_argument("--max-age", type=_days, default=3.0, help="skip URLs found reachable this many days ago")
    parser.add_argument("--force", action="store_true", help="check every URL, however recently checked")
    parser.add_argument("--format", choices=tuple(FORMATS), default="text")
    parser.add_argument("--no-stamp", action="store_true", help="report only; change no file")
    parser.add_argument(
        "--report",
        metavar="FILE",
        help="also write the JSON report to FILE (for `cudagloss render --link-report`)",
    )
    parser.add_argument(
        "--archive-api",
        type=_api,
        default=DEFAULT_API,
        metavar="URL",
        help=f"the archive asked for a copy of each source found reachable that has none (default: {DEFAULT_API})",
    )
    parser.add_argument("--no-archive", action="store_true", help="ask no archive for copies")
    parser.add_argument(
        "--timeout",
        type=_seconds,
        default=timeout,
        help=f"seconds per URL (default: {timeout:g}); whether there is a network at all is decided apart from it",
    )
    return parser


@contextmanager
def sigterm_stops() -> Iterator[list[int]]:
    """SIGTERM stops the run like Ctrl-C, but stamps nothing more: its handler raises
    KeyboardInterrupt, which never splits a file write (the writer holds signals until its
    temporary is gone). The list is non-empty once it came."""
    came: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield came
        return

    def stop(signum: int, _frame: object) -> None:
        came.append(signum)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield came
    finally:
        signal.signal(signal.SIGTERM, previous)
