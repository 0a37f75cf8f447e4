"""A real small file system for the tests of what a full or read-only disk does to a write: a 64 KiB
tmpfs under the test's folder (root only; CI runs as root), filled to its last block on request."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def small_tmpfs(tmp_path: Path, *, folder: str = "", full: bool = False) -> Iterator[Path]:
    """A mounted 64 KiB tmpfs at tmp_path/disk (with an empty folder in it where named), filled
    to the last block when full; unmounted after. Skips the test where it cannot be mounted."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        if folder:
            (disk / folder).mkdir()
        if full:
            with open(disk / "filler", "wb", buffering=0) as filler, pytest.raises(OSError, match="No space left"):
                while True:
                    filler.write(b"\0" * 4096)
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)
