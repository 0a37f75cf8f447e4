"""`render --require-checked`: the publish job's rule that no page cites a source nobody has
found reachable. Off by default, as an author without network (or before `make links`) still
previews and builds; on in the publish job, which checks the sources first."""

from __future__ import annotations

from collections.abc import Iterator

from cudagloss.errors import Diagnostic
from cudagloss.model.corpus import Corpus
from cudagloss.model.link_checks import checked, checked_phrase

HINT = (
    "run `make links` to check and stamp it; a source that stays unreachable needs another "
    "address (or an archived copy) before the site is published"
)


def never_checked(corpus: Corpus) -> Iterator[Diagnostic]:
    """Each source no link check has found reachable: its checked_on, at its place."""
    for t in corpus:
        for i, source in enumerate(t.term.sources):
            if not checked(source.checked_on, source.url, corpus.link_checks):
                found = checked_phrase(source.checked_on, source.url, corpus.link_checks)
                where = f"sources[{i}].checked_on"
                line, col = t.positions.at(where) if where in t.positions.values else t.positions.at(f"sources[{i}]")
                yield Diagnostic(t.path, line, col, f"{where}: never found reachable ({found})", HINT)
