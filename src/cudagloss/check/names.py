"""Names: each name, alias, abbreviation and plural belongs to one term, and no two look alike.

Two forms clash when they are equal ignoring case, or when a reader could take one for the
other: equal TR39 skeletons ('PTX' and 'РТХ' with Cyrillic letters, 'ＰＴＸ' in fullwidth).
Forms are bucketed by skeleton, so 5,000 terms cost one pass, not all pairs. A look-alike
is reported at the disguised form (the one that is not its own skeleton, 'РТХ' rather than
'PTX'), and between two such (or two plain ones) at the later one.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from cudagloss.check.entries import Entry, Form
from cudagloss.errors import Diagnostic
from cudagloss.text.skeleton import skeleton

_ONE_OWNER = "each name, alias, abbreviation and plural belongs to one term"


def _at(entry: Entry, form: Form, message: str, hint: str) -> Diagnostic:
    return Diagnostic(entry.path, *form.at, f"{form.where}: {message}", hint)


def _claims(entries: list[Entry]) -> list[tuple[Entry, Form]]:
    """(term, form): names first, so a clash is reported at the alias."""
    return [(e, e.forms[0]) for e in entries if e.forms] + [(e, f) for e in entries for f in e.forms[1:]]


def name_diagnostics(entries: Iterable[Entry]) -> Iterator[Diagnostic]:
    """Forms that are not plain, forms used twice, and forms that look like another's."""
    exact: dict[str, tuple[Entry, str]] = {}
    alike: dict[str, tuple[Entry, Form]] = {}
    for t, form in _claims(list(entries)):
        value = form.value
        key = value.strip().casefold()
        if not key:
            continue
        if form.problem:
            yield _at(
                t, form, f"'{value}' {form.problem}", "names are matched as typed: write them in plain characters"
            )
            continue
        if key in exact:
            other, other_where = exact[key]
            place = f"{other.path} ({other_where})" if other is not t else other_where
            yield _at(t, form, f"'{value}' is already used by {place}", _ONE_OWNER)
            continue
        exact[key] = (t, form.where)
        if form.look in alike:
            other, other_form = alike[form.look]
            if other_form.disguised and not form.disguised:
                alike[form.look] = (t, form)
                t, form, other, other_form = other, other_form, t, form
            place = f"{other.path} ({other_form.where})" if other is not t else other_form.where
            yield _at(
                t,
                form,
                f"'{form.value}' looks like '{other_form.value}' of {place}",
                "a reader cannot tell them apart: use another name, or make it an alias of that term",
            )
        else:
            alike[form.look] = (t, form)


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
