"""Where we may write: never through a symbolic link inside the repository.

A pull request can commit a link where a command writes (`site`, `build`, `export/llms-full.txt`,
a measurement file): writing through it would replace or delete files anywhere the link points.
Every path a command writes, replaces or empties is checked here first, component by component
from the repository root (the working folder) down, without following links; the first link
found is refused with one line before anything is touched. A path the user names outside the
repository is theirs: only its last component is checked (a link there would be replaced).
"""

from __future__ import annotations

import os
from pathlib import Path

from cudagloss.errors import UsageError

HINT = "a pull request may have committed it: remove the link (git rm) and run again"


def refuse_links(path: Path, root: Path | None = None) -> None:
    """UsageError if path, or a folder on the way to it at or below root (default: the working
    folder), is a symbolic link; nothing is created or followed. The link's own target is not
    shown: it is text from the repository, and could be anything."""
    absolute = Path(os.path.abspath(path))
    top = Path(os.path.abspath(root if root is not None else Path.cwd()))
    if absolute.is_relative_to(top):
        parts = absolute.relative_to(top).parts
        steps = [(top.joinpath(*parts[: i + 1]), "/".join(parts[: i + 1])) for i in range(len(parts))]
    else:
        steps = [(absolute, absolute.as_posix())]
    for step, shown in steps:
        if step.is_symlink():
            raise UsageError(f"{ascii(shown)[1:-1]} is a symbolic link: refusing to write through it; {HINT}")
