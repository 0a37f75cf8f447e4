"""`cudagloss cards [--write]`: the cards, runs and days behind the measurements, from the files
(cudagloss.site.cards_table); --write puts it into the measurements folder's README.md."""

from __future__ import annotations

import argparse
import os
import stat
from pathlib import Path

from cudagloss.errors import Diagnostic, ExitCode, GlossaryError, display_path
from cudagloss.files.atomic import write_text_atomic
from cudagloss.files.inside import refuse_links

README = "README.md"
MAX_README_BYTES = 1024 * 1024
"""A README is prose and one table; more is not one we wrote, and is not read whole."""
HINT = "measurements/README.md is a plain UTF-8 text file (`cudagloss cards --write` writes its block)"


def read_readme(path: Path, shown: str) -> str | None:
    """The README's text, or None where there is none; GlossaryError for anything but a plain
    UTF-8 file of at most MAX_README_BYTES (a FIFO is never waited on, a link never followed)."""

    def refuse(message: str, line: int = 1, col: int = 1) -> GlossaryError:
        return GlossaryError([Diagnostic(shown, line, col, message, HINT)])

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise refuse(f"cannot read: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise refuse("is not a regular file")
        if info.st_size > MAX_README_BYTES:
            raise refuse(f"is larger than {MAX_README_BYTES:,} bytes, the limit for this README")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(MAX_README_BYTES + 1)
    except OSError as exc:
        raise refuse(f"cannot read: {exc.strerror}") from None
    finally:
        os.close(fd)
    if len(data) > MAX_README_BYTES:
        raise refuse(f"is larger than {MAX_README_BYTES:,} bytes, the limit for this README")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        start = data.rfind(b"\n", 0, exc.start) + 1
        col = len(data[start : exc.start].decode("utf-8", errors="replace")) + 1
        raise refuse(
            f"is not UTF-8: byte 0x{data[exc.start]:02X} here", data.count(b"\n", 0, exc.start) + 1, col
        ) from None


def run(args: argparse.Namespace) -> ExitCode:
    """Print the summary, or write it between the README's markers (atomically, never through a link)."""
    from cudagloss.load.measurements import project_measurements
    from cudagloss.site.cards_table import cards_markdown, with_summary

    project = args.project
    measurements = project_measurements(project, args.measurements)
    folder = measurements.folder
    summary = cards_markdown(measurements)
    if not args.write:
        print(summary, end="")
        return ExitCode.OK
    readme = folder / README
    refuse_links(readme, project.root)
    shown = display_path(readme, project.root)
    old = read_readme(readme, shown)
    if old is None:
        old = "# Measurements\n"
    new = with_summary(old, summary, shown)
    if new != old:
        write_text_atomic(readme, new)
    print(f"{readme}: {'written' if new != old else 'already up to date'}")
    return ExitCode.OK


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cards = sub.add_parser("cards", help="the cards, runs and days behind the measurements, from the files")
    cards.add_argument("--write", action="store_true", help="write it into the measurements folder's README.md")
    cards.add_argument("--measurements", help="the measurements folder (default: the project's, measurements/)")
    cards.set_defaults(run=run)
