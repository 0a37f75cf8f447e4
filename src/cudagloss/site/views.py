"""What each template reads, as frozen dataclasses of plain values.

A template sees one view (its fields become the template's names) and reads attributes of
the nested ones (`entry.name`), so mypy checks every value a template is given. Views hold
plain values, frozen model objects (a Section, a Gate) and tuples of them: they compare and
hash by value,
which makes a view its own memo key (an unchanged page is looked up, not rendered again).
Markup fields are ready Markdown (links we computed, author Markdown with its raw HTML
shown as text); every other string is escaped when printed (environment.finalize).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from markupsafe import Markup

from cudagloss.model.display import short_gpu
from cudagloss.model.measurements import COMBINED
from cudagloss.model.term import Section
from cudagloss.site.availability_view import AvailabilityView
from cudagloss.site.cite_this import CiteThisView
from cudagloss.site.comparisons import ComparisonRow
from cudagloss.site.computed_view import ComputedView
from cudagloss.site.fleet import MeasuredBy, NodeGroup, NodeView
from cudagloss.site.overview import Highlight, Measured

# -- links to terms and sections ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TermEntry:
    """A link to a term from another page, with its definition beside it."""

    name: str
    href: Markup
    definition: Markup
    tooltip: str
    """The definition as plain text, for the link's title."""


@dataclass(frozen=True, slots=True)
class Related(TermEntry):
    links_here: bool
    """Listed because the other term links here, not because this term names it."""


@dataclass(frozen=True, slots=True)
class SectionLink:
    title: str
    href: Markup


# -- a term page (term.md.j2, and export_term.md.j2 for the exported glossary) -------------


@dataclass(frozen=True, slots=True)
class TermHeading:
    """The term's own words that a page prints as they are (escaped)."""

    name: str
    title: str
    error_strings: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Meet:
    """One 'Where you meet this' entry: a page of ours, an outside address, or no link."""

    label: str
    href: Markup | None
    internal: bool
    note: Markup


@dataclass(frozen=True, slots=True)
class SourceView:
    title: str
    url: Markup | None
    """None for an address a reader must not be sent to."""
    checked: str
    """What the link checker found: 'checked 2026-09-01', 'not yet checked', ... (link_checks.checked_phrase),
    and of the quote: '; quote checked 2026-09-01' (source_links.source_link)."""
    quote: str = ""
    """The source's words the term rests on, shown after it ('' where it has no quote)."""
    original_url: Markup | None = None
    """The source's own URL, where it has an archived copy (Robust Links' data-originalurl)."""
    version_url: Markup | None = None
    """The archived copy (data-versionurl); None where there is none a reader may follow."""
    version_date: str = ""
    """The copy's day, YYYY-MM-DD (data-versiondate)."""
    archive_shown: bool = False
    """url is the archived copy (the page has been found broken several runs in a row); the original is shown beside."""


@dataclass(frozen=True, slots=True)
class BylineView:
    written_by: str
    reviewed_by: str
    written_on: str
    last_checked_on: str


@dataclass(frozen=True, slots=True)
class ResultRow:
    """One cited result, one cell per column (a node, or a GPU model's nodes together), and its
    spread per GPU model with several cards."""

    description: str
    cells: tuple[Markup, ...]
    spreads: tuple[str, ...] = ()
    shown: Markup = field(default_factory=Markup)
    """Every node's value as the prose shows it: one number per GPU model (the export's line)."""


@dataclass(frozen=True, slots=True)
class CitedExperiment:
    """One cited experiment in a term's Measured section: its nodes side by side."""

    experiment: str
    href: Markup | None
    purpose: str
    note: Markup
    command: str
    nodes: tuple[NodeView, ...]
    failed_only: tuple[str, ...]
    """Nodes whose every run failed."""
    rows: tuple[ResultRow, ...]
    models: tuple[str, ...] = ()
    """The spread columns' headers: a GPU model measured on several cards ('Spread on NVIDIA
    H200, 2 cards'), and a card shown apart that ran it several times ('Spread over the 2 runs
    of card h200-3f1ceb1e')."""
    groups: tuple[NodeGroup, ...] = ()
    """The nodes by GPU model (cudagloss.site.fleet): a line and a column each, or per model."""


@dataclass(frozen=True, slots=True)
class ClaimNode:
    """One node a claim was judged on: where, and the values that decided it."""

    gpu: str
    node: str
    explanation: str


@dataclass(frozen=True, slots=True)
class ClaimView:
    """A claim in a term's Measured section: what it says, its condition, where it holds,
    where it does not (a build error; shown while previewing) and why it is unverified."""

    says: str
    holds: str
    holds_on: tuple[ClaimNode, ...]
    fails_on: tuple[ClaimNode, ...]
    unverified: str
    skipped: tuple[tuple[str, str], ...] = ()
    """(node, what it lacks) of nodes that measured only some of the claim's values."""
    silent: int = 0
    """Nodes that ran its experiments but recorded none of its values."""

    @property
    def mark(self) -> str:
        """The checklist's mark: ✓ holds wherever judged, ✗ fails somewhere, ? not verified."""
        return "✗" if self.fails_on else "✓" if self.holds_on else "?"

    @property
    def verdict(self) -> str:
        """The checklist's line: on how many cards of which GPU models it holds, fails or was
        not judged; with one card, that one card, never 'every'."""
        judged = (*self.holds_on, *self.fails_on)
        if not judged:
            return "Not verified"
        models = sorted({short_gpu(n.gpu) for n in judged})
        kind = f"{models[0]} card" if len(models) == 1 else "card"
        total = len(judged) + len(self.skipped)
        together = [n for n in judged if COMBINED in n.node]
        if total == 1 and self.holds_on and together:
            cards = self.holds_on[0].node.split(COMBINED)
            said = (
                f"Holds on the values of {len(cards)} {kind}s taken together ({', '.join(cards)}): "
                "no one card measured them all"
            )
        elif total == 1 and self.holds_on:
            said = f"Holds on the one {kind} that measured it ({self.holds_on[0].node})"
        elif len(self.holds_on) == total and not together:
            said = f"Holds on every card that measured it: {total} {kind}s"
        elif together:
            said = (
                f"Holds on {len(self.holds_on)} of {total} combinations of {kind}s (no one card measured every value)"
            )
        else:
            said = f"Holds on {len(self.holds_on)} of {total} {kind}{'s' if total != 1 else ''}"
        if self.fails_on:
            said += "; does not hold on " + ", ".join(n.node for n in self.fails_on)
        if self.skipped:
            said += "; not judged on " + ", ".join(node for node, _ in self.skipped)
        if self.silent:
            said += f"; {self.silent} other card{'s' if self.silent != 1 else ''} did not measure its values"
        return said


@dataclass(frozen=True, slots=True)
class TermPage:
    slug: str
    term: TermHeading
    definition: Markup
    body: Markup
    also_known_as: tuple[str, ...]
    section: SectionLink
    related: tuple[Related, ...]
    meet: tuple[Meet, ...]
    sources: tuple[SourceView, ...]
    measured: tuple[CitedExperiment, ...]
    measured_on: tuple[MeasuredBy, ...]
    """The nodes behind the page's numbers, by GPU model (cudagloss.site.fleet)."""
    """(node, GPU, date) of every node the page's numbers come from."""
    claims: tuple[ClaimView, ...]
    byline: BylineView
    url: Markup | None
    """The page's published address, when the site's URL is known."""
    cite: CiteThisView | None = None
    """BibTeX and CSL-JSON of the term, as fenced code blocks (templates/_cite.md.j2)."""
    comparisons: tuple[ComparisonRow, ...] = ()
    """The numbers behind each compare() of the body, card by card (site.comparisons)."""
    previous: Neighbour | None = None
    next: Neighbour | None = None
    """The terms before and after in the reading order (the sections, each in its stated order)."""
    report: Markup | None = None
    """A new issue in the repository, prefilled with the page's values and provenance (site/report.py)."""
    body_text: Markup | None = None
    """The body as the exports show it, its charts as tables; None where it has no chart."""
    computed: tuple[ComputedView | AvailabilityView, ...] = ()
    """The computed tables the term cites (site.computed_view), shown after the body."""


# -- the home page and section pages --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SectionEntry:
    title: str
    description: str
    href: Markup
    count: int


@dataclass(frozen=True, slots=True)
class Letter:
    """One letter of the A–Z list; the anchor is what the toc extension makes of its heading."""

    label: str
    anchor: Markup
    entries: tuple[TermEntry, ...]


@dataclass(frozen=True, slots=True)
class IndexPage:
    site_name: str
    sections: tuple[SectionEntry, ...]
    letters: tuple[Letter, ...]
    count: int
    measured: Measured | None = None
    highlights: tuple[Highlight, ...] = ()


@dataclass(frozen=True, slots=True)
class SectionPage:
    section: Section
    terms: tuple[TermEntry, ...]
    home: Markup


# -- measurement pages ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Neighbour:
    """A term before or after this one in the reading order."""

    name: str
    href: Markup
