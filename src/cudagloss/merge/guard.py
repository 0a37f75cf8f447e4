"""A merge never reads, writes or removes through a symbolic link (issue 39).

The committed measurements folder and the node folders are input a pull request or an artifact
can shape: a link there (a measurement file, an experiment folder, the folder itself) would make
collect read, replace or delete files anywhere it points. Every such link is refused, one line
each, before any folder is listed or any file read (links_in); and the undo of a failed merge
puts back only the files this run changed, never through a link (Undo).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cudagloss.errors import Diagnostic
from cudagloss.files.atomic import write_text_atomic
from cudagloss.files.inside import HINT, first_link

WHY = "is a symbolic link: collect reads and writes the measurement folders, never through a link"


def link_line(shown: str) -> Diagnostic:
    """The one line for a link a merge would read or write through."""
    return Diagnostic(shown, 1, 1, WHY, HINT)


def links_in(folder: Path, root: Path | None) -> list[Diagnostic]:
    """Each link at folder or above it (from root down), else each link in folder, in its
    experiment folders and among their files (two levels: <experiment>/<node>.json). Nothing
    is followed; a folder is listed only once it is known not to be reached through a link."""
    if (shown := first_link(folder, root)) is not None:
        return [link_line(shown)]
    if not folder.is_dir():
        return []
    found: list[Diagnostic] = []
    with contextlib.suppress(OSError):
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            if entry.is_symlink():
                found.append(link_line(_shown(entry.path, root)))
            elif entry.is_dir(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    found += [
                        link_line(_shown(inner.path, root))
                        for inner in sorted(os.scandir(entry.path), key=lambda e: e.name)
                        if inner.is_symlink()
                    ]
    return found


def merge_links(folders: Sequence[Path], into: Path, root: Path | None) -> list[Diagnostic]:
    """Every link a merge of folders into `into` could read or write through: one line each."""
    return [d for folder in [into, *folders] for d in links_in(folder, root)]


@dataclass
class Undo:
    """The files a merge may write or remove, as they were before it (text and status, None
    when absent), so that a failed merge restores exactly what it changed."""

    before: dict[Path, tuple[str | None, tuple[int, int, int] | None]] = field(default_factory=dict)

    def remember(self, path: Path) -> None:
        """Note path as it is now; a link (at any component) is never read."""
        if path in self.before or first_link(path) is not None:
            return
        st = _status(path)
        text = path.read_text(encoding="utf-8") if st is not None and path.is_file() else None
        self.before[path] = (text, st)

    def restore(self) -> None:
        """Put back each remembered file that changed since; never through a link, never one
        this run did not change (its status is as it was)."""
        for path, (text, st) in self.before.items():
            if first_link(path) is not None or _status(path) == st:
                continue
            with contextlib.suppress(OSError):
                if text is not None:
                    write_text_atomic(path, text)
                elif st is None:  # made by this run (a folder or a FIFO that was there is left alone)
                    path.unlink(missing_ok=True)

    def created(self, path: Path) -> None:
        """Note path, not remembered before the merge, as one this run made (an earlier run it kept)."""
        self.before.setdefault(path, (None, None))


def _shown(path: str, root: Path | None) -> str:
    """A link as a diagnostic shows it, never resolved (display_path would follow it)."""
    return first_link(Path(path), root) or path


def _status(path: Path) -> tuple[int, int, int] | None:
    """The identity of path itself (inode, size, mtime; a link not followed), None when absent."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns
