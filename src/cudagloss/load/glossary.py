"""Everything a glossary is made of, loaded and checked together: the terms, the
measurements they cite and the verifier's catalog. The site, `cudagloss check` and the
link checker all start here."""

from __future__ import annotations

from pathlib import Path

from cudagloss.errors import Diagnostic
from cudagloss.load.catalog import load_catalog
from cudagloss.load.corpus import CheckReport, check_corpus, load_corpus
from cudagloss.load.measurements import load_measurements
from cudagloss.model.corpus import Corpus
from cudagloss.model.measurements import MeasurementSet


def load_glossary(terms_dir: Path, measurements_dir: Path | None, *, repo_root: Path) -> Corpus:
    """Terms, the measurements they cite and the verifier's catalog, all checked together;
    raises GlossaryError with every mistake (warnings are kept on the corpus)."""
    measurements, found = _measurements(measurements_dir, repo_root)
    return load_corpus(terms_dir, repo_root, measurements=measurements, found_before=found)


def check_glossary(
    terms_dir: Path, measurements_dir: Path | None, *, repo_root: Path, cache: bool = True
) -> CheckReport:
    """load_glossary's verdict, without keeping the terms: unchanged term files are taken
    from the check cache (cudagloss.load.cache) unless cache is False."""
    measurements, found = _measurements(measurements_dir, repo_root)
    return check_corpus(terms_dir, repo_root, measurements=measurements, found_before=found, cache=cache)


def _measurements(measurements_dir: Path | None, repo_root: Path) -> tuple[MeasurementSet | None, list[Diagnostic]]:
    if measurements_dir is None:
        return None, []
    return load_measurements(measurements_dir, repo_root, load_catalog(repo_root))
