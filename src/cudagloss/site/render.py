"""Render stage: the corpus to the Markdown pages of the site, through templates/.

Pages are generated in memory (the site hooks hand them to MkDocs); nothing is written to
the repository. The templates are trusted designer files; every plain string they print
passes `escape.text` (inert as Markdown and as HTML), and what is already Markdown comes
in as Markup: author Markdown (bodies with their directives expanded, definitions, notes)
with raw HTML shown as text, and the links and anchors computed here. The page's HTML is
sanitised once more by the site hooks (`escape.clean_html`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2
from markupsafe import Markup

from cudagloss.site import escape
from cudagloss.site.body import render_body
from cudagloss.site.autolink import AutoLinker, LinkTarget
from cudagloss.site.cite import ValueCiter
from cudagloss.model.corpus import Corpus, LoadedTerm, index_letter
from cudagloss.errors import display_path
from cudagloss.model.urls import (
    INDEX,
    measurement_src_uri,
    measurements_index_uri,
    page_url,
    raw_json_src_uri,
    relative_href,
    result_anchor,
    section_src_uri,
    term_src_uri,
)
from cudagloss.site.bytecode import BYTECODE
from cudagloss.text.markdown import link_targets, neutralize_html, plain_text
from cudagloss.model.measurements import ExperimentRecord, NodeRun, format_value, verify_command
from cudagloss.model.measurement import Measurement
from cudagloss.site.memo import Memo
from cudagloss.model.term import PENDING

@dataclass(frozen=True)
class GeneratedPage:
    """One page of the site, as Markdown, with the repository file its content comes from."""

    src_uri: str
    markdown: str
    edit_uri: str | None = None
    in_nav: bool = True
    """False for term pages: the sidebar lists sections, never every term."""
    head: str = ""
    """Ready HTML for the page's <head> (its JSON-LD), kept out of the sanitised body."""


@dataclass(frozen=True)
class GeneratedFile:
    """A file copied into the site as it is (the raw measurement JSON)."""

    src_uri: str
    content: str


@dataclass
class SiteContent:
    """Everything the hooks give MkDocs: the pages and the navigation (sections, not terms)."""

    pages: list[GeneratedPage] = field(default_factory=list)
    nav: list[dict[str, Any]] = field(default_factory=list)
    files: list[GeneratedFile] = field(default_factory=list)
    exports: list[GeneratedFile] = field(default_factory=list)
    """Files written into the built site as they are, outside MkDocs' pages (glossary.md, llms.txt)."""


PROVENANCE_LABELS = {
    "node": "Node",
    "gpu_name": "GPU",
    "compute_capability": "Compute capability",
    "sm_count": "SMs",
    "driver_version": "Driver",
    "cuda_driver_version": "CUDA version of the driver",
    "nvrtc_version": "NVRTC",
    "nvrtc_ptx_isa_version": "PTX ISA that NVRTC emits",
    "cuda_bindings_version": "cuda-bindings",
    "cuda_core_version": "cuda-core",
    "python": "Python",
    "os": "OS",
    "git_commit": "Git commit",
    "git_dirty": "Uncommitted changes",
    "recorded_at": "Recorded at",
    "duration_s": "Duration (s)",
    "repeats": "Repeats",
}


_LINKED: Memo[_Body] = Memo(maxsize=1 << 14)
_PAGES: Memo[str] = Memo(maxsize=1 << 15)


def _templates_key(folder: Path) -> tuple[tuple[str, int, int], ...]:
    """What identifies the templates' current text (Jinja reloads a template whose file changed)."""
    found = []
    for path in sorted(folder.rglob("*")) if folder.is_dir() else []:
        if path.is_file():
            st = path.stat()
            found.append((path.relative_to(folder).as_posix(), st.st_mtime_ns, st.st_size))
    return tuple(found)


def _is_acronym(form: str) -> bool:
    """'PTX', 'SASS', 'JIT': matched case-sensitively so that ordinary words are not linked."""
    return form.isupper() and " " not in form.strip()


def _date(value: object) -> str:
    return value.isoformat() if isinstance(value, dt.date) else PENDING


def _finalize(value: object) -> object:
    """Every value a template prints: ready Markdown (Markup) as it is, anything else as
    plain text made inert by the one escaping rule."""
    if value is None or hasattr(value, "__html__"):
        return value
    return escape.text(value)


def _join(items: object, separator: str = ", ") -> Markup:
    """Jinja's join, with each item through the same rule as a printed value."""
    return Markup(separator).join(
        item if hasattr(item, "__html__") else escape.text(item)
        for item in items  # type: ignore[attr-defined]
    )


def _href(path: str) -> Markup:
    """A link we computed between pages of the site, percent-encoded beyond doubt."""
    return Markup(quote(path, safe="/#.-_~%"))


class _PageEnvironment(jinja2.Environment):
    """Template contexts are plain dicts, read as `entry.name`: Jinja tries the attribute
    first and only then the key, paying for an AttributeError each time (a quarter of
    rendering 5,000 term pages). Keys are looked up first here; templates call no dict
    methods, and the trusted templates are the only users of this environment."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict and attribute in obj:
            return obj[attribute]
        return super().getattr(obj, attribute)


def make_environment(templates_dir: Path) -> jinja2.Environment:
    """The templates' environment, for pages and exports alike: what `escape.text` makes of
    plain text is readable Markdown, so one rule serves both."""
    env = _PageEnvironment(
        loader=jinja2.FileSystemLoader(str(templates_dir)),
        autoescape=True,
        finalize=_finalize,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        bytecode_cache=BYTECODE,
    )
    env.filters["code"] = escape.code
    env.filters["isodate"] = _date
    env.filters["cell"] = escape.text
    env.filters["html"] = escape.html_text
    env.filters["linktitle"] = escape.link_title
    env.filters["join"] = _join
    return env


@dataclass(frozen=True)
class _Body:
    markdown: str
    links: frozenset[str]
    """Slugs of the terms the body links to, explicitly or by auto-linking."""
    cited: tuple[tuple[str, str], ...] = ()
    """(experiment, result) pairs the body shows, in order of first mention."""


class Renderer:
    """Renders one corpus; bodies are prepared once, as backlinks need all of them."""

    def __init__(
        self,
        corpus: Corpus,
        templates_dir: Path,
        *,
        site_name: str = "CUDA Glossary",
        site_url: str | None = None,
        repo_root: Path | None = None,
        repo_url: str | None = None,
    ) -> None:
        self.corpus = corpus
        self.repo_url = repo_url.rstrip("/") if repo_url else None
        self.templates_dir = templates_dir
        self.env = make_environment(templates_dir)
        self.site_name = site_name
        self.site_url = site_url.rstrip("/") + "/" if site_url else None
        self.repo_root = repo_root
        self.linker = AutoLinker(
            LinkTarget(
                slug=t.slug,
                src_uri=term_src_uri(t.slug),
                definition=t.term.definition,
                forms=tuple(f for f in t.surface_forms if f.strip() and not _is_acronym(f)),
                exact_forms=tuple(f for f in t.surface_forms if _is_acronym(f)),
            )
            for t in corpus
        )
        self._templates_key = _templates_key(templates_dir)
        slugs = sorted(t.slug for t in corpus)
        self._links_key = hashlib.sha256(repr((self.linker.targets, slugs)).encode()).hexdigest()
        self._bodies = {t.slug: self._prepare_body(t) for t in corpus}
        self._contexts: dict[str, dict[str, Any]] = {}
        self._backlinks: dict[str, set[str]] = {t.slug: set() for t in corpus}
        for t in corpus:
            for target in self._bodies[t.slug].links | set(t.term.related):
                if target in self._backlinks and target != t.slug:
                    self._backlinks[target].add(t.slug)

    # -- preparation -----------------------------------------------------------------

    def _prepare_body(self, t: LoadedTerm) -> _Body:
        text, cited = render_body(t.term, self.corpus.measurements, term_src_uri(t.slug))
        return _LINKED.get((t.slug, text, cited, self._links_key), lambda: self._link_body(t.slug, text, cited))

    def _link_body(self, slug: str, text: str, cited: tuple[tuple[str, str], ...]) -> _Body:
        text = neutralize_html(text)
        stems = (
            posixpath.splitext(posixpath.basename(target))[0]
            for target in link_targets(text)
            if target.endswith(".md") and "://" not in target
        )
        explicit = {slug for slug in stems if slug in self.corpus}
        text, auto = self.linker.link(text, slug, term_src_uri(slug), already=explicit)
        return _Body(text, frozenset(explicit | auto), cited)

    def backlinks(self, slug: str) -> set[str]:
        return set(self._backlinks.get(slug, set()))

    def _href(self, from_uri: str, to_uri: str) -> Markup:
        return _href(relative_href(to_uri, from_uri))

    def _url(self, src_uri: str) -> str | None:
        return page_url(self.site_url, src_uri)

    def _entry(self, t: LoadedTerm, from_uri: str, **extra: Any) -> dict[str, Any]:
        return {
            "slug": t.slug,
            "name": t.term.name,
            "href": self._href(from_uri, term_src_uri(t.slug)),
            "definition": Markup(neutralize_html(t.term.definition)),
            "tooltip": plain_text(t.term.definition),
            **extra,
        }

    # -- pages -----------------------------------------------------------------------

    def term_page(self, slug: str) -> GeneratedPage:
        t = self.corpus[slug]
        markdown = self.render_memoised("term.md.j2", self.term_context(slug))
        head = escape.json_ld(self._term_json_ld(t))
        return GeneratedPage(term_src_uri(slug), markdown, self._edit_uri(t.file), in_nav=False, head=head)

    def memo_key(self, template: str, context: dict[str, Any], env: jinja2.Environment) -> tuple[object, ...]:
        """Everything a template's output depends on: the templates' files, how the
        environment escapes, the context (which is made of plain values, so its repr is
        its content) and the corpus's terms (links resolve against them)."""
        return (template, env.autoescape, env.finalize is not None, self._templates_key, self._links_key, repr(context))

    def render_memoised(self, template: str, context: dict[str, Any]) -> str:
        """A page template rendered with context, unless the same inputs were rendered
        before: after an edit under `mkdocs serve`, only what changed is rendered again."""
        key = self.memo_key(template, context, self.env)
        return _PAGES.get(key, lambda: self.env.get_template(template).render(context))

    def term_context(self, slug: str) -> dict[str, Any]:
        """What a template needs to show one term, with links relative to its page; made
        once per term, as the page and the export both use it."""
        if slug not in self._contexts:
            self._contexts[slug] = self._term_context(slug)
        return self._contexts[slug]

    def _term_context(self, slug: str) -> dict[str, Any]:
        t = self.corpus[slug]
        term = t.term
        uri = term_src_uri(slug)
        own = [s for s in term.related if s in self.corpus]
        back = sorted(self.backlinks(slug) - set(own), key=lambda s: self.corpus[s].term.name.casefold())
        related = [self._entry(self.corpus[s], uri, links_here=False) for s in own]
        related += [self._entry(self.corpus[s], uri, links_here=True) for s in back]
        meet = []
        for entry in term.where_you_meet_this:
            href: Markup | None = None
            if entry.link and entry.link in self.corpus:
                href = self._href(uri, term_src_uri(entry.link))
            elif entry.link:
                href = escape.url(entry.link)  # None for anything a reader must not be sent to
            meet.append(
                {
                    "label": entry.label,
                    "href": href,
                    "internal": entry.link in self.corpus,
                    "note": Markup(neutralize_html(entry.note)),
                }
            )
        section = self.corpus.section(term.section)
        measured = [self._citation(t, i) for i in range(len(term.measurements))]
        measured_on = sorted(
            {(n["node"], n["gpu"], n["date"]) for m in measured for n in m["nodes"]}, key=lambda n: (n[2], n[0])
        )
        context = {
            "site_name": self.site_name,
            "slug": slug,
            "term": term,
            "definition": Markup(neutralize_html(term.definition)),
            "body": Markup(self._bodies[slug].markdown.strip("\n")),
            "also_known_as": [*term.aliases, *term.abbreviations],
            "section": {
                "title": section.title if section else term.section,
                "href": self._href(uri, section_src_uri(term.section)),
            },
            "related": related,
            "meet": meet,
            "sources": [
                {"title": s.title, "url": escape.url(s.url), "checked_on": _date(s.checked_on)} for s in term.sources
            ],
            "measured": measured,
            "measured_on": measured_on,
            "byline": {
                "written_by": term.byline.written_by,
                "reviewed_by": term.byline.reviewed_by,
                "written_on": _date(term.byline.written_on),
                "last_checked_on": _date(term.byline.last_checked_on),
            },
            "url": Markup(url) if (url := self._url(uri)) else None,
        }
        return context

    def _citation(self, t: LoadedTerm, i: int) -> dict[str, Any]:
        """One cited experiment for the term page's Measured section: its nodes side by side,
        one row per result shown (those named in the citation, else those the body cites)."""
        citation = t.term.measurements[i]
        experiment = citation.experiment
        uri = term_src_uri(t.slug)
        citer = ValueCiter(t.term, self.corpus.measurements, uri)
        record = self.corpus.measurements.get(experiment) if self.corpus.measurements else None
        runs = record.measured if record else []
        names = citation.results or [n for e, n in self._bodies[t.slug].cited if e == experiment]
        rows = []
        for name in names:
            values = record.values(name) if record else []
            found = next((r for _, r in values if r is not None), None)
            rows.append(
                {
                    "name": name,
                    "description": found.description if found else name,
                    "cells": [citer.link(experiment, run, result, name) for run, result in values],
                }
            )
        return {
            "experiment": experiment,
            "href": _href(citer.href(experiment)) if record else None,
            "purpose": record.purpose if record else "",
            "note": Markup(neutralize_html(citation.note)),
            "command": verify_command(experiment),
            "nodes": [self._node(run) for run in runs],
            "failed_only": [run.node for run in (record.runs if record else []) if run.good is None],
            "rows": rows,
        }

    def _node(self, run: NodeRun) -> dict[str, Any]:
        return {
            "node": run.node,
            "gpu": run.gpu,
            "date": run.recorded_on,
            "stale": run.stale,
            "failed_since": run.failed is not None,
        }

    def _term_json_ld(self, t: LoadedTerm) -> dict[str, Any]:
        term = t.term
        data: dict[str, Any] = {"@context": "https://schema.org", "@type": "DefinedTerm", "name": term.name}
        url = self._url(term_src_uri(t.slug))
        if url:
            data["@id"] = data["url"] = url
        data["description"] = plain_text(term.definition)
        if term.aliases or term.abbreviations:
            data["alternateName"] = [*term.aliases, *term.abbreviations]
        data["termCode"] = t.slug
        term_set: dict[str, Any] = {"@type": "DefinedTermSet", "name": self.site_name}
        if self.site_url:
            term_set["@id"] = term_set["url"] = self.site_url
        data["inDefinedTermSet"] = term_set
        return data

    def index_page(self) -> GeneratedPage:
        grouped: dict[str, list[dict[str, Any]]] = {}
        for t in self.corpus.alphabetical():
            grouped.setdefault(index_letter(t), []).append(self._entry(t, INDEX))
        # Anchors are what the toc extension makes of the headings: 'a' for 'A', '09' for '0–9'.
        letters = [
            {"label": label, "anchor": escape.ident(re.sub(r"\W", "", label.lower()) or "_"), "entries": entries}
            for label, entries in grouped.items()
        ]
        sections = [
            {
                "title": s.title,
                "description": s.description,
                "href": _href(section_src_uri(s.slug)),
                "count": len(self.corpus.in_section(s.slug)),
            }
            for s in self.corpus.sections
        ]
        term_set: dict[str, Any] = {"@context": "https://schema.org", "@type": "DefinedTermSet", "name": self.site_name}
        if self.site_url:
            term_set["@id"] = term_set["url"] = self.site_url
        term_set["hasDefinedTerm"] = [
            {k: v for k, v in self._term_json_ld(t).items() if k not in ("@context", "inDefinedTermSet")}
            for t in self.corpus.alphabetical()
        ]
        markdown = self.render_memoised(
            "index.md.j2",
            {
                "site_name": self.site_name,
                "sections": sections,
                "letters": letters,
                "count": len(self.corpus),
            },
        )
        return GeneratedPage(INDEX, markdown, None, head=escape.json_ld(term_set))

    def section_page(self, slug: str) -> GeneratedPage:
        section = self.corpus.section(slug)
        assert section is not None, slug
        uri = section_src_uri(slug)
        terms = [self._entry(t, uri) for t in self.corpus.in_section(slug)]
        markdown = self.env.get_template("section.md.j2").render(
            site_name=self.site_name,
            section=section,
            terms=terms,
            home=self._href(uri, INDEX),
        )
        return GeneratedPage(uri, markdown, self._edit_uri(self.corpus.root / "_sections.yaml"))

    def _edit_uri(self, file: Path) -> str | None:
        if self.repo_root is None:
            return None
        shown = display_path(file, self.repo_root)
        return None if shown.startswith(("/", "..")) else shown

    # -- measurement pages --------------------------------------------------------------

    def _cited_by(self, experiment: str, from_uri: str) -> list[dict[str, Any]]:
        return [
            self._entry(t, from_uri)
            for t in self.corpus.alphabetical()
            if any(c.experiment == experiment for c in t.term.measurements)
        ]

    def _source_href(self, record: ExperimentRecord) -> str | None:
        if not (self.repo_url and record.info and record.info.source):
            return None
        return escape.url(f"{self.repo_url}/blob/main/{quote(record.info.source)}")

    def _run_view(self, record: ExperimentRecord, run: NodeRun) -> dict[str, Any]:
        def view(m: Measurement | None, failed: bool) -> dict[str, Any] | None:
            if m is None:
                return None
            return {
                "status": m.status,
                "raw": _href(
                    relative_href(raw_json_src_uri(record.id, run.node, failed=failed), measurement_src_uri(record.id))
                ),
                "raw_name": posixpath.basename(raw_json_src_uri(record.id, run.node, failed=failed)),
                "provenance": [{"label": PROVENANCE_LABELS.get(k, k), "value": v} for k, v in m.provenance.items()],
                "gates": m.gates,
                "error": m.error,
                "results": [
                    {
                        "anchor": escape.ident(result_anchor(run.node, r.name)),
                        "name": r.name,
                        "value": format_value(r),
                        "description": r.description,
                        "samples": ", ".join(f"{x:.4g}" for x in r.samples),
                    }
                    for r in m.results
                ],
            }

        return {
            **self._node(run),
            "good": view(run.good, False),
            "failed": view(run.failed, True),
        }

    def measurement_page(self, record: ExperimentRecord) -> GeneratedPage:
        uri = measurement_src_uri(record.id)
        markdown = self.env.get_template("measurement.md.j2").render(
            site_name=self.site_name,
            experiment=record.id,
            purpose=record.purpose,
            source=record.info.source if record.info else "",
            source_href=self._source_href(record),
            command=verify_command(record.id),
            cited_by=self._cited_by(record.id, uri),
            runs=[self._run_view(record, run) for run in record.runs],
            index=self._href(uri, measurements_index_uri()),
        )
        return GeneratedPage(uri, markdown, None, in_nav=False)

    def measurements_index_page(self) -> GeneratedPage:
        uri = measurements_index_uri()
        experiments = [
            {
                "id": record.id,
                "href": self._href(uri, measurement_src_uri(record.id)),
                "purpose": record.purpose,
                "nodes": [self._node(run) for run in record.measured],
                "failed_only": [run.node for run in record.runs if run.good is None],
                "cited_by": self._cited_by(record.id, uri),
                "command": verify_command(record.id),
            }
            for record in (self.corpus.measurements or [])
        ]
        markdown = self.env.get_template("measurements.md.j2").render(site_name=self.site_name, experiments=experiments)
        return GeneratedPage(uri, markdown, None)

    def raw_files(self) -> list[GeneratedFile]:
        out = []
        for record in self.corpus.measurements or []:
            for run in record.runs:
                for m, failed in ((run.good, False), (run.failed, True)):
                    if m is not None:
                        # '<', '>' and '&' only occur inside JSON strings: escaped there, a browser
                        # that sniffs the file as HTML still finds no markup.
                        raw = m.to_json().replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
                        out.append(GeneratedFile(raw_json_src_uri(record.id, run.node, failed=failed), raw))
        return out

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
        return SiteContent(pages, nav, self.raw_files())
