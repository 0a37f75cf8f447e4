"""Where `make generations` writes a computed table, and the writing: one rule for both tables
(verifier/generations.py, verifier/availability.py). The path must be inside the repository with
no symbolic link on the way (checked before anything is computed), and the file is replaced
atomically, so an interrupted run leaves the previous good table."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from cudagloss.errors import UsageError
from cudagloss.files.atomic import write_text_atomic
from cudagloss.files.inside import refuse_links

REPO = Path(__file__).resolve().parent.parent


def writable(given: Path) -> Path:
    """given as an absolute path, once it is known to be inside the repository and not behind a link."""
    out = Path(os.path.abspath(given))
    if not out.is_relative_to(REPO):
        raise UsageError(f"{given} is outside the repository {REPO}: not written")
    refuse_links(out, REPO)
    return out


def write(out: Path, doc: dict[str, Any]) -> None:
    """doc as sorted, indented JSON at out (made by writable), and a line that says so."""
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out, json.dumps(doc, indent=2, sort_keys=True) + "\n")
    print(f"wrote {out.relative_to(REPO)}")
