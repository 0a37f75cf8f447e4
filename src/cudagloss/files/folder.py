"""A whole folder written so that readers see the old one or the new one, never half.

`cudagloss render --out DIR` writes a tree of thousands of files. They go into a temporary
folder beside DIR (named like atomic.py's temporaries, so .gitignore and the stale-litter
sweep know it); only when every file is written is the old DIR renamed away and the new
one renamed into its place, with SIGINT/SIGTERM held for those two renames. An interrupted
or failed write removes its temporary folder and leaves DIR as it was.

A folder is replaced only when it is empty or carries the marker file an earlier write
left: a typo in --out must never delete someone's work.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterable
from pathlib import Path

from cudagloss.errors import UsageError, display_path
from cudagloss.files.atomic import WriteFailed, signals_held

MARKER = ".cudagloss-render"
"""The file that says a folder was written by this module and may be replaced."""
_MARKER_TEXT = "This folder is written by `cudagloss render`; it is replaced whole on every run.\n"


def _sibling(out: Path, kind: str) -> Path:
    return out.parent / f".{out.name}.cudagloss-{secrets.token_hex(6)}.{kind}.tmp"


def _replaceable(out: Path) -> None:
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
    fresh = _sibling(out, "new")
    old = _sibling(out, "old")
    written = 0
    try:
        fresh.mkdir()
        (fresh / MARKER).write_text(_MARKER_TEXT, encoding="utf-8")
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
        shutil.rmtree(fresh, ignore_errors=True)
        if old.exists() and out.exists():
            shutil.rmtree(old, ignore_errors=True)
        elif old.exists():  # the new folder could not take its place: the old one goes back
            os.rename(old, out)
    return written
