"""A term's page view: everything its template shows, with links relative to its page.

Made by the Renderer (which keeps it between the builds of `mkdocs serve` while its inputs
are the same objects; see Renderer.term_view) for the page and the export alike.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from markupsafe import Markup

from cudagloss.model.corpus import Corpus, LoadedTerm
from cudagloss.model.link_checks import LinkChecks, checked_phrase
from cudagloss.model.source import Source
from cudagloss.model.source_links import source_link
from cudagloss.model.urls import measurement_src_uri, page_url, section_src_uri, term_src_uri
from cudagloss.site import escape
from cudagloss.site.cite_this import cite_this_view
from cudagloss.site.comparisons import comparison_rows
from cudagloss.site.computed_view import computed_views
from cudagloss.site.environment import author_markdown, isodate
from cudagloss.site.fleet import measured_by
from cudagloss.site.measurement_views import cited_experiment_view, claim_view
from cudagloss.site.report import evidence, report_url
from cudagloss.site.views import (
    BylineView,
    Meet,
    Neighbour,
    Related,
    SectionLink,
    SourceView,
    TermHeading,
    TermPage,
)


class Renderer(Protocol):
    """What a term's view takes from the renderer (cudagloss.site.renderer.Renderer)."""

    corpus: Corpus
    site_name: str
    site_url: str | None
    repo_url: str | None
    commit: str | None

    def edit_uri(self, file: Path) -> str | None: ...
    def back(self, slug: str, own: list[str]) -> list[str]: ...
    def related_entry(self, t: LoadedTerm, from_uri: str, links_here: bool) -> Related: ...
    def href_between(self, from_uri: str, to_uri: str) -> Markup: ...
    def cited(self, slug: str) -> tuple[tuple[str, str], ...]: ...
    def body(self, slug: str, *, page: bool = True) -> Markup: ...
    def has_charts(self, slug: str) -> bool: ...


def term_view(r: Renderer, slug: str, own: list[str]) -> TermPage:
    """The view of slug's page; own: its related terms that exist (the rest link here)."""
    t = r.corpus[slug]
    term = t.term
    uri = term_src_uri(slug)
    back = r.back(slug, own)
    related = [r.related_entry(r.corpus[s], uri, False) for s in own]
    related += [r.related_entry(r.corpus[s], uri, True) for s in back]
    section = r.corpus.section(term.section)
    section_link = SectionLink(
        section.title if section else term.section, r.href_between(uri, section_src_uri(term.section))
    )
    cited = r.cited(slug)
    before, after = r.corpus.neighbours(slug)
    measured = tuple(cited_experiment_view(t.term, uri, c, r.corpus.measurements, cited) for c in term.measurements)
    measured_on = measured_by((n.node, n.gpu, day) for m in measured for n in m.nodes for day in n.days)
    b = term.byline
    return TermPage(
        slug=slug,
        term=TermHeading(term.name, term.title, tuple(term.error_strings)),
        definition=author_markdown(term.definition),
        body=r.body(slug),
        computed=computed_views(
            term.computed,
            r.corpus.computed,
            lambda to: r.href_between(uri, term_src_uri(to)) if to in r.corpus else None,
            lambda path: r.href_between(uri, path),
            r.corpus.measurements,
            lambda experiment: r.href_between(uri, measurement_src_uri(experiment)),
        ),
        also_known_as=(*term.aliases, *term.abbreviations),
        section=section_link,
        related=tuple(related),
        meet=tuple(_meet(r, uri, e.label, e.link, e.note) for e in term.where_you_meet_this),
        sources=tuple(source_view(s, r.corpus.link_checks) for s in term.sources),
        measured=measured,
        measured_on=measured_on,
        claims=tuple(claim_view(term, c, r.corpus.measurements) for c in term.claims),
        comparisons=comparison_rows(term, r.corpus.measurements),
        byline=BylineView(b.written_by, b.reviewed_by, isodate(b.written_on), isodate(b.last_checked_on)),
        url=Markup(url) if (url := page_url(r.site_url, uri)) else None,
        cite=cite_this_view(t, r.site_name, r.site_url),
        previous=_neighbour(r, uri, before),
        next=_neighbour(r, uri, after),
        report=report_url(r.repo_url, url, t, r.edit_uri(t.file), r.commit, evidence(t, r.corpus.measurements, cited)),
        body_text=r.body(slug, page=False) if r.has_charts(slug) else None,
    )


def source_view(s: Source, checks: LinkChecks | None) -> SourceView:
    """A source as the Sources list shows it: linked at its quote, with Robust Links attributes
    where it has an archived copy, and the copy linked in its place once the page is gone."""
    link = source_link(s, checks)
    checked = checked_phrase(s.checked_on, s.url, checks)
    version = escape.url(link.archived_url) if link.archived_url and link.archived_on else None
    return SourceView(
        s.title,
        escape.url(link.href) if escape.url(s.url) is not None else None,
        checked + (f"; {link.quote_phrase}" if link.quote_phrase else ""),
        " ".join((s.quote or "").split()),
        escape.url(s.url) if version is not None else None,
        version,
        link.archived_on or "" if version is not None else "",
        link.archive_shown and version is not None,
    )


def _meet(r: Renderer, uri: str, label: str, link: str | None, note: str) -> Meet:
    internal = link in r.corpus
    if link and internal:
        to: Markup | None = r.href_between(uri, term_src_uri(link))
    else:
        to = escape.url(link) if link else None  # None for anything a reader must not be sent to
    return Meet(label, to, internal, author_markdown(note))


def _neighbour(r: Renderer, uri: str, t: LoadedTerm | None) -> Neighbour | None:
    return Neighbour(t.term.name, r.href_between(uri, term_src_uri(t.slug))) if t else None
