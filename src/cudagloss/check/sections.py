"""The sections file (terms/_sections.yaml) checked, and every term's section against it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from cudagloss.check.entries import Entry
from cudagloss.check.fields import emails, shown
from cudagloss.errors import Diagnostic, did_you_mean
from cudagloss.model.corpus import Corpus
from cudagloss.model.term import is_slug
from cudagloss.text.skeleton import skeleton


def section_diagnostics(corpus: Corpus, entries: Iterable[Entry]) -> Iterator[Diagnostic]:
    """Each section's slug is a slug, listed once and not a lookalike of another; no
    e-mail address in a section; every term names a section that is listed."""
    known = [s.slug for s in corpus.sections]
    seen: dict[str, str] = {}
    for i, slug in enumerate(known):
        where = f"sections[{i}].slug"
        line, col = corpus.sections_positions.at(where)
        if not is_slug(slug):
            yield Diagnostic(
                corpus.sections_path,
                line,
                col,
                f"{where}: '{shown(slug)}' is not a slug",
                "write it in lower case with dashes, e.g. 'memory-model'",
            )
        elif slug in seen.values():
            yield Diagnostic(
                corpus.sections_path, line, col, f"sections[{i}]: duplicate section '{slug}'", "remove one of the two"
            )
        elif skeleton(slug) in seen:
            yield Diagnostic(
                corpus.sections_path,
                line,
                col,
                f"{where}: '{slug}' looks like '{seen[skeleton(slug)]}'",
                "rename one of the two so a reader can tell them apart",
            )
        seen.setdefault(skeleton(slug), slug)
    for e in entries:
        if e.section.value not in known:
            yield Diagnostic(
                e.path,
                *e.section.at,
                f"section: no section '{e.section.value}'{did_you_mean(e.section.value, known)}",
                f"sections are listed in {corpus.sections_path}: {', '.join(known)}",
            )
    for i, section in enumerate(corpus.sections):
        yield from emails(corpus.sections_path, section, corpus.sections_positions, f"sections[{i}]")
