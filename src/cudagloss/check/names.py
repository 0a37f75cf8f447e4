"""Names: each name, alias, abbreviation and plural belongs to one term, and no two look alike.

Two forms clash when they are equal ignoring case, or when a reader could take one for the
other: equal TR39 skeletons ('PTX' and 'РТХ' with Cyrillic letters, 'ＰＴＸ' in fullwidth).
Forms are bucketed by skeleton, so 5,000 terms cost one pass, not all pairs. A look-alike
is reported at the disguised form (the one that is not its own skeleton, 'РТХ' rather than
'PTX'), and between two such (or two plain ones) at the later one.
"""

from __future__ import annotations

from collections.abc import Iterator

from cudagloss.errors import Diagnostic
from cudagloss.model.corpus import Corpus, LoadedTerm
from cudagloss.text.characters import disguised, form_problem, look_alike_key
from cudagloss.text.skeleton import skeleton

_FORMS = ("aliases", "abbreviations", "plurals")
_ONE_OWNER = "each name, alias, abbreviation and plural belongs to one term"


def _at(t: LoadedTerm, where: str, message: str, hint: str) -> Diagnostic:
    return Diagnostic(t.path, *t.at(where), f"{where}: {message}", hint)


def _claims(corpus: Corpus) -> list[tuple[LoadedTerm, str, str]]:
    """(term, field path, form): names first, so a clash is reported at the alias."""
    claims = [(t, "name", t.term.name) for t in corpus]
    for t in corpus:
        for field in _FORMS:
            claims += [(t, f"{field}[{i}]", value) for i, value in enumerate(getattr(t.term, field))]
    return claims


def name_diagnostics(corpus: Corpus) -> Iterator[Diagnostic]:
    """Forms that are not plain, forms used twice, and forms that look like another's."""
    exact: dict[str, tuple[LoadedTerm, str]] = {}
    alike: dict[str, tuple[LoadedTerm, str, str]] = {}
    for t, where, value in _claims(corpus):
        key = value.strip().casefold()
        if not key:
            continue
        problem = form_problem(value)
        if problem:
            yield _at(t, where, f"'{value}' {problem}", "names are matched as typed: write them in plain characters")
            continue
        if key in exact:
            other, other_where = exact[key]
            place = f"{other.path} ({other_where})" if other is not t else other_where
            yield _at(t, where, f"'{value}' is already used by {place}", _ONE_OWNER)
            continue
        exact[key] = (t, where)
        look = look_alike_key(value)
        if look in alike:
            other, other_where, other_value = alike[look]
            if disguised(other_value) and not disguised(value):
                alike[look] = (t, where, value)
                t, where, value, other, other_where, other_value = other, other_where, other_value, t, where, value
            place = f"{other.path} ({other_where})" if other is not t else other_where
            yield _at(
                t,
                where,
                f"'{value}' looks like '{other_value}' of {place}",
                "a reader cannot tell them apart: use another name, or make it an alias of that term",
            )
        else:
            alike[look] = (t, where, value)


def slug_diagnostics(all_slugs: dict[str, list[str]]) -> Iterator[Diagnostic]:
    """File names that look alike ('rn-cache' and 'm-cache', 'sm1' and 'sml')."""
    seen: dict[str, str] = {}
    for slug, paths in sorted(all_slugs.items(), key=lambda item: (item[1][0], item[0])):
        key = skeleton(slug)
        if key in seen:
            yield Diagnostic(
                paths[0],
                1,
                1,
                f"file name '{slug}' looks like '{seen[key]}'",
                "rename one of the two so a reader can tell their addresses apart",
            )
        else:
            seen[key] = slug
