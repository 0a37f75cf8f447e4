"""Load and check a whole terms folder: each file on its own, then the checks across files.

`load_corpus` gives the site every term; `check_corpus` gives `cudagloss check` only the
verdict, so a file whose bytes are unchanged since the last run (see cudagloss.load.cache)
is neither parsed nor checked again, and 5,000 unchanged terms cost about as much as reading
them. Both run the same checks in the same order and report the same diagnostics.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from cudagloss.check.entries import Entry, entry_of
from cudagloss.check.typed_numbers import fact_mistakes
from cudagloss.check.validate import corpus_diagnostics, term_diagnostics
from cudagloss.check.worked import fact_value_mistakes
from cudagloss.errors import Diagnostic, GlossaryError, display_path
from cudagloss.files.inside import first_link
from cudagloss.load.cache import CheckCache, Checked, context_digest, digest, folder_digest
from cudagloss.load.changes import Changes
from cudagloss.load.facts import FACTS_FILE, load_facts
from cudagloss.load.terms import (
    folder_mistake,
    load_sections_at,
    read_term_file,
    shown_in,
    shown_path,
    term_files,
    term_from_text,
)
from cudagloss.model.chart_spec import DIAGRAMS_DIR
from cudagloss.model.computed_set import ComputedSet
from cudagloss.model.corpus import Corpus, LoadedTerm
from cudagloss.model.measurements import MeasurementSet


@dataclass
class CheckReport:
    """What `cudagloss check` says when nothing is wrong."""

    terms: int
    sections: int
    warnings: list[Diagnostic] = field(default_factory=list)
    summarised_before: list[str] = field(default_factory=list)
    """The files made by today's recipe but summarised by older code, with no raw samples to
    derive again (NodeRun.summarised_before): not a mistake, said so the next run is planned."""


def load_corpus(
    folder: Path,
    root: Path | None = None,
    *,
    measurements: MeasurementSet | None = None,
    found_before: list[Diagnostic] | None = None,
    cache: bool = True,
    computed: ComputedSet | None = None,
) -> Corpus:
    """Load all terms of folder and check them (and their citations of measurements); raise
    GlossaryError with every mistake, including found_before (e.g. from the measurement
    files). Warnings alone do not raise: they are kept on the corpus."""
    corpus, _ = _run(folder, root, measurements, found_before, need_terms=True, cache=cache, computed=computed)
    return corpus


def check_corpus(
    folder: Path,
    root: Path | None = None,
    *,
    measurements: MeasurementSet | None = None,
    found_before: list[Diagnostic] | None = None,
    cache: bool = True,
    computed: ComputedSet | None = None,
) -> CheckReport:
    """load_corpus's verdict without the terms: raises the same GlossaryError, else reports
    how many terms and sections there are and the warnings."""
    corpus, count = _run(folder, root, measurements, found_before, need_terms=False, cache=cache, computed=computed)
    return CheckReport(count, len(corpus.sections), corpus.warnings)


def _run(
    folder: Path,
    root: Path | None,
    measurements: MeasurementSet | None,
    found_before: list[Diagnostic] | None,
    *,
    need_terms: bool,
    cache: bool,
    computed: ComputedSet | None = None,
) -> tuple[Corpus, int]:
    mistake = folder_mistake(folder, root)
    if mistake is not None:
        raise GlossaryError([mistake])
    diagnostics: list[Diagnostic] = list(found_before or [])
    sections, sections_path, found, sections_positions = load_sections_at(folder, root)
    diagnostics += found
    facts, found = load_facts(
        folder / FACTS_FILE, shown_path(folder / FACTS_FILE, root), lambda p, s: read_term_file(p, s, "the facts file")
    )
    diagnostics += found
    folder_shown = display_path(folder, root)  # diagnostics name files by it: part of the context
    context = context_digest(
        measurements.fingerprint if measurements is not None else "no measurements",
        repr(facts),
        folder_shown,
        folder_digest(folder / DIAGRAMS_DIR) if first_link(folder / DIAGRAMS_DIR, folder) is None else "a link",
        "no computed" if computed is None else "a link" if computed.link() else folder_digest(computed.folder),
        display_path(computed.folder, root) if computed is not None else "",
    )
    store = CheckCache.open(folder, context) if cache else CheckCache(None, context)
    terms: list[LoadedTerm] = []
    entries: list[Entry] = []
    used: set[int] = set()
    all_slugs: dict[str, list[str]] = {}
    files: dict[str, Path] = {}
    for path in term_files(folder):
        shown = shown_in(folder_shown, path.name)
        all_slugs.setdefault(path.stem, []).append(shown)
        files[shown] = path
        text, found = read_term_file(path, shown)
        if text is None:
            diagnostics += found
            continue
        key = digest(text)
        checked = store.get(path.name, key)
        loaded = None
        if checked is None or need_terms:
            loaded, found = term_from_text(path, shown, text)
        if checked is None:
            local, used_here, entry = found, set[int](), None
            if loaded is not None:
                more, used_here = term_diagnostics(loaded, measurements, facts, computed)
                local, entry = local + more, entry_of(loaded)
            checked = Checked(local, frozenset(used_here), entry)
            store.put(path.name, key, checked)
        diagnostics += checked.diagnostics
        used |= checked.used_facts
        if checked.entry is not None:
            entries.append(checked.entry)
        if loaded is not None:
            terms.append(loaded)
    corpus = Corpus(
        folder, terms, sections.sections if sections else [], sections_path, measurements, sections_positions
    )
    corpus.facts = facts
    corpus.computed = computed
    changes = Changes(folder)

    def blame(a: str, b: str) -> str | None:
        file = changes.being_changed(files[a], files[b]) if a in files and b in files else None
        return None if file is None else (a if file == files[a] else b)

    diagnostics += corpus_diagnostics(
        corpus, entries, all_slugs=all_slugs, sections_loaded=sections is not None, blame=blame
    )
    diagnostics += fact_mistakes(facts, used, [e.slug for e in entries])
    diagnostics += fact_value_mistakes(facts)
    store.save()
    if any(not d.warning for d in diagnostics):
        raise GlossaryError(diagnostics)
    corpus.warnings = sorted(diagnostics)
    return corpus, len(entries)
