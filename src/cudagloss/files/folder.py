"""A whole folder written so that readers see the old one or the new one, never half.

`cudagloss render --out DIR` writes a tree of thousands of files. They go into a temporary
folder beside DIR (named like atomic.py's temporaries, so .gitignore and the stale-litter
sweep know it); only when every file is written is the old DIR renamed away and the new
one renamed into its place, with SIGINT/SIGTERM held for those two renames. An interrupted
or failed write removes its temporary folder and leaves DIR as it was.

A folder is replaced only when it is empty or carries the marker file an earlier write
left: a typo in --out must never delete someone's work; and never through a symbolic link on
the way to it (files/inside.py: a committed `build` link would send the tree elsewhere). A
write holds a lock on its temporary folder's marker while it runs, so the next write removes
the temporary folders of one that was killed (SIGKILL, power loss) and leaves a live one's.
"""

from __future__ import annotations

import fcntl
import os
import re
import secrets
import shutil
import stat
from collections.abc import Iterable
from pathlib import Path

from cudagloss.errors import UsageError, display_path
from cudagloss.files.atomic import WriteFailed, signals_held
from cudagloss.files.inside import refuse_links

MARKER = ".cudagloss-render"
"""The file that says a folder was written by this module and may be replaced."""
_MARKER_TEXT = "This folder is written by `cudagloss render`; it is replaced whole on every run.\n"


def _sibling(out: Path, kind: str) -> Path:
    return out.parent / f".{out.name}.cudagloss-{secrets.token_hex(6)}.{kind}.tmp"


def _temporaries(out: Path) -> list[Path]:
    """The temporary folders of earlier writes of out, by name."""
    pattern = re.compile(rf"\.{re.escape(out.name)}\.cudagloss-[0-9a-f]{{12}}\.(new|old)\.tmp")
    try:
        return [out.parent / e.name for e in os.scandir(out.parent) if pattern.fullmatch(e.name)]
    except OSError:
        return []


def remove_stale_folders(out: Path) -> int:
    """Remove the temporary folders a killed write of out left (a real folder of ours whose
    marker no live write holds locked); returns how many."""
    removed = 0
    for folder in _temporaries(out):
        try:
            info = os.lstat(folder)
            if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
                continue
            fd = os.open(folder / MARKER, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError: a live write's
        except OSError:
            continue
        finally:
            os.close(fd)
        if folder.name.endswith(".old.tmp") and not out.exists() and not out.is_symlink():
            os.rename(folder, out)  # killed between its two renames: the last good folder comes back
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed += 1
    return removed


def _replaceable(out: Path) -> None:
    refuse_links(out)
    if not out.exists() and not out.is_symlink():
        return
    if out.is_symlink() or not out.is_dir():
        raise UsageError(f"{display_path(out)} exists and is not a folder: choose another --out")
    if any(out.iterdir()) and not (out / MARKER).is_file():
        raise UsageError(
            f"{display_path(out)} is a folder that `cudagloss render` did not write: choose another --out, or empty it"
        )


def _checked(relative: str) -> str:
    """A path inside the folder: relative, no '..', no empty or dot part."""
    parts = relative.split("/")
    if relative.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"not a path inside the folder: {relative!r}")
    return relative


def replace_folder(out: Path, files: Iterable[tuple[str, bytes]]) -> int:
    """Write files (relative POSIX path, bytes) as the whole content of out; returns how many."""
    _replaceable(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_folders(out)
    fresh = _sibling(out, "new")
    old = _sibling(out, "old")
    written = 0
    lock = -1
    try:
        fresh.mkdir()
        (fresh / MARKER).write_text(_MARKER_TEXT, encoding="utf-8")
        lock = os.open(fresh / MARKER, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        fcntl.flock(lock, fcntl.LOCK_EX)  # held until the end: this temporary folder is a live write's
        for relative, data in files:
            target = fresh / _checked(relative)
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "xb") as handle:  # a path given twice is a bug: never overwrite silently
                handle.write(data)
            written += 1
        with signals_held():
            if out.exists():
                os.rename(out, old)
            os.rename(fresh, out)
    except OSError as exc:
        if isinstance(exc, FileExistsError):
            raise
        raise WriteFailed(exc.errno or 0, exc.strerror or str(exc), str(exc.filename or out)) from None
    finally:
        if lock >= 0:
            os.close(lock)
        shutil.rmtree(fresh, ignore_errors=True)
        if old.exists() and out.exists():
            shutil.rmtree(old, ignore_errors=True)
        elif old.exists():  # the new folder could not take its place: the old one goes back
            os.rename(old, out)
    return written
