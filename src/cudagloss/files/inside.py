"""Where we may read and write: never through a symbolic link inside the repository.

A pull request can commit a link where a command writes (`site`, `build`, `export/llms-full.txt`,
a measurement file): writing through it would replace or delete files anywhere the link points.
Every path a command writes, replaces or empties is checked here first, component by component
from the repository root (the working folder) down, without following links; the first link
found is refused with one line before anything is touched. A path the user names outside the
repository is theirs: only its last component is checked (a link there would be replaced).

Reads follow the same rule (first_link): a folder that an input names (the terms folder, the
diagrams under it, templates, the measurements) is refused when it, or a folder above it up to the
repository root, is a link, with one diagnostic and nothing read; so is a file read from it (a
term, a template), and any link below a folder copied whole (docs, the theme's custom_dir:
first_link_in).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from cudagloss.errors import Diagnostic, GlossaryError, UsageError

HINT = "a pull request may have committed it: remove the link (git rm) and run again"
LINKED = "is a symbolic link"
"""How every read refusal's message begins (the preview stops at one, where other mistakes are shown)."""
READ_HINT = "a pull request may have committed it: remove the link (git rm), keep the files in the repository"


def first_link(path: Path, root: Path | None = None) -> str | None:
    """The first component of path, from root (default: the working folder) down, that is a
    symbolic link, as a diagnostic shows it (the path alone when it is outside root); None when
    there is none. Nothing is followed or opened. The one rule for reads and writes alike.

    The components are walked as the system walks them: a `..` is taken only after the
    component before it was looked at, never collapsed as text first (os.path.abspath would turn
    `lnk/../terms` into `terms`, while the system follows `lnk` and then goes up from where
    it leads)."""
    top = Path(os.path.abspath(root if root is not None else Path.cwd()))
    start = Path(path) if Path(path).is_absolute() else Path.cwd() / path
    here, steps = Path(start.anchor or "/"), []
    for part in start.parts[1:]:
        if part in ("", "."):
            continue
        here = here.parent if part == ".." else here / part
        if part != "..":
            steps.append(here)
    inside = [step for step in steps if step != top and step.is_relative_to(top)]
    if not here.is_relative_to(top):
        inside = [step for step in inside if step.is_symlink()][:1]  # a link on the way in still counts
        if not inside:
            return _shown(here.as_posix()) if here.is_symlink() else None
    found = next((step for step in inside if step.is_symlink()), None)
    return None if found is None else _shown(found.relative_to(top).as_posix())


def _shown(text: str) -> str:
    return text if text.isascii() and text.isprintable() else ascii(text)[1:-1]


def first_link_in(folder: Path, root: Path | None = None) -> str | None:
    """first_link of folder, else the first symbolic link anywhere below it (in sorted order, as
    first_link shows it): for a folder whose every file is read or copied (docs, a theme's
    custom_dir). Links are never followed; a missing folder has none."""
    if (shown := first_link(folder, root)) is not None:
        return shown
    pending = [Path(folder)]
    while pending:  # os.walk would stat each link it meets, following it, to tell a folder
        try:
            entries = sorted(os.scandir(pending.pop()), key=lambda e: e.name, reverse=True)
        except OSError:
            continue  # missing or not a folder: nothing below it
        if (found := next((e for e in reversed(entries) if e.is_symlink()), None)) is not None:
            return first_link(Path(found.path), root)
        pending += [Path(e.path) for e in entries if e.is_dir(follow_symlinks=False)]
    return None


def entries_below(folder: Path) -> Iterator[os.DirEntry[str]]:
    """Every entry below folder (none for a missing folder), found without following a link:
    os.walk and Path.rglob stat each link they meet to tell whether it is a folder."""
    pending = [Path(folder)]
    while pending:
        try:
            entries = list(os.scandir(pending.pop()))
        except OSError:
            continue
        yield from entries
        pending += [Path(e.path) for e in entries if e.is_dir(follow_symlinks=False)]


def refuse_links(path: Path, root: Path | None = None) -> None:
    """UsageError if path, or a folder on the way to it at or below root (default: the working
    folder), is a symbolic link; nothing is created or followed. The link's own target is not
    shown: it is text from the repository, and could be anything."""
    if (shown := first_link(path, root)) is not None:
        raise UsageError(f"{shown} is a symbolic link: refusing to write through it; {HINT}")


def read_link_mistake(path: Path, root: Path | None = None, what: str = "it") -> Diagnostic | None:
    """Why path may not be read: a component of it from root (default: the working folder) down
    is a symbolic link, whose files would be read, and published, from anywhere. what names the
    file or folder in the message ("the terms folder"). None when path may be read."""
    shown = first_link(path, root)
    return None if shown is None else link_diagnostic(shown, what)


def link_diagnostic(shown: str, what: str) -> Diagnostic:
    """The one line for a link met on the way to a read, at shown (as first_link shows it, or a
    file's name as its reader shows it, where its folders were judged before)."""
    return Diagnostic(shown, 1, 1, f"is a symbolic link; {what} and the folders above it are plain folders", READ_HINT)


def refuse_read_links(path: Path, root: Path | None = None, what: str = "it") -> None:
    """GlossaryError (one diagnostic, read_link_mistake) when path may not be read."""
    if (mistake := read_link_mistake(path, root, what)) is not None:
        raise GlossaryError([mistake])


def read_links_in(folder: Path, root: Path | None = None, what: str = "its files") -> list[Diagnostic]:
    """One diagnostic for each symbolic link directly in folder (a term file, _sections.yaml),
    found by lstat alone: nothing is followed or resolved, so that a command refuses it before
    its loader looks at where it leads. folder itself is checked first (read_link_mistake)."""
    if (mistake := read_link_mistake(folder, root)) is not None:
        return [mistake]
    try:
        names = sorted(entry.name for entry in os.scandir(folder) if entry.is_symlink())
    except OSError:
        return []  # not a folder: the loader says so
    why = f"is a symbolic link; {what} are plain files"
    return [Diagnostic(first_link(folder / name, root) or name, 1, 1, why, READ_HINT) for name in names]
