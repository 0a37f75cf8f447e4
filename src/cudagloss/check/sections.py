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
    entries = list(entries)
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
    yield from _reading_order(corpus, entries)


def _reading_order(corpus: Corpus, entries: Iterable[Entry]) -> Iterator[Diagnostic]:
    """A section's `terms` names each of its own terms once: not a term of another section, not
    a slug no term has (a renamed file leaves one behind). Warnings: a wrong name only moves a
    term in the reading order (it follows A-Z), so the preview keeps every page while a term
    is renamed or moved; `make check --strict` still fails on them."""
    section_of = {e.slug: e.section.value for e in entries}
    for i, section in enumerate(corpus.sections):
        named: set[str] = set()
        for j, slug in enumerate(section.terms):
            where = f"sections[{i}].terms[{j}]"
            problem, hint = "", ""
            if slug in named:
                problem, hint = f"'{shown(slug)}' is named twice", "name each term once"
            elif slug not in section_of:
                problem = f"no term '{shown(slug)}'{did_you_mean(slug, section_of)}"
                hint = "name a term by its file name without .yaml"
            elif section_of[slug] != section.slug:
                problem = f"'{slug}' is in section '{section_of[slug]}', not '{section.slug}'"
                hint = f"list it under its own section, or change its `section` to '{section.slug}'"
            named.add(slug)
            if problem:
                line, col = corpus.sections_positions.at(where)
                yield Diagnostic(corpus.sections_path, line, col, f"{where}: {problem}", hint, warning=True)
