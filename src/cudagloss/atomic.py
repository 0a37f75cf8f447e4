"""Atomic file writes: a temporary file in the same folder, then a rename (or a link)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def _via_temporary(path: Path, text: str, publish: Callable[[str, Path], None]) -> None:
    """Write text to a fsynced temporary file beside path, then publish it there."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        publish(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


def write_text_atomic(path: Path, text: str) -> None:
    """Replace path with text so that readers see the old file or the new one, never half."""
    _via_temporary(path, text, os.replace)


def create_text_exclusive(path: Path, text: str) -> None:
    """Create path whole or not at all, never over an existing file (FileExistsError):
    a hard link of the finished temporary file fails if the name is taken, even by a race."""
    _via_temporary(path, text, os.link)
