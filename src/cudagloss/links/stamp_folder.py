"""Stamping a whole terms folder: what `cudagloss links` and `cudagloss byline` both run.

Git history is read once for the folder (history.py); then each term file is stamped in
turn by stamp.py, which owns the writing rules (compare-and-swap, comments, layout, mode
and line breaks kept). `links` passes the URLs it found reachable; `byline` passes none, so
only the byline fields that history (or the source stamps already in the file) can fill
change. A file that links out of the repository is never written.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from cudagloss.files.atomic import WriteFailed, remove_stale_temporaries
from cudagloss.files.inside import first_link
from cudagloss.links.history import FileHistory, HistoryUnavailable, read_history
from cudagloss.links.stamp import Found, stamp_file
from cudagloss.load.terms import term_files


def histories(terms: Path) -> tuple[dict[Path, FileHistory], str]:
    """Git history of the term files by resolved path, and '' or why there is none to
    trust (then bylines stay pending rather than wrong)."""
    try:
        top = Path(
            subprocess.run(
                ["git", "rev-parse", "--show-toplevel"],
                cwd=terms,
                capture_output=True,
                text=True,
                check=True,
                timeout=60,
            ).stdout.strip()
        )
        folder = terms.resolve().relative_to(top.resolve()).as_posix()
        return {(top / path).resolve(): h for path, h in read_history(top, folder).items()}, ""
    except HistoryUnavailable as exc:
        return {}, str(exc)
    except (OSError, subprocess.SubprocessError, ValueError):
        return {}, "the terms are not in a git repository"


@dataclass
class FolderStamps:
    """What stamping a folder did: the files changed, and the files git knows nothing of."""

    changed: list[str] = field(default_factory=list)
    uncommitted: list[str] = field(default_factory=list)
    write_failed: bool = False


def stamp_folder(
    terms: Path,
    reachable: Found,
    history: Mapping[Path, FileHistory],
    prog: str,
    done: FolderStamps,
) -> FolderStamps:
    """Stamp every term file of terms into done (given by the caller, so that what was
    stamped before a SIGTERM is still known). A write that fails stops the stamping (a full
    disk or a folder we may not write fails for every file), after one line saying why."""
    remove_stale_temporaries(terms)  # those of a run killed by SIGKILL
    for file in term_files(terms):
        if first_link(file, file.parent) is not None:  # refused when loaded; made a link since
            print(f"{file}: not stamped: it is a symbolic link, never written through", file=sys.stderr)
            continue
        found = history.get(file.resolve())
        if found is None:
            done.uncommitted.append(str(file))
        fill = (
            {"written_by": found.written_by, "written_on": found.written_on, "reviewed_by": found.reviewed_by}
            if found
            else None
        )
        try:
            outcome = stamp_file(file, reachable, fill)
        except WriteFailed as exc:
            print(f"{prog}: {exc}; stopped stamping after {len(done.changed)} files", file=sys.stderr)
            done.write_failed = True
            return done
        if outcome.changed:
            done.changed.append(str(file))
        if outcome.problem:
            print(f"{file}: not stamped: {outcome.problem}", file=sys.stderr)
    return done
