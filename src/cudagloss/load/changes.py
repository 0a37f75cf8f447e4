"""Which of two term files is the one being changed, for a mistake two files make together
(a name or alias both claim): the error belongs where the author is working, not in
whichever file sorts first.

In order: the file git sees as changed (modified, added, or untracked: any entry of `git
status --porcelain`); else, where git sees both unchanged and committed, the one whose last
commit is newer (a fresh checkout gives every file about the same mtime, in no useful order);
else (both changed, files git ignores, or git cannot tell) the one modified last, by its
mtime, if the two were not written within two seconds of each other (as a checkout, a copy or
an unpacked archive writes them). A tie is no answer, and the caller keeps its own order.

Git runs only when such a mistake is found, at most once per file for its history, with no
shell, a timeout and no optional locks, from the terms folder. Its output is read as bytes
with `-z`, since file names are hostile input (newlines, spaces, bytes that are not UTF-8),
and names are decoded as os.listdir decodes them. No git, no repository, a folder outside
the work tree, a failure or a timeout: git cannot tell, and mtimes decide.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

TIMEOUT_S = 10
SAME_WRITE_NS = 2 * 10**9
"""Files modified this close together were written together (a checkout, a copy, an unpacked
archive), in no order that says which one the author changed."""
_GIT = ("git", "--no-optional-locks", "-c", "core.fsmonitor=false", "-c", "core.quotepath=false")


def _git(folder: Path, *args: str) -> bytes | None:
    """git's output, run in folder; None when git cannot answer."""
    try:
        run = subprocess.run(
            [*_GIT, *args], cwd=folder, capture_output=True, check=False, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return run.stdout if run.returncode == 0 else None


def changed_names(folder: Path) -> set[str] | None:
    """The names of the files directly in folder that git sees as changed or untracked, or
    None when git cannot tell (not a work tree, no git, a timeout)."""
    prefix = _git(folder, "rev-parse", "--show-prefix")
    status = _git(folder, "status", "--porcelain=v1", "-z", "--no-renames", "--untracked-files=all", "--", ".")
    if prefix is None or status is None:
        return None
    base = prefix[:-1] if prefix.endswith(b"\n") else prefix
    names: set[str] = set()
    for record in status.split(b"\0"):
        path = record[3:]
        if len(record) > 3 and path.startswith(base) and b"/" not in path[len(base) :]:
            names.add(os.fsdecode(path[len(base) :]))
    return names


class Changes:
    """What git and the file system say of the files of one terms folder, asked when first needed."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._changed: set[str] | None = None
        self._asked = False
        self._committed: dict[str, int | None] = {}

    def changed(self) -> set[str] | None:
        if not self._asked:
            self._changed, self._asked = changed_names(self.folder), True
        return self._changed

    def being_changed(self, a: Path, b: Path) -> Path | None:
        """Of two files of the folder, the one being changed (the rules above), or None."""
        changed = self.changed()
        if changed is not None and (a.name in changed) != (b.name in changed):
            return a if a.name in changed else b
        if changed is not None and a.name not in changed:
            committed = self._last_commit(a), self._last_commit(b)
            if None not in committed:
                return _later(a, b, *committed)
        return _later(a, b, _mtime(a), _mtime(b), slack=SAME_WRITE_NS)

    def _last_commit(self, path: Path) -> int | None:
        """When the last commit that touched path was made (seconds since the epoch)."""
        if path.name not in self._committed:
            out = _git(self.folder, "log", "-1", "--format=%ct", "--", f":(literal){path.name}")
            self._committed[path.name] = int(out) if out and out.strip().isdigit() else None
        return self._committed[path.name]


def _mtime(path: Path) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except (OSError, ValueError):
        return None


def _later(a: Path, b: Path, when_a: int | None, when_b: int | None, *, slack: int = 0) -> Path | None:
    """The later of a and b by when, or None: unknown, or no more than slack apart."""
    if when_a is None or when_b is None or abs(when_a - when_b) <= slack:
        return None
    return a if when_a > when_b else b
