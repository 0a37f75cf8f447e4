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

from cudagloss.check.markdown_fields import typed_numbers
from cudagloss.check.typed_numbers import fact_mistakes
from cudagloss.errors import Diagnostic
from cudagloss.load.convert import parse_file
from cudagloss.model.corpus import Corpus, Facts, FactsFile

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
    return (Facts(path=shown) if loaded is None else Facts(loaded.facts, shown, positions)), diags


def check_typed_numbers(corpus: Corpus, shown: str, read: Reader) -> list[Diagnostic]:
    """Load the facts file of the corpus' folder onto it and hold every term's prose to it:
    each number about a GPU typed by hand, and each mistake in the file."""
    corpus.facts, found = load_facts(corpus.root / FACTS_FILE, shown, read)
    used: set[int] = set()
    for t in corpus:
        found += typed_numbers(t, corpus.measurements, corpus.facts, used)
    return found + list(fact_mistakes(corpus.facts, used, [t.slug for t in corpus]))
