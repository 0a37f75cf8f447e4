"""What the checks that span files need of each term, apart from the term itself.

Names, slugs, sections, related terms, links to other terms and dates against today are
checked over the whole corpus; everything else about a term depends on its file alone (and
on the measurements and facts, the same for every term). An `Entry` holds the first kind's
inputs, with their positions and what the name checks derive from each form, so that a term
whose file has not changed needs no parsing for `cudagloss check` (see cudagloss.load.cache).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, NamedTuple

from cudagloss.check.fields import walk
from cudagloss.model.corpus import LoadedTerm
from cudagloss.text.characters import disguised, form_problem, look_alike_key

FORMS = ("aliases", "abbreviations", "plurals")
At = tuple[int, int]


class Form(NamedTuple):
    """A name, alias, abbreviation or plural, with what the name checks derive from it."""

    where: str
    value: str
    at: At
    problem: str
    look: str
    disguised: bool


class Ref(NamedTuple):
    """A value that names another term (related[i], a link that is no URL) or a date."""

    where: str
    value: str
    at: At


@dataclass(frozen=True)
class Entry:
    slug: str
    path: str
    forms: tuple[Form, ...]
    """The name first, then aliases, abbreviations and plurals, in file order."""
    section: Ref
    related: tuple[Ref, ...]
    term_links: tuple[Ref, ...]
    """where_you_meet_this links with neither ':' nor '/': slugs of other terms, or mistakes."""
    dates: tuple[Ref, ...]
    """Every date of the term as ISO text, for the check against today."""

    def to_json(self) -> dict[str, Any]:
        return {
            "slug": self.slug,
            "path": self.path,
            "forms": [[f.where, f.value, *f.at, f.problem, f.look, f.disguised] for f in self.forms],
            "section": _ref_json(self.section),
            "related": [_ref_json(r) for r in self.related],
            "term_links": [_ref_json(r) for r in self.term_links],
            "dates": [_ref_json(r) for r in self.dates],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Entry:
        """The entry written by to_json; any other shape raises (KeyError, TypeError, ValueError)."""
        forms = tuple(
            Form(as_str(w), as_str(v), (as_int(line), as_int(col)), as_str(p), as_str(k), d is True)
            for w, v, line, col, p, k, d in data["forms"]
        )
        return cls(
            as_str(data["slug"]),
            as_str(data["path"]),
            forms,
            _ref(data["section"]),
            tuple(_ref(r) for r in data["related"]),
            tuple(_ref(r) for r in data["term_links"]),
            tuple(_ref(r) for r in data["dates"]),
        )


def entry_of(t: LoadedTerm) -> Entry:
    """The cross-file inputs of a loaded term."""
    term = t.term
    values = [("name", term.name)]
    for field in FORMS:
        values += [(f"{field}[{i}]", v) for i, v in enumerate(getattr(term, field))]
    forms = tuple(_form(t, where, value) for where, value in values)
    links = [
        Ref(f"where_you_meet_this[{i}].link", m.link, t.at(f"where_you_meet_this[{i}].link"))
        for i, m in enumerate(term.where_you_meet_this)
        if m.link is not None and ":" not in m.link and "/" not in m.link
    ]
    dates = [
        Ref(where, value.isoformat(), t.at(where)) for where, _, value in walk(term, "") if isinstance(value, dt.date)
    ]
    return Entry(
        t.slug,
        t.path,
        forms,
        Ref("section", term.section, t.at("section")),
        tuple(Ref(f"related[{i}]", slug, t.at(f"related[{i}]")) for i, slug in enumerate(term.related)),
        tuple(links),
        tuple(dates),
    )


def _form(t: LoadedTerm, where: str, value: str) -> Form:
    problem = form_problem(value) or ""
    plain = bool(value.strip()) and not problem
    return Form(where, value, t.at(where), problem, look_alike_key(value) if plain else "", plain and disguised(value))


def _ref_json(ref: Ref) -> list[Any]:
    return [ref.where, ref.value, *ref.at]


def _ref(data: list[Any]) -> Ref:
    where, value, line, col = data
    return Ref(as_str(where), as_str(value), (as_int(line), as_int(col)))


def as_str(value: object) -> str:
    """value, when it is a str (read back from JSON that may have been tampered with)."""
    if type(value) is not str:
        raise TypeError("not a string")
    return value


def as_int(value: object) -> int:
    """value, when it is an int and not a bool."""
    if type(value) is not int:
        raise TypeError("not an integer")
    return value
