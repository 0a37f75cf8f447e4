"""The reviewed facts file (terms/_facts.yml) and the check it feeds: no number about a GPU
is typed into a term's prose unless the file lists it, with the reason no GPU measures it.

The file is optional; without it every such number must be a cited measurement. It ends in
'.yml' because every '.yaml' file of the folder names its JSON Schema on its first line, and
no schema describes this one yet.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from cudagloss.errors import Diagnostic
from cudagloss.load.convert import parse_file
from cudagloss.model.corpus import Facts, FactsFile

FACTS_FILE = "_facts.yml"

Reader = Callable[[Path, str], tuple[str | None, list[Diagnostic]]]
"""Reads a file of the terms folder as term files are read: (text or None, mistakes)."""


def load_facts(path: Path, shown: str, read: Reader) -> tuple[Facts, list[Diagnostic]]:
    """The facts file at path (shown as shown), and every mistake in its form."""
    if not os.path.lexists(path):
        return Facts(path=shown), []
    text, diags = read(path, shown)
    if text is None:
        return Facts(path=shown), diags
    loaded, diags, positions = parse_file(shown, text, FactsFile)
    return (Facts(path=shown) if loaded is None else Facts(loaded.facts, shown, positions, loaded.values)), diags
