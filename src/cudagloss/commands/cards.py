"""`cudagloss cards [--write]`: the cards, runs and days behind the measurements, from the files
(cudagloss.site.cards_table); --write puts it into the measurements folder's README.md."""

from __future__ import annotations

import argparse

from cudagloss.errors import ExitCode
from cudagloss.files.atomic import write_text_atomic
from cudagloss.files.inside import refuse_links

README = "README.md"


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
    old = readme.read_text(encoding="utf-8") if readme.is_file() else "# Measurements\n"
    new = with_summary(old, summary)
    if new != old:
        write_text_atomic(readme, new)
    print(f"{readme}: {'written' if new != old else 'already up to date'}")
    return ExitCode.OK


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cards = sub.add_parser("cards", help="the cards, runs and days behind the measurements, from the files")
    cards.add_argument("--write", action="store_true", help="write it into the measurements folder's README.md")
    cards.add_argument("--measurements", help="the measurements folder (default: the project's, measurements/)")
    cards.set_defaults(run=run)
