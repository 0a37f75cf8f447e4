"""The driver's JIT cache folder on disk: listing it, and keeping the user's own out of reach.

Experiments point CUDA_CACHE_PATH at fresh folders of their own. The runner also points it
at a private folder for everything else it runs (NVRTC, cuInit in the parent), so that no
step of `make verify` reads or writes the cache of the user who runs it.
"""

from __future__ import annotations

import os
from pathlib import Path

VERSION = 1
"""Bump when what this module sends to the GPU, or how it times it, changes (CONTRIBUTING.md)."""

INDEX = "index"


def listing(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file and folder under folder: relative name -> (size, modification time in ns)."""
    if not folder.exists():
        return {}
    out = {}
    for path in sorted(folder.rglob("*")):
        stat = path.stat()
        name = str(path.relative_to(folder)) + ("/" if path.is_dir() else "")
        out[name] = (stat.st_size if path.is_file() else 0, stat.st_mtime_ns)
    return out


def files(found: dict[str, tuple[int, int]]) -> dict[str, int]:
    """The files of a listing with their sizes (folders left out)."""
    return {name: size for name, (size, _) in found.items() if not name.endswith("/")}


def entries(found: dict[str, tuple[int, int]]) -> set[str]:
    """The cache's entries: its files other than the index the cache keeps of them."""
    return {name for name in files(found) if name != INDEX}


def describe(found: dict[str, tuple[int, int]]) -> str:
    """'index (48 B), 3/a1b2 (5220 B)': the files of a listing, as one line for a result."""
    return ", ".join(f"{name} ({size} B)" for name, size in files(found).items()) or "no files"


def user_cache() -> Path:
    """Where the driver keeps the cache when CUDA_CACHE_PATH is not set (Linux)."""
    return Path(os.path.expanduser("~")) / ".nv" / "ComputeCache"
