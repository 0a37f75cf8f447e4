"""The render stage's memory: every memo it keeps between builds, owned by one object.

`mkdocs serve` rebuilds the whole site after each edit in the same process, so an unchanged
page should cost a lookup, not a render. Each memo below keys its value on everything the value
is made from, so no key can serve a stale value; a memo may forget (each is bounded), never lie.

The identity contract, stated once: the memos of kind Pinned key on the identity of loaded
objects (a LoadedTerm, a page view) to spare hashing their contents. That is correct because
the loader (cudagloss.load.terms) hands back the very same LoadedTerm for a file that did not
change and a new one for a file that did, nothing changes a loaded term, and a Pinned keeps the
objects alive with their value so an id is never reused while its entry lives. Whoever loads
the terms some other way must hand a fresh RenderState.

One RenderState per preview process (the MkDocs adapter keeps it across builds); a fresh one per
`cudagloss render` or `cudagloss export`, and per Renderer made without one. Pure functions of
strings (escaping, front matter) keep their own functools caches: they cannot be stale.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from markupsafe import Markup

from cudagloss.site.bytecode import MemoryBytecodeCache
from cudagloss.site.charts import ChartView
from cudagloss.site.incremental import BuildMemory
from cudagloss.site.memo import Memo, Pinned
from cudagloss.site.views import TermPage


@dataclass(frozen=True)
class LinkedBody:
    """A term's body ready for its page: rendered and auto-linked."""

    markdown: str
    links: frozenset[str]
    """Slugs of the terms the body links to, explicitly or by auto-linking."""
    cited: tuple[tuple[str, str], ...] = ()
    """(experiment, result) pairs the body shows, in order of first mention."""
    charts: tuple[ChartView, ...] = ()
    """The body's charts, placed at their marks in markdown when a page or an export shows it."""


@dataclass(eq=False)
class RenderState:
    """Every memo of the render stage; the sizes bound memory at about five thousand terms."""

    bodies: Memo[tuple[str, tuple[tuple[str, str], ...], tuple[ChartView, ...]]] = field(
        default_factory=lambda: Memo(1 << 14)
    )
    """A body with its directives expanded, the values it cited and its charts (site.body): charts
    are drawn once per body, measurements and page."""
    linked: Memo[LinkedBody] = field(default_factory=lambda: Memo(1 << 14))
    """A body auto-linked against the set of link targets (site.renderer)."""
    link_sets: Memo[object] = field(default_factory=lambda: Memo(64))
    """One token per distinct set of link targets: memo keys hold the token, not the set."""
    pages: Memo[str] = field(default_factory=lambda: Memo(1 << 15))
    """A template rendered with a view, keyed by the view's value."""
    views: Pinned[TermPage] = field(default_factory=lambda: Pinned(1 << 14))
    """A term's page view, by the identity of its loaded term, body and related terms."""
    view_pages: Pinned[str] = field(default_factory=lambda: Pinned(1 << 15))
    """A term's page, by the identity of its view."""
    entries: Pinned[tuple[str, Markup, Markup, str]] = field(default_factory=lambda: Pinned(1 << 16))
    """A term's entry in a list (name, link, definition), by its loaded term and the page it is on."""
    json_ld: Pinned[str] = field(default_factory=lambda: Pinned(1 << 14))
    """A term page's JSON-LD."""
    api_terms: Pinned[str] = field(default_factory=lambda: Pinned(1 << 14))
    """A term's text in glossary.json (site.api)."""
    export_chunks: Pinned[str] = field(default_factory=lambda: Pinned(1 << 15))
    """A term's part of llms-full.txt (site.export)."""
    bytecode: MemoryBytecodeCache = field(default_factory=MemoryBytecodeCache)
    """Compiled templates, ours and the theme's (Jinja checks each source's hash)."""
    builds: BuildMemory = field(default_factory=BuildMemory)
    """Which generated pages changed since the last completed build (the MkDocs adapter's)."""
