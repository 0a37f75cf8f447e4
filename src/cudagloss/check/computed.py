"""A term's `computed:`: each name a file of the computed folder that reads as a table
(cudagloss.model.computed); a name with no file is an error at its item, with the names there are."""

from __future__ import annotations

from collections.abc import Iterator

from cudagloss.errors import Diagnostic, did_you_mean
from cudagloss.model.computed_set import ComputedSet
from cudagloss.model.corpus import LoadedTerm
from cudagloss.model.term import is_slug


def _d(term: LoadedTerm, where: str, message: str, hint: str = "") -> Diagnostic:
    line, col = term.at(where)
    return Diagnostic(term.path, line, col, f"{where}: {message}", hint)


def computed_diagnostics(t: LoadedTerm, computed: ComputedSet | None) -> Iterator[Diagnostic]:
    """Each name of `computed:` names a file of the computed folder that reads as a table."""
    seen: set[str] = set()
    for i, name in enumerate(t.term.computed):
        where = f"computed[{i}]"
        if not is_slug(name):
            yield _d(t, where, f"'{name}' is not a computed file's name", "names are lower case with dashes")
            continue
        if name in seen:
            yield _d(t, where, f"'{name}' is cited twice", "remove the repeated item")
            continue
        seen.add(name)
        if computed is None:  # a glossary without a computed folder (as without measurements)
            continue
        names = computed.names()
        if name not in names:
            there = ", ".join(names) if names else "none"
            yield _d(
                t,
                where,
                f"no computed file '{name}'{did_you_mean(name, names)}",
                f"the computed folder holds: {there} (`make generations` writes them)",
            )
            continue
        yield from computed.get(name)[1]
