"""Loaded data: the terms of one folder, with where each came from, and lookups over them."""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from cudagloss.errors import Diagnostic
from cudagloss.model.computed_set import ComputedSet
from cudagloss.model.link_checks import LinkChecks
from cudagloss.model.measurements import MeasurementSet
from cudagloss.model.positions import Positions
from cudagloss.model.term import Section, Term


@dataclass(frozen=True)
class LoadedTerm:
    """A term as read from its file: the model plus its slug, file and value positions."""

    slug: str
    path: str
    """The file as shown in diagnostics (relative to the working directory when inside it)."""
    file: Path
    term: Term
    positions: Positions

    def at(self, where: str) -> tuple[int, int]:
        return self.positions.at(where)

    @property
    def surface_forms(self) -> list[str]:
        """Every way a body may mention this term: name, aliases, abbreviations, plurals."""
        t = self.term
        return [t.name, *t.aliases, *t.abbreviations, *t.plurals]


@dataclass(frozen=True)
class Fact:
    """A number about a GPU that terms may type because no GPU measures it: a fact of the
    programming model ('32 threads' in a warp), reviewed with the reason it holds."""

    text: str
    """The words as the check quotes them, e.g. '32 threads'."""
    reason: str
    terms: list[str] = field(default_factory=list)
    """The slugs of the terms that may type it; empty for every term."""


@dataclass(frozen=True)
class FactValue:
    """A reviewed number that no GPU measures, which a worked example names as fact.<id>: a
    definition of the programming model or of how operations are counted (an FMA is two FLOP)."""

    id: str
    """What a step writes after `fact.`: lower case, digits and underscores."""
    value: str
    """The number and its unit, e.g. '2 FLOP/clock/lane'."""
    reason: str


@dataclass(frozen=True)
class FactsFile:
    """terms/_facts.yml: the reviewed numbers about a GPU that terms may type, and the reviewed
    values that worked examples may name."""

    facts: list[Fact] = field(default_factory=list)
    values: list[FactValue] = field(default_factory=list)


@dataclass(frozen=True)
class Facts:
    """The facts file as loaded: its entries, where it is shown, and where each value is."""

    entries: list[Fact] = field(default_factory=list)
    path: str = ""
    positions: Positions = field(default_factory=Positions)
    values: list[FactValue] = field(default_factory=list)


@dataclass
class Corpus:
    """All terms of a glossary and its sections, in file-name order."""

    root: Path
    terms: list[LoadedTerm]
    sections: list[Section]
    sections_path: str = ""
    measurements: MeasurementSet | None = None
    """The measurement files the terms may cite; None when the glossary has none configured."""
    sections_positions: Positions = field(default_factory=Positions)
    """Where each value of the sections file is, for diagnostics ('sections[2].slug')."""
    warnings: list[Diagnostic] = field(default_factory=list)
    """What was found but does not stop a build (e.g. stale measurements); strict runs fail on it."""
    facts: Facts = field(default_factory=Facts)
    link_checks: LinkChecks | None = None
    """What the last link check run found (`render --link-report`), for the pages to say; None without one."""
    """The reviewed numbers about a GPU that the terms may type (the folder's _facts.yml)."""
    computed: ComputedSet | None = None
    """The tables of the computed/ folder that terms may cite; None when the glossary has none."""
    _by_slug: dict[str, LoadedTerm] = field(default_factory=dict, init=False, repr=False)
    _sorted: list[LoadedTerm] | None = field(default=None, init=False, repr=False)
    """The terms in A-Z order, once asked for (the home page, the exports and every measurement
    page ask; sorting 5,000 terms each time cost a tenth of a second per build)."""
    _reading: list[LoadedTerm] | None = field(default=None, init=False, repr=False)
    _position: dict[str, int] | None = field(default=None, init=False, repr=False)
    """The reading order and each slug's place in it, once asked for (every term page asks)."""

    def __post_init__(self) -> None:
        self._by_slug = {t.slug: t for t in self.terms}

    def __iter__(self) -> Iterator[LoadedTerm]:
        return iter(self.terms)

    def __len__(self) -> int:
        return len(self.terms)

    def __contains__(self, slug: object) -> bool:
        return slug in self._by_slug

    def get(self, slug: str) -> LoadedTerm | None:
        return self._by_slug.get(slug)

    def __getitem__(self, slug: str) -> LoadedTerm:
        return self._by_slug[slug]

    def section(self, slug: str) -> Section | None:
        return next((s for s in self.sections if s.slug == slug), None)

    def in_section(self, slug: str) -> list[LoadedTerm]:
        """The section's terms in its reading order: those its `terms` names, then the rest A-Z."""
        section = self.section(slug)
        mine = [t for t in self.alphabetical() if t.term.section == slug]
        stated = {s: i for i, s in enumerate(section.terms)} if section else {}
        return sorted(mine, key=lambda t: stated.get(t.slug, len(stated)))  # stable: the rest stay A-Z

    def reading_order(self) -> list[LoadedTerm]:
        """Every term as a reader goes through the glossary: the sections in order, each in its
        reading order; terms of an unknown section (a broken file) last. Worked out once."""
        if self._reading is None:
            ordered = [t for s in self.sections for t in self.in_section(s.slug)]
            placed = {t.slug for t in ordered}
            self._reading = ordered + [t for t in self.alphabetical() if t.slug not in placed]
        return list(self._reading)

    def neighbours(self, slug: str) -> tuple[LoadedTerm | None, LoadedTerm | None]:
        """The terms before and after slug in the reading order (None at either end)."""
        self.reading_order()
        order = self._reading or []
        if self._position is None:
            self._position = {t.slug: i for i, t in enumerate(order)}
        i = self._position[slug]
        return (order[i - 1] if i > 0 else None), (order[i + 1] if i + 1 < len(order) else None)

    def alphabetical(self) -> list[LoadedTerm]:
        if self._sorted is None:
            self._sorted = sorted(self.terms, key=sort_key)
        return list(self._sorted)


OTHERS = "0–9"
"""The index heading of names that do not start with a letter of A–Z (digits, symbols, Ω...)."""


_UNDECOMPOSED = str.maketrans(
    {"æ": "ae", "œ": "oe", "ø": "o", "ð": "d", "þ": "th", "ł": "l", "đ": "d", "ħ": "h", "ı": "i", "ŧ": "t"}
)
"""Latin letters that NFKD leaves whole, as a reader of an A–Z index files them."""


@functools.lru_cache(maxsize=1 << 16)
def _folded(name: str) -> str:
    """name as an A–Z index reads it: leading quotes dropped, case folded, accents removed
    ('Éclair' -> 'eclair', 'ẞx' -> 'ssx'); letters with no ASCII form ('Ω') are kept."""
    text = name.strip("\"'“”").casefold().translate(_UNDECOMPOSED)
    return "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))


def sort_key(term: LoadedTerm) -> tuple[bool, str, str, str]:
    """A–Z order by name, ignoring case, accents and leading quotes; names filed under
    OTHERS first, so that each index heading's terms stand together."""
    folded = _folded(term.term.name)
    return (_letter(folded) != OTHERS, folded, term.term.name.casefold(), term.slug)


def _letter(folded: str) -> str:
    first = folded[:1]
    return first.upper() if first.isascii() and first.isalpha() else OTHERS


def index_letter(term: LoadedTerm) -> str:
    """The A–Z index heading a term is listed under: the ASCII letter its first letter folds to
    ('É' under E, 'ẞ' under S), OTHERS for the rest. Headings become ASCII anchors."""
    return _letter(_folded(term.term.name))
