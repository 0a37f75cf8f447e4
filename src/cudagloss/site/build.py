"""The site stage from one call: load and check the glossary, render every page, export."""

from __future__ import annotations

from cudagloss.load.glossary import load_glossary
from cudagloss.load.project import refuse_folder_links
from cudagloss.model.corpus import Corpus
from cudagloss.model.project import Project
from cudagloss.site.export import Exporter
from cudagloss.site.output import SiteContent
from cudagloss.site.renderer import Renderer
from cudagloss.site.search_names import names_file
from cudagloss.site.state import RenderState


def build_site_content(project: Project, *, state: RenderState | None = None) -> tuple[SiteContent, Corpus]:
    """Every generated page and the navigation, the search's names index, and the corpus (for
    its warnings); state, what the preview remembers between builds (a fresh one when None)."""
    refuse_folder_links(project)  # the preview (mkdocs serve/build) reads them too: never through a link
    renderer = Renderer(load_glossary(project), project, state=state)
    content = renderer.site()
    content.files.append(names_file(renderer.corpus))
    content.exports = Exporter(renderer).files()
    return content, renderer.corpus
