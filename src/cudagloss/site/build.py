"""The site stage from one call: load and check the glossary, render every page, export."""

from __future__ import annotations

from pathlib import Path

from cudagloss.load.glossary import load_glossary
from cudagloss.model.corpus import Corpus
from cudagloss.site.export import Exporter
from cudagloss.site.output import SiteContent
from cudagloss.site.renderer import Renderer
from cudagloss.site.state import RenderState


def build_site_content(
    terms_dir: Path,
    templates_dir: Path,
    *,
    repo_root: Path,
    site_name: str,
    site_url: str | None = None,
    measurements_dir: Path | None = None,
    repo_url: str | None = None,
    state: RenderState | None = None,
) -> tuple[SiteContent, Corpus]:
    """Every generated page and the navigation, and the corpus (for its warnings); state, what
    the preview remembers between builds (a fresh one when None)."""
    corpus = load_glossary(terms_dir, measurements_dir, repo_root=repo_root)
    renderer = Renderer(
        corpus,
        templates_dir,
        site_name=site_name,
        site_url=site_url,
        repo_root=repo_root,
        repo_url=repo_url,
        state=state,
    )
    content = renderer.site()
    content.exports = Exporter(renderer).files()
    return content, corpus
