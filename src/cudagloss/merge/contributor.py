"""Who contributed a card: the author of the commit that first added its contributed/<node>/
folder, as git records it, written by `cudagloss collect` into each run's provenance as
`contributed_by`, so that the measurement pages credit a reader's card (issue 41).

Only git says who: a `contributed_by` a file brings with it is dropped, and a folder outside
the repository's contributed/ credits no one. The name is text from a pull request, so it is
bounded and cleaned (no control, invisible or direction characters, at most MAX_NAME), a name
that looks like an e-mail address is not used (addresses are never published), and the page
escapes it like every other string.
"""

from __future__ import annotations

import os
import re
import subprocess
import unicodedata
from dataclasses import replace
from pathlib import Path

from cudagloss.model.measurement import Measurement

FOLDER = "contributed"
KEY = "contributed_by"
MAX_NAME = 80
TIMEOUT_S = 30
MAX_OUTPUT = 1 << 20
_EMAIL = re.compile(r"\S+@\S+\.\S+")


def clean(raw: str) -> str | None:
    """A name fit to show: NFC, single spaces, no control or format characters, bounded; None
    for nothing left or an e-mail address."""
    text = unicodedata.normalize("NFC", raw)
    text = "".join(c for c in text if unicodedata.category(c)[0] != "C" and c not in "\u2028\u2029")
    text = " ".join(text.split())[:MAX_NAME].strip()
    return None if not text or _EMAIL.search(text) else text


def contributor(folder: Path, root: Path | None) -> str | None:
    """The author of the first commit that added files under folder, when folder is
    root/contributed/<node> of a git repository; None otherwise, or when git cannot say."""
    if root is None:
        return None
    try:
        relative = Path(os.path.abspath(folder)).relative_to(Path(os.path.abspath(root)))
    except ValueError:
        return None
    if len(relative.parts) != 2 or relative.parts[0] != FOLDER:
        return None
    try:
        run = subprocess.run(
            ["git", "log", "--diff-filter=A", "--format=%an", "--", relative.as_posix()],
            cwd=root,
            capture_output=True,
            timeout=TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if run.returncode != 0 or len(run.stdout) > MAX_OUTPUT:
        return None
    names = [line for line in run.stdout.decode("utf-8", errors="replace").splitlines() if line.strip()]
    return clean(names[-1]) if names else None  # git log lists the newest first


def credited(m: Measurement, by: str | None) -> Measurement:
    """m with `contributed_by` set to by, or without one where git says no one."""
    if m.provenance.get(KEY) == by or (by is None and KEY not in m.provenance):
        return m
    provenance = {k: v for k, v in m.provenance.items() if k != KEY}
    return replace(m, provenance=provenance if by is None else {**provenance, KEY: by})
