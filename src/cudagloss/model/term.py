"""The term model: what an author may write in a term file, one typed field each.

This module is the single definition that the site hooks, the verifier and the link
checker share, so it imports nothing from MkDocs (and nothing outside the standard
library). Every field carries a short doc in its metadata; the JSON Schema that editors
validate against is generated from these classes (see :mod:`cudagloss.model.schema`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cudagloss.model.chart_spec import Chart, Diagram
from cudagloss.model.limits import (
    BODY_MAX,
    ITEMS_MAX,
    LINE_MAX,
    NAME_MAX,
    NOTE_MAX,
    RESULTS_MAX,
    SECTIONS_MAX,
    TERMS_MAX,
    URL_MAX,
    doc,
)
from cudagloss.model.source import PENDING as PENDING  # re-exported: the term model's users import them from here
from cudagloss.model.source import SLUG_PATTERN as SLUG_PATTERN
from cudagloss.model.source import URL_PATTERN as URL_PATTERN
from cudagloss.model.source import DateOrPending as DateOrPending
from cudagloss.model.source import Pending as Pending
from cudagloss.model.source import Source as Source
from cudagloss.model.source import is_slug as is_slug
from cudagloss.model.worked import WorkedExample

COMPUTED_MAX = 4
"""Computed tables one page may show."""
PLACEHOLDER = "FILL IN"
"""What `make new` writes at the start of each text the author must replace ('FILL-IN' in a
URL); `make check` reports every one left (cudagloss.check.placeholders)."""
PLACEHOLDER_PATTERN = r"\bFILL[ -]IN\b"
"""How the check finds it: in capitals, as `make new` writes it, so prose that asks a reader
to 'fill in' a form is not taken for one."""


@dataclass(frozen=True)
class MeetEntry:
    """A place where a reader runs into the term ("Where you meet this")."""

    label: str = field(
        metadata=doc("A short name for the place, e.g. 'cudaErrorNoKernelImageForDevice'.", max_length=LINE_MAX)
    )
    link: str | None = field(
        default=None,
        metadata=doc("Optional http(s) URL or slug of another term that the label links to.", max_length=URL_MAX),
    )
    note: str = field(
        default="", metadata=doc("Optional Markdown sentence saying what happens there.", max_length=NOTE_MAX)
    )


@dataclass(frozen=True)
class MeasurementCitation:
    """An experiment of the verifier whose results the term's page cites."""

    experiment: str = field(
        metadata=doc(
            "The experiment's id, as `make verify ARGS=--list` shows it.", pattern=SLUG_PATTERN, max_length=NAME_MAX
        )
    )
    note: str = field(default="", metadata=doc("Optional: why the term cites it.", max_length=NOTE_MAX))
    results: list[str] = field(
        default_factory=list,
        metadata=doc(
            "Optional: the results to show in the page's Measured table, by name (the experiment's "
            "measurement page lists them). Without it the table shows the results the body refers to.",
            max_items=RESULTS_MAX,
            max_length=NAME_MAX,
        ),
    )


@dataclass(frozen=True)
class Claim:
    """A conclusion the body draws from measured values, with the condition that makes it
    true; it is tested on every node that measured those values, and a failure stops the build."""

    says: str = field(
        metadata=doc(
            "The conclusion in words, as the body states it, e.g. 'starting the driver costs more than the JIT'.",
            max_length=LINE_MAX,
        )
    )
    holds: str = field(
        metadata=doc(
            "The condition over the term's cited values, e.g. "
            "'ptx-jit.cuinit_median > max(ptx-jit.load_jit_cold_cache_median, ptx-jit.load_warm_cache_median)'. "
            "Values are experiment.result; comparisons (< <= > >= == !=), and/or/not, + - * /, numbers, "
            '"text", true/false, max(...), min(...), floor(...), ceil(...) and differ(a, b) (the samples '
            "differ beyond noise).",
            max_length=NOTE_MAX,
        )
    )


@dataclass(frozen=True)
class Byline:
    """Who wrote and reviewed the term and when; each field stays 'pending' until known."""

    written_by: str = field(
        default=PENDING, metadata=doc("The author's name (no e-mail address), or 'pending'.", max_length=NAME_MAX)
    )
    reviewed_by: str = field(
        default=PENDING, metadata=doc("The reviewer's name (no e-mail address), or 'pending'.", max_length=NAME_MAX)
    )
    written_on: DateOrPending = field(
        default=PENDING, metadata=doc("The date the term was written (YYYY-MM-DD), or 'pending'.")
    )
    last_checked_on: DateOrPending = field(
        default=PENDING,
        metadata=doc("The date its sources were last found reachable (YYYY-MM-DD), or 'pending'."),
    )


@dataclass(frozen=True)
class Term:
    """One glossary term: one YAML file in terms/, one page on the site."""

    name: str = field(metadata=doc("The term as readers know it, e.g. 'JIT compilation'.", max_length=NAME_MAX))
    title: str = field(
        metadata=doc("The page's question title, e.g. 'What is CUDA JIT compilation?'.", max_length=LINE_MAX)
    )
    definition: str = field(
        metadata=doc(
            "One sentence that says what the term is; shown first on the page and as hover text.", max_length=NOTE_MAX
        )
    )
    section: str = field(
        metadata=doc(
            "Slug of the section the term belongs to (listed in terms/_sections.yaml).",
            pattern=SLUG_PATTERN,
            max_length=NAME_MAX,
        )
    )
    body: str = field(
        metadata=doc(
            "The explanation, in Markdown. Raw HTML is shown as text. A measured value is written "
            "{{ measured('experiment-id', 'result_name') }}; the page shows it with a link to its "
            "measurement. Two measured timings are compared by the noise rule with "
            "{{ compare('experiment.a', 'experiment.b') }}. A source is cited by its id, {{ cite('source-id') }}; "
            "a worked example by its id, {{ worked('id') }}, on a line of its own.",
            max_length=BODY_MAX,
        )
    )
    highlight: str = field(
        default="",
        metadata=doc(
            "One or two sentences of what the measurements show that a reader would not expect, with the "
            "values cited as in the body ({{ measured(...) }}, {{ compare(...) }}); the home page lists "
            "them under 'Measured, not typed'. Leave it out where nothing surprises.",
            max_length=NOTE_MAX,
        ),
    )
    aliases: list[str] = field(
        default_factory=list,
        metadata=doc(
            "Other names readers use; search finds them and bodies link them.", max_items=ITEMS_MAX, max_length=NAME_MAX
        ),
    )
    abbreviations: list[str] = field(
        default_factory=list,
        metadata=doc(
            "Short forms such as 'JIT'; all-capital forms are matched case-sensitively when linking.",
            max_items=ITEMS_MAX,
            max_length=NAME_MAX,
        ),
    )
    plurals: list[str] = field(
        default_factory=list,
        metadata=doc("Plural forms, linked like the name.", max_items=ITEMS_MAX, max_length=NAME_MAX),
    )
    error_strings: list[str] = field(
        default_factory=list,
        metadata=doc(
            "Exact error messages a reader may paste into search, e.g. "
            "'no kernel image is available for execution on the device'.",
            max_items=ITEMS_MAX,
            max_length=LINE_MAX,
        ),
    )
    related: list[str] = field(
        default_factory=list,
        metadata=doc("Slugs (file names without .yaml) of related terms.", max_items=ITEMS_MAX, max_length=NAME_MAX),
    )
    where_you_meet_this: list[MeetEntry] = field(
        default_factory=list,
        metadata=doc("Places where a reader meets the term: APIs, tools, error messages.", max_items=ITEMS_MAX),
    )
    sources: list[Source] = field(
        default_factory=list, metadata=doc("Public pages the facts come from.", max_items=ITEMS_MAX)
    )
    measurements: list[MeasurementCitation] = field(
        default_factory=list,
        metadata=doc("Experiments of the verifier whose results the page cites.", max_items=ITEMS_MAX),
    )
    computed: list[str] = field(
        default_factory=list,
        metadata=doc(
            "Files of the computed/ folder (names without .json, written by `make generations`), "
            "each shown as a table on the page.",
            max_items=COMPUTED_MAX,
            pattern=SLUG_PATTERN,
            max_length=NAME_MAX,
        ),
    )
    claims: list[Claim] = field(
        default_factory=list,
        metadata=doc(
            "Conclusions the body draws from measured values, each with the condition that must hold "
            "on every node that measured them.",
            max_items=ITEMS_MAX,
        ),
    )
    charts: list[Chart] = field(
        default_factory=list,
        metadata=doc(
            "Charts of cited experiments' results, each shown where the body writes {{ chart('id') }}.",
            max_items=ITEMS_MAX,
        ),
    )
    diagrams: list[Diagram] = field(
        default_factory=list,
        metadata=doc(
            "SVG drawings from diagrams/, each shown where the body writes {{ diagram('id') }}.", max_items=ITEMS_MAX
        ),
    )
    worked: list[WorkedExample] = field(
        default_factory=list,
        metadata=doc(
            "Calculations from measured values written out step by step, each placed in the body with "
            "{{ worked('id') }}, computed on every node and checked against what was measured.",
            max_items=ITEMS_MAX,
        ),
    )
    byline: Byline = field(default_factory=Byline, metadata=doc("Who wrote and reviewed the term and when."))


@dataclass(frozen=True)
class Section:
    """A group of terms with a page of its own; the sidebar lists sections, not terms."""

    slug: str = field(
        metadata=doc("The section's id, used by terms' `section` field.", pattern=SLUG_PATTERN, max_length=NAME_MAX)
    )
    title: str = field(metadata=doc("The section's heading, e.g. 'Compilation'.", max_length=NAME_MAX))
    description: str = field(
        default="", metadata=doc("One or two sentences shown under the heading.", max_length=NOTE_MAX)
    )
    terms: list[str] = field(
        default_factory=list,
        hash=False,  # a list: equality still compares it, so a memo keyed on a section sees a new order
        metadata=doc(
            "The reading order of the section's terms, by slug: each page links the one before and after. "
            "Terms not named follow, A-Z.",
            max_items=TERMS_MAX,
            max_length=NAME_MAX,
        ),
    )


@dataclass(frozen=True)
class SectionsFile:
    """terms/_sections.yaml: the sections, in the order the sidebar shows them."""

    sections: list[Section] = field(metadata=doc("The sections, in sidebar order.", max_items=SECTIONS_MAX))
