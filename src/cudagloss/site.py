"""The calls the site hooks and the CLI make: load everything a glossary needs, then render."""

from __future__ import annotations

from pathlib import Path

from .catalog import load_catalog
from .corpus import Corpus
from .export import Exporter
from .load import load_corpus
from .measured import load_measurements
from .render import Renderer, SiteContent


def load_glossary(terms_dir: Path, measurements_dir: Path | None, *, repo_root: Path) -> Corpus:
    """Terms, the measurements they cite and the verifier's catalog, all checked together;
    raises GlossaryError with every mistake (warnings are kept on the corpus)."""
    if measurements_dir is None:
        return load_corpus(terms_dir, repo_root)
    catalog = load_catalog(repo_root)
    measurements, found = load_measurements(measurements_dir, repo_root, catalog)
    return load_corpus(terms_dir, repo_root, measurements=measurements, found_before=found)


def build_site_content(
    terms_dir: Path,
    templates_dir: Path,
    *,
    repo_root: Path,
    site_name: str,
    site_url: str | None = None,
    measurements_dir: Path | None = None,
    repo_url: str | None = None,
) -> tuple[SiteContent, Corpus]:
    """Every generated page and the navigation, and the corpus (for its warnings)."""
    corpus = load_glossary(terms_dir, measurements_dir, repo_root=repo_root)
    renderer = Renderer(
        corpus, templates_dir, site_name=site_name, site_url=site_url, repo_root=repo_root, repo_url=repo_url
    )
    content = renderer.site()
    content.exports = Exporter(renderer).files()
    return content, corpus
