"""Export stage: the whole glossary as one Markdown file, and an llms.txt index of it.

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
from pathlib import Path
from typing import Any

from markupsafe import Markup

from cudagloss.text.markdown import link_scheme, plain_text
from cudagloss.site.memo import Memo
from cudagloss.model.urls import INDEX, TERMS_DIR, section_src_uri, term_src_uri
from cudagloss.site.render import GeneratedFile, Renderer

GLOSSARY_MD = "glossary.md"
LLMS_TXT = "llms.txt"

_INLINE_TARGET = re.compile(r"(\]\(\s*<?)([^()\s<>]+)")
_HREF = re.compile(r'(href=")([^"]+)(")')
_REF_DEF = re.compile(r"^( {0,3}\[[^\]]+\]:[ \t]*\n?[ \t]*<?)(\S+?)(?=>?(?:\s|$))", re.MULTILINE)
_CHUNKS: Memo[str] = Memo(maxsize=1 << 15)


class Exporter:
    """Renders the two export files from a Renderer's prepared pages."""

    def __init__(self, renderer: Renderer) -> None:
        self.renderer = renderer
        self.base = renderer.site_url or ""
        self.env = renderer.env

    def site_href(self, src_uri: str) -> Markup:
        """The address of a generated page (directory URLs, as MkDocs publishes them)."""
        path, _, anchor = src_uri.partition("#")
        if path == INDEX:
            url = self.base or "./"
        elif path.endswith(".md"):
            url = self.base + path[: -len(".md")] + "/"
        else:
            url = self.base + path
        return Markup(f"{url}#{anchor}" if anchor else url)  # our pages' addresses: slugs under the site's URL

    def rebase(self, markdown: str, from_uri: str) -> str:
        """Links written relative to a page, rewritten for the one exported file."""

        def target(link: str) -> str:
            if link_scheme(link) not in ("", "http", "https", "mailto"):
                return "#"  # validation refuses these; an export is Markdown no sanitiser reads after us
            if "://" in link or link.startswith(("#", "mailto:")):
                return link
            resolved = posixpath.normpath(posixpath.join(posixpath.dirname(from_uri), link))
            path = resolved.partition("#")[0]
            directory, name = posixpath.split(path)
            if directory == TERMS_DIR and name.endswith(".md") and name[: -len(".md")] in self.renderer.corpus:
                return f"#{name[: -len('.md')]}"
            return self.site_href(resolved)

        markdown = _INLINE_TARGET.sub(lambda m: m.group(1) + target(m.group(2)), markdown)
        markdown = _REF_DEF.sub(lambda m: m.group(1) + target(m.group(2)), markdown)
        return _HREF.sub(lambda m: m.group(1) + target(m.group(2)) + m.group(3), markdown)

    def glossary_markdown(self) -> str:
        r = self.renderer
        corpus = r.corpus
        terms = []
        for t in corpus.alphabetical():
            context = r.term_context(t.slug)
            key = (r.memo_key("export_term.md.j2", context, self.env), self.base)
            terms.append(Markup(_CHUNKS.get(key, functools.partial(self._chunk, context, t.slug))))
        return self.env.get_template("glossary.md.j2").render(
            site_name=r.site_name,
            site_href=Markup(self.renderer.site_url) if self.renderer.site_url else None,
            count=len(corpus),
            terms=terms,
        )

    def _chunk(self, context: dict[str, Any], slug: str) -> str:
        return self.rebase(self.env.get_template("export_term.md.j2").render(context), term_src_uri(slug))

    def llms_txt(self) -> str:
        r = self.renderer
        corpus = r.corpus
        sections = [
            {
                "title": s.title,
                "description": s.description,
                "href": self.site_href(section_src_uri(s.slug)),
                "terms": [
                    {
                        "name": t.term.name,
                        "href": self.site_href(term_src_uri(t.slug)),
                        "definition": plain_text(t.term.definition),
                    }
                    for t in corpus.in_section(s.slug)
                ],
            }
            for s in corpus.sections
        ]
        experiments = [
            {"id": record.id, "href": self.site_href(f"measurements/{record.id}.md"), "purpose": record.purpose}
            for record in (corpus.measurements or [])
        ]
        return self.env.get_template("llms.txt.j2").render(
            site_name=r.site_name,
            count=len(corpus),
            glossary_href=Markup(self.base + GLOSSARY_MD),
            sections=sections,
            experiments=experiments,
        )

    def files(self) -> list[GeneratedFile]:
        return [GeneratedFile(GLOSSARY_MD, self.glossary_markdown()), GeneratedFile(LLMS_TXT, self.llms_txt())]


def export_files(
    terms_dir: Path,
    measurements_dir: Path | None,
    *,
    repo_root: Path,
    templates_dir: Path | None = None,
    site_name: str = "CUDA Glossary",
    site_url: str | None = None,
) -> list[GeneratedFile]:
    """The export files of a glossary on disk (for `cudagloss export`); GlossaryError on mistakes."""
    from cudagloss.load.glossary import load_glossary

    corpus = load_glossary(terms_dir, measurements_dir, repo_root=repo_root)
    templates = templates_dir or terms_dir.parent / "templates"
    return Exporter(Renderer(corpus, templates, site_name=site_name, site_url=site_url, repo_root=repo_root)).files()
