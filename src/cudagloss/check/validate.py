"""Validate stage: checks that need the whole corpus or more than a field's type.

Each check returns diagnostics; none stops the others, so an author sees every mistake.
They come in two kinds: `term_diagnostics`, decided by one term's file (with the
measurements and the facts file, the same for all terms), which a cache may keep per file;
and `corpus_diagnostics`, over every term's `Entry` (names, slugs, sections, related terms,
links to terms, dates against today). The Markdown fields are checked in
cudagloss.check.markdown_fields, the sections file in cudagloss.check.sections, names and
slugs in cudagloss.check.names.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from dataclasses import replace

from cudagloss.check.charts import chart_diagnostics
from cudagloss.check.claims import claim_diagnostics
from cudagloss.check.computed import computed_diagnostics
from cudagloss.check.diagrams import diagram_diagnostics
from cudagloss.check.entries import Entry, Ref
from cudagloss.check.fields import emails, future_dates, shown, source_url_mistake
from cudagloss.check.markdown_fields import field_position, markdown_fields, typed_numbers
from cudagloss.check.names import Blame, name_diagnostics, slug_diagnostics
from cudagloss.check.placeholders import placeholders
from cudagloss.check.sections import section_diagnostics
from cudagloss.check.singular import singular_gpu
from cudagloss.check.worked import worked_diagnostics
from cudagloss.errors import Diagnostic, did_you_mean
from cudagloss.model.addresses import url_host_problem
from cudagloss.model.computed_set import ComputedSet
from cudagloss.model.corpus import Corpus, Facts, LoadedTerm
from cudagloss.model.display import verify_command
from cudagloss.model.limits import QUOTE_MIN_WORDS
from cudagloss.model.measurements import MeasurementSet
from cudagloss.model.term import SLUG_PATTERN, is_slug
from cudagloss.model.urls import url_problem
from cudagloss.text.emails import email_at

_ABBREVIATIONS = {"e.g", "i.e", "etc", "vs", "cf", "approx", "no", "fig", "sec", "ch"}
_BOUNDARY = re.compile(r"([.!?])[\"”')\]]*\s+(?=[\"“(\[]?[A-Z0-9])")


def sentence_count(text: str) -> int:
    """Sentences in text, ignoring code spans, decimals and common abbreviations."""
    text = re.sub(r"`[^`]*`", "code", text.strip())
    count = 1
    for m in _BOUNDARY.finditer(text):
        before = text[: m.start() + 1]
        word = re.split(r"\s", before)[-1].rstrip(".!?").lower()
        if m.group(1) == "." and (word in _ABBREVIATIONS or len(word) == 1):
            continue
        count += 1
    return count


def _d(term: LoadedTerm, where: str, message: str, hint: str = "") -> Diagnostic:
    line, col = term.at(where)
    return Diagnostic(term.path, line, col, f"{where}: {message}" if where else message, hint)


def _text_fields(t: LoadedTerm) -> Iterator[Diagnostic]:
    term = t.term
    for where, value in (("name", term.name), ("title", term.title), ("body", term.body)):
        if not value.strip():
            yield _d(t, where, "is empty", "write the text after the colon")
    if term.title.strip() and not term.title.rstrip().endswith("?"):
        yield _d(t, "title", "must be a question", f"e.g. 'What is {term.name}?'")
    definition = term.definition.strip()
    if not definition:
        yield _d(t, "definition", "is empty", "write one sentence that says what the term is")
    else:
        n = sentence_count(definition)
        if n > 1:
            yield _d(
                t,
                "definition",
                f"has {n} sentences; it must be one",
                "keep the first sentence and move the rest into 'body'",
            )
        elif definition[-1] not in ".!?":
            yield _d(t, "definition", "must end with a full stop", "write it as one complete sentence")
    for field in ("aliases", "abbreviations", "plurals", "error_strings"):
        for i, value in enumerate(getattr(term, field)):
            if not value.strip():
                yield _d(t, f"{field}[{i}]", "is empty", "remove the empty item")


def _e(entry: Entry, ref: Ref, message: str, hint: str) -> Diagnostic:
    return Diagnostic(entry.path, *ref.at, f"{ref.where}: {message}", hint)


def _related(e: Entry, known: set[str]) -> Iterator[Diagnostic]:
    seen: set[str] = set()
    for ref in e.related:
        slug = ref.value
        if slug == e.slug:
            yield _e(e, ref, "a term cannot be related to itself", "remove this item")
        elif slug not in known:
            yield _e(
                e,
                ref,
                f"no term '{slug}'{did_you_mean(slug, known)}",
                "related lists slugs: the file names in terms/ without '.yaml'",
            )
        elif slug in seen:
            yield _e(e, ref, f"'{slug}' is listed twice", "remove the repeated item")
        seen.add(slug)


def _term_links(e: Entry, known: set[str]) -> Iterator[Diagnostic]:
    """where_you_meet_this links that are no URL: each must be a term's slug."""
    for ref in e.term_links:
        if ref.value not in known:
            yield _e(
                e,
                ref,
                f"'{shown(ref.value)}' is neither an http(s) URL nor a term{did_you_mean(ref.value, known)}",
                "link to a web page (https://...) or give another term's slug",
            )


def _sources(t: LoadedTerm) -> Iterator[Diagnostic]:
    first: dict[str, int] = {}
    ids: dict[str, int] = {}
    for i, source in enumerate(t.term.sources):
        where = f"sources[{i}]"
        if source.id is not None and not is_slug(source.id):
            yield _d(
                t,
                f"{where}.id",
                f"'{shown(source.id)}' is not an id",
                "ids are lower-case words joined by dashes, e.g. 'ptx-isa'",
            )
        elif source.id is not None and source.id in ids:
            yield _d(
                t,
                f"{where}.id",
                f"'{source.id}' is also the id of sources[{ids[source.id]}]",
                "give each source its own id: cite() names one source",
            )
        elif source.id is not None:
            ids[source.id] = i
        if not source.title.strip():
            yield _d(t, f"{where}.title", "is empty", "say what the source is, e.g. 'NVIDIA PTX ISA reference'")
        if source.quote is not None and len(words := source.quote.split()) < QUOTE_MIN_WORDS:
            yield _d(
                t,
                f"{where}.quote",
                f"is {len(words)} word{'s'[: len(words) != 1]}; a quote needs at least {QUOTE_MIN_WORDS}",
                "quote the clause or sentence of the page that supports the term, as the page words it",
            )
        archived = source_url_mistake(t, i, "archived_url")
        if archived is not None:
            yield archived
        mistake = source_url_mistake(t, i)
        if mistake is not None:
            yield mistake
            continue
        key = source.url.rstrip("/").lower()
        if key in first:
            yield _d(t, where, f"duplicate source: same URL as sources[{first[key]}]", "remove one of the two")
        else:
            first[key] = i


def _meet(t: LoadedTerm) -> Iterator[Diagnostic]:
    """Labels, and links that are URLs (the others name terms: see _term_links)."""
    for i, entry in enumerate(t.term.where_you_meet_this):
        where = f"where_you_meet_this[{i}]"
        if not entry.label.strip():
            yield _d(t, f"{where}.label", "is empty", "name the place, e.g. an API call or a tool")
        link = entry.link
        if link is None or (":" not in link and "/" not in link):
            continue
        problem = url_problem(link) or url_host_problem(link)
        if problem:
            yield _d(
                t,
                f"{where}.link",
                f"'{shown(link)}' {problem}",
                "link to a web page (https://...) or give another term's slug",
            )


def _emails(t: LoadedTerm) -> Iterator[Diagnostic]:
    """No e-mail address in any text field, the byline's names included (a page is public;
    an address there is harvested)."""
    yield from emails(t.path, t.term, t.positions, locate=lambda where, text: field_position(t, where, *email_at(text)))


def _measurements(t: LoadedTerm, measurements: MeasurementSet | None) -> Iterator[Diagnostic]:
    seen: set[str] = set()
    for i, citation in enumerate(t.term.measurements):
        where = f"measurements[{i}].experiment"
        experiment = citation.experiment
        if not re.match(SLUG_PATTERN, experiment):
            yield _d(
                t,
                where,
                f"'{experiment}' is not an experiment id",
                "ids are lower case with dashes, as `make verify ARGS=--list` shows",
            )
            continue
        if experiment in seen:
            yield _d(t, where, f"'{experiment}' is cited twice", "remove the repeated item")
        seen.add(experiment)
        if measurements is None:
            continue
        if not measurements.known(experiment):
            known = list(measurements.catalog or measurements.experiments)
            yield _d(
                t,
                where,
                f"no experiment '{experiment}'{did_you_mean(experiment, known)}",
                "`make verify ARGS=--list` shows the experiments",
            )
            continue
        record = measurements.get(experiment)
        for run in record.runs if record else []:
            if not run.stale:
                continue
            if run.rederivable:
                message = f"'{experiment}' on node '{run.node}' was summarised by older code ({run.good_path})"
                hint = "its raw samples are kept: run `make rederive` (no GPU needed) and commit the rewritten files"
            else:
                message = (
                    f"'{experiment}' on node '{run.node}' was made by an older recipe or summary ({run.good_path})"
                )
                hint = f"run `{verify_command(experiment)}` on a GPU node and commit the new file"
            yield replace(_d(t, where, message, hint), warning=True)
        names = record.result_names() if record else []
        for j, name in enumerate(citation.results):
            if names and name not in names:
                yield _d(
                    t,
                    f"measurements[{i}].results[{j}]",
                    f"experiment '{experiment}' has no result '{name}'{did_you_mean(name, names)}",
                    "its measurement page lists the results it records",
                )


def term_diagnostics(
    t: LoadedTerm, measurements: MeasurementSet | None, facts: Facts, computed: ComputedSet | None = None
) -> tuple[list[Diagnostic], set[int]]:
    """Every check one term's file decides, given the measurements, the facts file and the
    computed tables; and the index of each fact its prose used (the facts check needs them all)."""
    out: list[Diagnostic] = []
    out += computed_diagnostics(t, computed)
    out += _text_fields(t)
    out += placeholders(t)
    out += _sources(t)
    out += _meet(t)
    out += _emails(t)
    out += _measurements(t, measurements)
    out += markdown_fields(t, measurements)
    out += claim_diagnostics(t, measurements)
    out += worked_diagnostics(t, measurements, facts)
    out += singular_gpu(t, measurements)
    out += chart_diagnostics(t, measurements, facts)
    out += diagram_diagnostics(t, measurements, facts)
    used: set[int] = set()
    out += typed_numbers(t, measurements, facts, used)
    return out, used


def corpus_diagnostics(
    corpus: Corpus,
    entries: list[Entry],
    *,
    all_slugs: dict[str, list[str]],
    sections_loaded: bool = True,
    today: dt.date | None = None,
    blame: Blame | None = None,
) -> list[Diagnostic]:
    """Every check across files. all_slugs maps each slug to the files named so; today (UTC,
    by default) is the latest date a term may hold, give or take a day; blame says which of
    two clashing files is being changed. corpus gives the sections (its terms are not read:
    entries stand for them)."""
    out: list[Diagnostic] = []
    for slug, paths in all_slugs.items():
        for path in paths[1:]:
            out.append(
                Diagnostic(
                    path, 1, 1, f"duplicate slug '{slug}' (also {paths[0]})", "rename or remove one of the two files"
                )
            )
    known = set(all_slugs)
    for e in entries:
        out += _related(e, known)
        out += _term_links(e, known)
        out += future_dates(e.path, e.dates, today)
    out += name_diagnostics(entries, blame)
    out += slug_diagnostics(all_slugs)
    if sections_loaded:
        out += section_diagnostics(corpus, entries)
    return out
