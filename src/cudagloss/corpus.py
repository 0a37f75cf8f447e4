"""Loaded data: the terms of one folder, with where each came from, and lookups over them."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .convert import Positions
from .diagnostics import Diagnostic
from .measured import MeasurementSet
from .model import Section, Term


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
    _by_slug: dict[str, LoadedTerm] = field(default_factory=dict, init=False, repr=False)

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
        return sorted((t for t in self.terms if t.term.section == slug), key=sort_key)

    def alphabetical(self) -> list[LoadedTerm]:
        return sorted(self.terms, key=sort_key)


def sort_key(term: LoadedTerm) -> tuple[str, str]:
    """A–Z order by name, ignoring case and leading quotes."""
    return (term.term.name.strip("\"'“”").casefold(), term.slug)


def index_letter(term: LoadedTerm) -> str:
    """The A–Z index heading a term is listed under ('0–9' for names starting otherwise)."""
    first = term.term.name.strip("\"'“”")[:1].upper()
    return first if first.isalpha() else "0–9"
