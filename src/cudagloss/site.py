"""The one call the site hooks make: load, validate and render a glossary folder."""

from __future__ import annotations

from pathlib import Path

from .load import load_corpus
from .render import Renderer, SiteContent


def build_site_content(
    terms_dir: Path,
    templates_dir: Path,
    *,
    repo_root: Path,
    site_name: str,
    site_url: str | None = None,
) -> SiteContent:
    """Every generated page and the navigation; raises GlossaryError on author mistakes."""
    corpus = load_corpus(terms_dir, repo_root)
    renderer = Renderer(corpus, templates_dir, site_name=site_name, site_url=site_url, repo_root=repo_root)
    return renderer.site()
