"""`cudagloss byline [terms/]`: fill the pending byline fields from git history alone.

No network and no link check: written by and written on come from the commit that added
each file, reviewed by from a `Reviewed-by:` trailer (links/history.py), and last checked on
from the source stamps already in the file. The writes are the link checker's own
(links/stamp_folder.py, stamp.py): a field set by hand is kept, comments, layout, mode and
line breaks stay, and an edit saved meanwhile is never overwritten.

Exit statuses as `links` has them: OK; USAGE for terms with mistakes (raised to the
boundary) or no history to trust (not a git repository, a shallow clone); WRITE when a file
could not be written; INTERRUPTED or TERMINATED between two files, each written whole.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cudagloss.errors import ExitCode, UsageError, display_path
from cudagloss.model.term import PENDING

PROG = "cudagloss byline"


def run(args: argparse.Namespace) -> ExitCode:
    from cudagloss.commands.links import sigterm_stops
    from cudagloss.links.stamp_folder import FolderStamps, histories, stamp_folder
    from cudagloss.load.glossary import load_glossary

    project = args.project.for_terms(Path(args.terms)) if args.terms else args.project
    terms = project.terms_dir
    corpus = load_glossary(project)  # raises on mistakes
    history, why_not = histories(terms)
    if why_not:
        raise UsageError(f"bylines left pending: {why_not}")
    pending = {str(t.file) for t in corpus if PENDING in (t.term.byline.written_by, t.term.byline.written_on)}
    done = FolderStamps()
    with sigterm_stops() as terminated:
        try:
            stamp_folder(terms, {}, history, PROG, done)
        except KeyboardInterrupt:
            if not terminated:
                raise
            print(f"{PROG}: terminated; stopped after filling {len(done.changed)} files", file=sys.stderr)
            return ExitCode.TERMINATED
    for file in done.changed:
        print(f"filled {display_path(Path(file))}")
    waiting = sorted(f for f in done.uncommitted if f in pending)
    if waiting:
        shown = ", ".join(display_path(Path(f)) for f in waiting[:5]) + (", ..." if len(waiting) > 5 else "")
        print(f"{len(waiting)} term file(s) not committed yet, so left pending: {shown}; commit, then run it again")
    if not done.changed and not waiting:
        print(f"{display_path(terms)}: nothing more to fill from git history")
    return ExitCode.WRITE if done.write_failed else ExitCode.OK


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    byline = sub.add_parser(
        "byline",
        help="fill pending byline fields from git history (offline; no link is checked)",
        description="Fill the pending byline fields of every term from git history alone: written by and "
        "written on from the commit that added the file, reviewed by from a Reviewed-by: trailer. "
        "A value set by hand is kept.",
    )
    byline.add_argument("terms", nargs="?", help="the terms folder (default: the project's, terms/)")
    byline.set_defaults(run=run)
