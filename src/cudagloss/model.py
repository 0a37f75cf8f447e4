"""The term model: what an author may write in a term file, one typed field each.

This module is the single definition that the site hooks, the verifier and the link
checker share, so it imports nothing from MkDocs (and nothing outside the standard
library). Every field carries a short doc in its metadata; the JSON Schema that editors
validate against is generated from these classes (see :mod:`cudagloss.schema`).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Any, Literal

PENDING: Literal["pending"] = "pending"
"""The value of a byline or stamp field that nobody knows yet."""

Pending = Literal["pending"]
DateOrPending = _dt.date | Pending

SLUG_PATTERN = r"^[a-z0-9]+(-[a-z0-9]+)*$"
URL_PATTERN = r"^https?://"


def doc(text: str, **extra: Any) -> dict[str, Any]:
    """Field metadata: the doc string, plus optional JSON Schema extras (e.g. pattern)."""
    return {"doc": text, **extra}


@dataclass(frozen=True)
class Source:
    """A public page a term's facts come from."""

    title: str = field(metadata=doc("What the source is, as a reader would name it."))
    url: str = field(metadata=doc("Where it is; http or https only.", pattern=URL_PATTERN, format="uri"))
    checked_on: DateOrPending = field(
        default=PENDING,
        metadata=doc(
            "The date (YYYY-MM-DD) the link checker last found the URL reachable, or "
            "'pending'. Written by `make links`; authors leave it alone."
        ),
    )


@dataclass(frozen=True)
class MeetEntry:
    """A place where a reader runs into the term ("Where you meet this")."""

    label: str = field(metadata=doc("A short name for the place, e.g. 'cudaErrorNoKernelImageForDevice'."))
    link: str | None = field(
        default=None,
        metadata=doc("Optional http(s) URL or slug of another term that the label links to."),
    )
    note: str = field(default="", metadata=doc("Optional Markdown sentence saying what happens there."))


@dataclass(frozen=True)
class MeasurementCitation:
    """An experiment of the verifier whose results the term's page cites."""

    experiment: str = field(
        metadata=doc("The experiment's id, as `make verify --list` shows it.", pattern=SLUG_PATTERN)
    )
    note: str = field(default="", metadata=doc("Optional: why the term cites it."))
    results: list[str] = field(
        default_factory=list,
        metadata=doc(
            "Optional: the results to show in the page's Measured table, by name (the experiment's "
            "measurement page lists them). Without it the table shows the results the body refers to."
        ),
    )


@dataclass(frozen=True)
class Byline:
    """Who wrote and reviewed the term and when; each field stays 'pending' until known."""

    written_by: str = field(default=PENDING, metadata=doc("The author's name, or 'pending'."))
    reviewed_by: str = field(default=PENDING, metadata=doc("The reviewer's name, or 'pending'."))
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

    name: str = field(metadata=doc("The term as readers know it, e.g. 'JIT compilation'."))
    title: str = field(metadata=doc("The page's question title, e.g. 'What is CUDA JIT compilation?'."))
    definition: str = field(
        metadata=doc("One sentence that says what the term is; shown first on the page and as hover text.")
    )
    section: str = field(
        metadata=doc("Slug of the section the term belongs to (listed in terms/_sections.yaml).", pattern=SLUG_PATTERN)
    )
    body: str = field(
        metadata=doc(
            "The explanation, in Markdown. Raw HTML is shown as text. A measured value is written "
            "{{ measured('experiment-id', 'result_name') }}; the page shows it with a link to its "
            "measurement."
        )
    )
    aliases: list[str] = field(
        default_factory=list, metadata=doc("Other names readers use; search finds them and bodies link them.")
    )
    abbreviations: list[str] = field(
        default_factory=list,
        metadata=doc("Short forms such as 'JIT'; all-capital forms are matched case-sensitively when linking."),
    )
    plurals: list[str] = field(default_factory=list, metadata=doc("Plural forms, linked like the name."))
    error_strings: list[str] = field(
        default_factory=list,
        metadata=doc(
            "Exact error messages a reader may paste into search, e.g. "
            "'no kernel image is available for execution on the device'."
        ),
    )
    related: list[str] = field(default_factory=list, metadata=doc("Slugs (file names without .yaml) of related terms."))
    where_you_meet_this: list[MeetEntry] = field(
        default_factory=list, metadata=doc("Places where a reader meets the term: APIs, tools, error messages.")
    )
    sources: list[Source] = field(default_factory=list, metadata=doc("Public pages the facts come from."))
    measurements: list[MeasurementCitation] = field(
        default_factory=list, metadata=doc("Experiments of the verifier whose results the page cites.")
    )
    byline: Byline = field(default_factory=Byline, metadata=doc("Who wrote and reviewed the term and when."))


@dataclass(frozen=True)
class Section:
    """A group of terms with a page of its own; the sidebar lists sections, not terms."""

    slug: str = field(metadata=doc("The section's id, used by terms' `section` field.", pattern=SLUG_PATTERN))
    title: str = field(metadata=doc("The section's heading, e.g. 'Compilation'."))
    description: str = field(default="", metadata=doc("One or two sentences shown under the heading."))


@dataclass(frozen=True)
class SectionsFile:
    """terms/_sections.yaml: the sections, in the order the sidebar shows them."""

    sections: list[Section] = field(metadata=doc("The sections, in sidebar order."))
