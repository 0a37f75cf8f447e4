"""Everything a glossary is made of, loaded and checked together: the terms, the
measurements they cite and the verifier's catalog. The site, `cudagloss check` and the
link checker all start here."""

from __future__ import annotations

from pathlib import Path

from cudagloss.load.catalog import load_catalog
from cudagloss.load.measurements import load_measurements
from cudagloss.load.terms import load_corpus
from cudagloss.model.corpus import Corpus


def load_glossary(terms_dir: Path, measurements_dir: Path | None, *, repo_root: Path) -> Corpus:
    """Terms, the measurements they cite and the verifier's catalog, all checked together;
    raises GlossaryError with every mistake (warnings are kept on the corpus)."""
    if measurements_dir is None:
        return load_corpus(terms_dir, repo_root)
    catalog = load_catalog(repo_root)
    measurements, found = load_measurements(measurements_dir, repo_root, catalog)
    return load_corpus(terms_dir, repo_root, measurements=measurements, found_before=found)
