"""Names: each name, alias, abbreviation and plural belongs to one term, and no two look alike.

Two forms clash when they are equal ignoring case, or when a reader could take one for the
other: equal TR39 skeletons ('PTX' and 'РТХ' with Cyrillic letters, 'ＰＴＸ' in fullwidth).
Forms are bucketed by skeleton, so 5,000 terms cost one pass, not all pairs. A look-alike
is reported at the disguised form (the one that is not its own skeleton, 'РТХ' rather than
'PTX'). Otherwise a clash between two files is reported in the file being changed, as
`blame` tells (cudagloss.load.changes: the one git sees as modified, else the newer), naming
the other; where it cannot tell, and within one file, at the later form (names come first,
so a name and an alias clash at the alias).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from cudagloss.check.entries import Entry, Form
from cudagloss.errors import Diagnostic
from cudagloss.text.skeleton import skeleton

_ONE_OWNER = "each name, alias, abbreviation and plural belongs to one term"

Blame = Callable[[str, str], str | None]
"""Of two term files (as entries name them), the one being changed, or None when it cannot be told."""


def _at(entry: Entry, form: Form, message: str, hint: str) -> Diagnostic:
    return Diagnostic(entry.path, *form.at, f"{form.where}: {message}", hint)


def _claims(entries: list[Entry]) -> list[tuple[Entry, Form]]:
    """(term, form): names first, so a clash is reported at the alias."""
    return [(e, e.forms[0]) for e in entries if e.forms] + [(e, f) for e in entries for f in e.forms[1:]]


def _first_to_blame(first: Entry, second: Entry, blame: Blame | None) -> bool:
    """Whether a clash between an earlier claim in first and a later one in second belongs
    in first: it is another file, and the one being changed."""
    return blame is not None and first is not second and blame(first.path, second.path) == first.path


def name_diagnostics(entries: Iterable[Entry], blame: Blame | None = None) -> Iterator[Diagnostic]:
    """Forms that are not plain, forms used twice, and forms that look like another's; each
    clash between two files in the one blame names, when it names one."""
    exact: dict[str, tuple[Entry, Form]] = {}
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
            other, other_form = exact[key]
            if _first_to_blame(other, t, blame):  # the other file keeps the form, as if it came first
                exact[key] = (t, form)
                t, form, other, other_form = other, other_form, t, form
            place = f"{other.path} ({other_form.where})" if other is not t else other_form.where
            yield _at(t, form, f"'{form.value}' is already used by {place}", _ONE_OWNER)
            continue
        exact[key] = (t, form)
        if form.look in alike:
            other, other_form = alike[form.look]
            disguise = other_form.disguised != form.disguised  # then at the disguised one, wherever it is
            if other_form.disguised if disguise else _first_to_blame(other, t, blame):
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
