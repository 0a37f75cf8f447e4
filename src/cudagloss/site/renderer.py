"""Render stage: the corpus to the Markdown pages of the site, through templates/.

Pages are generated in memory: `cudagloss render` writes them as a plain docs tree
(site/tree.py) and the live preview (cudagloss.mkdocs) hands the same texts to MkDocs;
nothing is written into the repository. Each page is a template rendered with a view
(site/views.py) built here:
bodies are prepared once (directives expanded, raw HTML shown as text, other terms
auto-linked), as backlinks need all of them. The page's HTML is sanitised once more by the
builder's Markdown conversion (`cudagloss.site.sanitise`, listed in the configuration).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from cudagloss.errors import display_path
from cudagloss.files.inside import entries_below
from cudagloss.load.terms import SECTIONS_FILE
from cudagloss.model.corpus import Corpus, LoadedTerm, index_letter
from cudagloss.model.measurements import ExperimentRecord
from cudagloss.model.project import Project
from cudagloss.model.urls import (
    INDEX,
    measurement_src_uri,
    measurements_index_uri,
    relative_href,
    section_src_uri,
    term_src_uri,
)
from cudagloss.site import escape
from cudagloss.site.autolink import AutoLinker, link_target
from cudagloss.site.body import render_body
from cudagloss.site.charts import ChartView, place
from cudagloss.site.computed_view import computed_files
from cudagloss.site.environment import author_markdown, href, make_environment, render
from cudagloss.site.jsonld import term_json_ld, term_set_json_ld
from cudagloss.site.measure_view import MEASURE_URI, measure_page
from cudagloss.site.measurement_views import measurement_view, measurements_index_view, raw_files
from cudagloss.site.output import GeneratedFile, GeneratedPage, SiteContent
from cudagloss.site.overview import GLANCE_URI, glance, highlights, measured
from cudagloss.site.state import LinkedBody, RenderState
from cudagloss.site.term_view import term_view
from cudagloss.site.views import (
    IndexPage,
    Letter,
    Related,
    SectionEntry,
    SectionPage,
    TermEntry,
    TermPage,
)
from cudagloss.text.markdown import link_targets, neutralize_html, plain_text

if TYPE_CHECKING:
    from _typeshed import DataclassInstance


def _templates_key(folder: Path) -> tuple[tuple[str, int, int], ...]:
    """What identifies the templates' current text (Jinja reloads a template whose file changed)."""
    found = []
    for entry in entries_below(folder):  # a link is refused when read as a template: never stat through it
        if entry.is_symlink() or entry.is_file(follow_symlinks=False):
            st = entry.stat(follow_symlinks=False)
            found.append((Path(entry.path).relative_to(folder).as_posix(), st.st_mtime_ns, st.st_size))
    return tuple(sorted(found))


def _linked_slug(target: str) -> str | None:
    """The slug of the term page a relative link points at, judged by its file name alone
    (whatever folder it names): the page file term_src_uri gives that slug."""
    if "://" in target:
        return None
    name = posixpath.basename(target)
    slug = posixpath.splitext(name)[0]
    return slug if name == posixpath.basename(term_src_uri(slug)) else None


class Renderer:
    """Renders one corpus; bodies are prepared once, as backlinks need all of them."""

    def __init__(self, corpus: Corpus, project: Project, *, state: RenderState | None = None) -> None:
        self.state = state if state is not None else RenderState()
        self.corpus = corpus
        self.project = project
        self.repo_url = project.repo_url.rstrip("/") if project.repo_url else None
        self.commit = project.commit
        self.templates_dir = templates_dir = project.templates_dir
        self.env = make_environment(templates_dir, self.state.bytecode)
        self.site_name = project.site_name
        self.site_url = project.site_url.rstrip("/") + "/" if project.site_url else None
        self.repo_root = project.root
        self.linker = AutoLinker(link_target(t.slug, t.term.definition, t.surface_forms) for t in corpus)
        self._templates_key = _templates_key(templates_dir)
        self._links_key = self.state.link_sets.get(self.linker.targets, object)
        self._measured_key = corpus.measurements.fingerprint if corpus.measurements is not None else None
        self._bodies = {t.slug: self._prepare_body(t) for t in corpus}
        self._views: dict[str, TermPage] = {}
        self._backlinks: dict[str, set[str]] = {t.slug: set() for t in corpus}
        for t in corpus:
            for target in self._bodies[t.slug].links | set(t.term.related):
                if target in self._backlinks and target != t.slug:
                    self._backlinks[target].add(t.slug)

    # -- preparation -----------------------------------------------------------------

    def _prepare_body(self, t: LoadedTerm) -> LinkedBody:
        text, cited, charts = render_body(
            t.term,
            self.corpus.measurements,
            term_src_uri(t.slug),
            self.state.bodies,
            self.corpus.link_checks,
            self.corpus.facts.values,
            t.file.parent,  # diagram files are named from the terms folder (check.diagrams.diagrams_root)
        )
        key = (t.slug, text, cited, charts, self._links_key)
        return self.state.linked.get(key, lambda: self._link_body(t.slug, text, cited, charts))

    def _link_body(
        self, slug: str, text: str, cited: tuple[tuple[str, str], ...], charts: tuple[ChartView, ...]
    ) -> LinkedBody:
        text = neutralize_html(text)
        explicit = {s for s in map(_linked_slug, link_targets(text)) if s is not None and s in self.corpus}
        text, auto = self.linker.link(text, slug, term_src_uri(slug), already=explicit)
        return LinkedBody(text, frozenset(explicit | auto), cited, charts)

    def body(self, slug: str, *, page: bool = True) -> Markup:
        """A term's body as its page shows it (page) or the exports do: rendered, linked and
        safe, its charts placed (the figure on a page, the data table in an export)."""
        linked = self._bodies[slug]
        return Markup(place(linked.markdown, linked.charts, page=page).strip("\n"))

    def has_charts(self, slug: str) -> bool:
        return bool(self._bodies[slug].charts)

    def cited(self, slug: str) -> tuple[tuple[str, str], ...]:
        """The (experiment, result) pairs a term's body shows, from its prepared body."""
        return self._bodies[slug].cited

    def backlinks(self, slug: str) -> set[str]:
        return set(self._backlinks.get(slug, set()))

    def href_between(self, from_uri: str, to_uri: str) -> Markup:
        return href(relative_href(to_uri, from_uri))

    def _entry_fields(self, t: LoadedTerm, from_uri: str) -> tuple[str, Markup, Markup, str]:
        def make() -> tuple[str, Markup, Markup, str]:
            d = t.term.definition
            return t.term.name, self.href_between(from_uri, term_src_uri(t.slug)), author_markdown(d), plain_text(d)

        return self.state.entries.get((t,), from_uri, make)

    def _entry(self, t: LoadedTerm, from_uri: str) -> TermEntry:
        return TermEntry(*self._entry_fields(t, from_uri))

    def related_entry(self, t: LoadedTerm, from_uri: str, links_here: bool) -> Related:
        return Related(*self._entry_fields(t, from_uri), links_here)

    def memo_key(self, template: str, view: DataclassInstance) -> tuple[object, ...]:
        """Everything a template's output depends on: the templates' files, the view (which
        compares by value) and the corpus's terms (links resolve against them)."""
        return (template, view, self._templates_key, self._links_key)

    def render(self, template: str, view: DataclassInstance) -> str:
        """A page template rendered with a view, unless the same inputs were rendered
        before: after an edit under `mkdocs serve`, only what changed is rendered again."""
        return self.state.pages.get(self.memo_key(template, view), lambda: render(self.env, template, view))

    def render_view(self, template: str, view: DataclassInstance) -> str:
        """render, for a view the renderer keeps between builds (a term's): looked up by the
        view's identity, so an unchanged term's page costs no hashing of its contents."""
        return self.state.view_pages.get((view,), (template, self.shared_key), lambda: self.render(template, view))

    @property
    def shared_key(self) -> tuple[object, object]:
        """What every page depends on besides its view: the templates and the terms' names."""
        return self._templates_key, self._links_key

    # -- term pages ------------------------------------------------------------------

    def term_page(self, slug: str) -> GeneratedPage:
        t = self.corpus[slug]
        markdown = self.render_view("term.md.j2", self.term_view(slug))
        json_ld = self.state.json_ld.get(
            (t,),
            (self.site_name, self.site_url),
            lambda: escape.json_ld(term_json_ld(t, self.site_name, self.site_url)),
        )
        return GeneratedPage(term_src_uri(slug), markdown, self.edit_uri(t.file), in_nav=False, json_ld=json_ld)

    def term_view(self, slug: str) -> TermPage:
        """What a template needs to show one term, with links relative to its page; made
        once per term, as the page and the export both use it."""
        if slug not in self._views:
            t = self.corpus[slug]
            own = [s for s in t.term.related if s in self.corpus]
            related = (self.corpus[s] for s in (*own, *self.back(slug, own)))
            section = self.corpus.section(t.term.section)
            rest = (
                len(own),
                section.title if section else None,
                self._measured_key,
                self.site_name,
                self.site_url,
                tuple(e.link in self.corpus for e in t.term.where_you_meet_this),
                tuple((n.slug, n.term.name) if n else None for n in self.corpus.neighbours(slug)),
                self.repo_url,
                self.commit,
            )
            view = self.state.views.get((t, self._bodies[slug], *related), rest, lambda: term_view(self, slug, own))
            self._views[slug] = view
        return self._views[slug]

    def back(self, slug: str, own: list[str]) -> list[str]:
        """The terms whose pages mention or relate to slug, but for its own related, by name."""
        return sorted(self.backlinks(slug) - set(own), key=lambda s: self.corpus[s].term.name.casefold())

    # -- the home page and section pages ----------------------------------------------

    def index_page(self) -> GeneratedPage:
        grouped: dict[str, list[TermEntry]] = {}
        for t in self.corpus.alphabetical():
            grouped.setdefault(index_letter(t), []).append(self._entry(t, INDEX))
        # Anchors are what the toc extension makes of the headings: 'a' for 'A', '09' for '0–9'.
        letters = tuple(
            Letter(label, escape.ident(re.sub(r"\W", "", label.lower()) or "_"), tuple(entries))
            for label, entries in grouped.items()
        )
        sections = tuple(
            SectionEntry(s.title, s.description, href(section_src_uri(s.slug)), len(self.corpus.in_section(s.slug)))
            for s in self.corpus.sections
        )
        found = measured(self.corpus.measurements, INDEX)
        page = IndexPage(self.site_name, sections, letters, len(self.corpus), found, highlights(self.corpus, INDEX))
        markdown = self.render("index.md.j2", page)
        json_ld = self.state.json_ld.get(
            tuple(self.corpus.alphabetical()),
            ("the set", self.site_name, self.site_url),
            lambda: escape.json_ld(term_set_json_ld(self.corpus, self.site_name, self.site_url)),
        )
        return GeneratedPage(INDEX, markdown, None, json_ld=json_ld)

    def section_page(self, slug: str) -> GeneratedPage:
        section = self.corpus.section(slug)
        assert section is not None, slug
        uri = section_src_uri(slug)
        terms = tuple(self._entry(t, uri) for t in self.corpus.in_section(slug))
        markdown = self.render("section.md.j2", SectionPage(section, terms, self.href_between(uri, INDEX)))
        return GeneratedPage(uri, markdown, self.edit_uri(self.corpus.root / SECTIONS_FILE))

    def edit_uri(self, file: Path) -> str | None:
        """A file's path in the repository (the edit button's, a problem report's), or None outside it."""
        shown = display_path(file, self.repo_root)
        return None if shown.startswith(("/", "..")) else shown

    # -- measurement pages --------------------------------------------------------------

    def _cited_by(self, experiment: str, from_uri: str) -> tuple[TermEntry, ...]:
        return tuple(
            self._entry(t, from_uri)
            for t in self.corpus.alphabetical()
            if any(c.experiment == experiment for c in t.term.measurements)
        )

    def measurement_page(self, record: ExperimentRecord) -> GeneratedPage:
        uri = measurement_src_uri(record.id)
        view = measurement_view(record, self._cited_by(record.id, uri), self.repo_url)
        return GeneratedPage(uri, self.render("measurement.md.j2", view), None, in_nav=False)

    def measurements_index_page(self) -> GeneratedPage:
        uri = measurements_index_uri()
        view = measurements_index_view([(r, self._cited_by(r.id, uri)) for r in self.corpus.measurements or ()])
        return GeneratedPage(uri, self.render("measurements.md.j2", view), None)

    def _term_from(self, from_uri: str) -> Callable[[str], Markup | None]:
        """A term's link from the page from_uri, or None where the glossary has no such term."""
        return lambda slug: self.href_between(from_uri, term_src_uri(slug)) if slug in self.corpus else None

    def site(self) -> SiteContent:
        """Every page, and a navigation of the home page, one entry per section and the
        measurements (their index; experiment pages are reached from it and from terms)."""
        pages = [self.index_page()]
        pages += [self.section_page(s.slug) for s in self.corpus.sections]
        pages += [self.term_page(t.slug) for t in self.corpus]
        nav: list[dict[str, Any]] = [{"Home": INDEX}]
        # Material prints navigation titles as HTML, so they are escaped here.
        nav += [{str(escape.html_text(s.title)): section_src_uri(s.slug)} for s in self.corpus.sections]
        if self.corpus.measurements is not None:
            pages.append(self.measurements_index_page())
            pages += [self.measurement_page(record) for record in self.corpus.measurements]
            nav.append({"Measurements": measurements_index_uri()})
            if (at_a_glance := glance(self.corpus.measurements)) is not None:
                pages.append(GeneratedPage(GLANCE_URI, self.render("gpus.md.j2", at_a_glance), None))
                nav.append({"GPU at a glance": GLANCE_URI})
            measure = measure_page(self.corpus.measurements, self.repo_url, self._term_from(MEASURE_URI))
            pages.append(GeneratedPage(MEASURE_URI, self.render("measure.md.j2", measure), None))
            nav.append({"Measure your GPU": MEASURE_URI})
        cited = [name for t in self.corpus for name in t.term.computed]
        published = [GeneratedFile(uri, text) for uri, text in computed_files(cited, self.corpus.computed)]
        return SiteContent(pages, nav, raw_files(self.corpus.measurements) + published)
