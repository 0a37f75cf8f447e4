"""The JSON API's model: what `glossary.json` at the site's root holds, one typed field each.

Other tools read the glossary from this file rather than from its pages, so it has a format
version and a JSON Schema generated from these classes (schema/glossary.schema.json, through
:mod:`cudagloss.model.schema`); every field is always present (null where unknown), so the
schema requires them all. The site stage fills it (cudagloss.site.api). A value is never
invented: one no node measured is null with `measured: false`.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Literal

from cudagloss.model.limits import doc
from cudagloss.model.measurement import Value
from cudagloss.model.term import SLUG_PATTERN, Byline

API_FORMAT: Literal[1] = 1
"""Raised when a field is removed or changes meaning; adding a field keeps it."""

_URL = "The address: absolute when the site's URL is known, else relative to the site's root."


@dataclass(frozen=True)
class ApiGenerator:
    """What wrote the file."""

    name: str = field(metadata=doc("Always 'cudagloss'."))
    version: str = field(metadata=doc("The cudagloss version."))


@dataclass(frozen=True)
class ApiSite:
    """The site the file belongs to."""

    name: str = field(metadata=doc("The site's name."))
    url: str | None = field(metadata=doc("The site's published address, or null where it was not configured."))


@dataclass(frozen=True)
class ApiSection:
    """A section of the glossary, in sidebar order."""

    slug: str = field(metadata=doc("The section's id.", pattern=SLUG_PATTERN))
    title: str = field(metadata=doc("Its heading."))
    description: str = field(metadata=doc("One or two sentences (Markdown)."))
    url: str = field(metadata=doc(_URL))


@dataclass(frozen=True)
class ApiSectionRef:
    """The section a term belongs to."""

    slug: str = field(metadata=doc("The section's id.", pattern=SLUG_PATTERN))
    title: str = field(metadata=doc("Its heading (the slug where the sections file lacks it)."))


@dataclass(frozen=True)
class ApiDefinition:
    """The term's one-sentence definition."""

    text: str = field(metadata=doc("As plain text (what hover text shows)."))
    markdown: str = field(metadata=doc("As the author wrote it (Markdown)."))


@dataclass(frozen=True)
class ApiSource:
    """A public page the term's facts come from."""

    title: str = field(metadata=doc("The source's title."))
    url: str | None = field(metadata=doc("Its http(s) address; null where it is not one a reader may be sent to."))
    id: str | None = field(metadata=doc("The id the body cites it by, or null.", pattern=SLUG_PATTERN))
    checked_on: dt.date | None = field(
        metadata=doc("The day the link checker last found it reachable, or null when not yet checked.")
    )
    quote: str | None = field(
        default=None, metadata=doc("The source's own words the term rests on, or null where it has no quote.")
    )
    quote_checked_on: dt.date | None = field(
        default=None, metadata=doc("The day the link checker last found the quote on the page, or null.")
    )
    archived_url: str | None = field(
        default=None, metadata=doc("An archived copy of the page (a Wayback Machine snapshot), or null.")
    )
    archived_on: dt.date | None = field(default=None, metadata=doc("The day of that archived copy, or null."))


@dataclass(frozen=True)
class ApiValue:
    """One cited value as one node measured it, with where it comes from."""

    experiment: str = field(metadata=doc("The experiment's id.", pattern=SLUG_PATTERN))
    result: str = field(metadata=doc("The result's name within the experiment."))
    description: str = field(metadata=doc("What the result is, as the measurement file describes it."))
    node: str = field(metadata=doc("The node that measured it."))
    gpu: str = field(metadata=doc("The node's GPU, as the driver names it."))
    measured_on: dt.date | None = field(metadata=doc("The day of the node's run, or null where it is not recorded."))
    stale: bool = field(metadata=doc("The experiment's code changed after this run: measure it again."))
    measured: bool = field(metadata=doc("False where this node has no value for the result (value is then null)."))
    value: Value = field(metadata=doc("The value as measured (a median for timings); null when not measured."))
    unit: str = field(metadata=doc("Its unit ('' for counts, yes/no and text)."))
    text: str = field(metadata=doc("The value as the page shows it, e.g. '17.3 ms' or 'not measured'."))
    url: str = field(metadata=doc("The value's row on its measurement page. " + _URL))
    anchor: str = field(metadata=doc("The row's id on that page."))


@dataclass(frozen=True)
class ApiShown:
    """One cited result as prose shows it, however many cards measured it."""

    result: str = field(metadata=doc("The result's name within the experiment."))
    text: str = field(
        metadata=doc(
            "The one number the page shows: the value where the cards agree (one card's own, never pooled), else a "
            "range with the count of cards ('13.4–19.8 ms on 2 H200s'), discrete values that differ as differing; "
            "'not measured' where none did."
        )
    )
    gpu: str | None = field(metadata=doc("The GPU model the text speaks for (the one most cards share); null if none."))
    varies_by_gpu: bool = field(metadata=doc("Other GPU models measured other values: see `values`."))
    nodes: int = field(
        metadata=doc(
            "How many distinct cards ran the experiment (a node is one card; each one's value is in `values`)."
        )
    )
    runs: int = field(default=0, metadata=doc("How many good runs those cards kept (a card's re-runs count here)."))


@dataclass(frozen=True)
class ApiCitation:
    """An experiment the term cites, with every value of it that the page shows."""

    experiment: str = field(metadata=doc("The experiment's id.", pattern=SLUG_PATTERN))
    note: str = field(metadata=doc("Why the term cites it (Markdown; '' when not said)."))
    url: str | None = field(metadata=doc("Its measurement page, or null where nothing was recorded. " + _URL))
    command: str = field(metadata=doc("The command that measures it on a GPU node."))
    values: list[ApiValue] = field(
        metadata=doc("Each shown result on each node that measured the experiment; empty when none did.")
    )
    shown: list[ApiShown] = field(
        metadata=doc("Each shown result once, as the page's prose shows it (one number per GPU model).")
    )


@dataclass(frozen=True)
class ApiTerm:
    """One term, as its page shows it."""

    slug: str = field(metadata=doc("The term's id (its file name).", pattern=SLUG_PATTERN))
    url: str = field(metadata=doc("Its page. " + _URL))
    name: str = field(metadata=doc("The term as readers know it."))
    title: str = field(metadata=doc("The page's question title."))
    aliases: list[str] = field(metadata=doc("Other names readers use."))
    abbreviations: list[str] = field(metadata=doc("Short forms."))
    plurals: list[str] = field(metadata=doc("Plural forms."))
    error_strings: list[str] = field(metadata=doc("Exact error messages that mean this term."))
    definition: ApiDefinition = field(metadata=doc("The one-sentence definition."))
    section: ApiSectionRef = field(metadata=doc("Its section."))
    related: list[str] = field(metadata=doc("Slugs of the terms it names as related, in its order."))
    linked_from: list[str] = field(metadata=doc("Slugs of the terms that link to it or name it as related, sorted."))
    sources: list[ApiSource] = field(metadata=doc("Its sources, in its order."))
    byline: Byline = field(metadata=doc("Who wrote and reviewed it and when, as written ('pending' until known)."))
    measurements: list[ApiCitation] = field(metadata=doc("The experiments it cites, in its order."))


@dataclass(frozen=True)
class ApiNode:
    """One node's runs of an experiment: a node is one card."""

    node: str = field(metadata=doc("The node's name; it names one card, for good."))
    gpu: str = field(metadata=doc("Its GPU, as the driver names it."))
    measured_on: dt.date | None = field(metadata=doc("The day of its last good run, or null where there is none."))
    stale: bool = field(metadata=doc("The experiment's code changed after that run."))
    failed_since: bool = field(metadata=doc("Its latest run failed (the values shown come from the good one)."))
    json_url: str | None = field(metadata=doc("The good run's raw JSON, or null. " + _URL))
    failed_json_url: str | None = field(metadata=doc("The failed run's raw JSON, or null. " + _URL))
    card: str | None = field(default=None, metadata=doc("The card's GPU UUID, or null where not recorded."))
    runs: int = field(
        default=0, metadata=doc("Its good runs kept: the latest, whose values pages show, and earlier ones.")
    )
    earlier_json_urls: list[str] = field(
        default_factory=list, metadata=doc("The earlier good runs' raw JSON, newest first. " + _URL)
    )


@dataclass(frozen=True)
class ApiExperiment:
    """An experiment of the verifier with a measurement page."""

    id: str = field(metadata=doc("The experiment's id.", pattern=SLUG_PATTERN))
    purpose: str = field(metadata=doc("What it measures."))
    url: str = field(metadata=doc("Its measurement page. " + _URL))
    nodes: list[ApiNode] = field(metadata=doc("The nodes that ran it, in node order."))
    cited_by: list[str] = field(metadata=doc("Slugs of the terms that cite it, alphabetical by name."))


@dataclass(frozen=True)
class GlossaryApi:
    """glossary.json: every term with its URL, names, definition, section, sources and cited values."""

    format: Literal[1] = field(metadata=doc("The file's format version."))
    generator: ApiGenerator = field(metadata=doc("What wrote the file."))
    site: ApiSite = field(metadata=doc("The site."))
    count: int = field(metadata=doc("How many terms there are."))
    sections: list[ApiSection] = field(metadata=doc("The sections, in sidebar order."))
    terms: list[ApiTerm] = field(metadata=doc("Every term, alphabetical by name as the home page lists them."))
    experiments: list[ApiExperiment] = field(metadata=doc("Every experiment with a measurement page."))
