"""Export stage: the whole glossary as one Markdown file (llms-full.txt), and an llms.txt index of it.

Both are for reading outside the site (an offline copy, a language model, a diff in
review), so they carry what a page carries (definitions, bodies with their measured
values and provenance, sources with dates, bylines) but no navigation. Links between
terms become anchors in the one file; links to measurement pages become site addresses
(absolute when the site's URL is known, relative to the site root otherwise, which is
where the site publishes both files).
"""

from __future__ import annotations

import functools
import posixpath
import re

from markupsafe import Markup

from cudagloss.model.project import Project
from cudagloss.model.urls import SAFE_SCHEMES, measurement_src_uri, section_src_uri, site_address, term_src_uri
from cudagloss.site.api import GLOSSARY_JSON, glossary_json
from cudagloss.site.environment import render
from cudagloss.site.export_views import Glossary, LlmsExperiment, LlmsSection, LlmsTerm, LlmsTxt
from cudagloss.site.output import GeneratedFile
from cudagloss.site.renderer import Renderer
from cudagloss.site.views import TermPage
from cudagloss.text.markdown import link_scheme, plain_text

FULL_TXT = "llms-full.txt"
"""The whole glossary as one Markdown file: the llms.txt convention's name for the full text,
and a name no builder turns into a page (a .md file would be), so every builder publishes it
as it is, at the site's root, and `cudagloss export` writes the same bytes."""
LLMS_TXT = "llms.txt"

_INLINE_TARGET = re.compile(r"(\]\(\s*<?)([^()\s<>]+)")
_HREF = re.compile(r'(href=")([^"]+)(")')
_REF_DEF = re.compile(r"^( {0,3}\[[^\]]+\]:[ \t]*\n?[ \t]*<?)(\S+?)(?=>?(?:\s|$))", re.MULTILINE)


class Exporter:
    """Renders the two export files from a Renderer's prepared pages."""

    def __init__(self, renderer: Renderer) -> None:
        self.renderer = renderer
        self.base = renderer.site_url or ""
        self.env = renderer.env

    def site_href(self, src_uri: str) -> Markup:
        """The address of a generated page (directory URLs, as MkDocs publishes them): what
        urls.page_url computes, also without a site URL (then relative to the site root)."""
        return Markup(site_address(self.base, src_uri))  # our pages' addresses: slugs under the site's URL

    def rebase(self, markdown: str, from_uri: str) -> str:
        """Links written relative to a page, rewritten for the one exported file."""

        def target(link: str) -> str:
            if link_scheme(link) not in {"", *SAFE_SCHEMES}:
                return "#"  # validation refuses these; an export is Markdown no sanitiser reads after us
            if "://" in link or link.startswith(("#", "mailto:")):
                return link
            resolved = posixpath.normpath(posixpath.join(posixpath.dirname(from_uri), link))
            path = resolved.partition("#")[0]
            slug = posixpath.splitext(posixpath.basename(path))[0]
            if path == term_src_uri(slug) and slug in self.renderer.corpus:
                return f"#{slug}"
            return self.site_href(resolved)

        markdown = _INLINE_TARGET.sub(lambda m: m.group(1) + target(m.group(2)), markdown)
        markdown = _REF_DEF.sub(lambda m: m.group(1) + target(m.group(2)), markdown)
        return _HREF.sub(lambda m: m.group(1) + target(m.group(2)) + m.group(3), markdown)

    def glossary_markdown(self) -> str:
        r = self.renderer
        terms = []
        for t in r.corpus.alphabetical():
            view = r.term_view(t.slug)
            key = (r.shared_key, self.base)
            terms.append(Markup(r.state.export_chunks.get((view,), key, functools.partial(self._chunk, view))))
        site_href = Markup(r.site_url) if r.site_url else None
        return render(self.env, "glossary.md.j2", Glossary(r.site_name, site_href, len(r.corpus), tuple(terms)))

    def _chunk(self, view: TermPage) -> str:
        return self.rebase(render(self.env, "export_term.md.j2", view), term_src_uri(view.slug))

    def llms_txt(self) -> str:
        corpus = self.renderer.corpus
        sections = tuple(
            LlmsSection(
                s.title,
                s.description,
                self.site_href(section_src_uri(s.slug)),
                tuple(
                    LlmsTerm(t.term.name, self.site_href(term_src_uri(t.slug)), plain_text(t.term.definition))
                    for t in corpus.in_section(s.slug)
                ),
            )
            for s in corpus.sections
        )
        experiments = tuple(
            LlmsExperiment(record.id, self.site_href(measurement_src_uri(record.id)), record.purpose)
            for record in (corpus.measurements or [])
        )
        glossary_href = Markup(self.base + FULL_TXT)
        view = LlmsTxt(self.renderer.site_name, len(corpus), glossary_href, sections, experiments)
        return render(self.env, "llms.txt.j2", view)

    def files(self) -> list[GeneratedFile]:
        return [
            GeneratedFile(FULL_TXT, self.glossary_markdown()),
            GeneratedFile(LLMS_TXT, self.llms_txt()),
            GeneratedFile(GLOSSARY_JSON, glossary_json(self.renderer)),
        ]


def export_files(project: Project) -> list[GeneratedFile]:
    """The export files of the project's glossary (for `cudagloss export`): the same bytes the
    site publishes, site name and URL included; GlossaryError on mistakes."""
    from cudagloss.load.glossary import load_glossary

    return Exporter(Renderer(load_glossary(project), project)).files()
