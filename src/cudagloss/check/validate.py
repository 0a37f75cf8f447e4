"""Validate stage: checks that need the whole corpus or more than a field's type.

Each check returns diagnostics; none stops the others, so an author sees every mistake.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from dataclasses import replace

from cudagloss.check.authortext import AuthorTextError, check_citations, check_markdown
from cudagloss.check.fields import EMAIL_HINT, emails, future_dates, shown
from cudagloss.check.names import name_diagnostics, slug_diagnostics
from cudagloss.errors import Diagnostic, did_you_mean
from cudagloss.model.corpus import Corpus, LoadedTerm
from cudagloss.model.measurements import MeasurementSet, verify_command
from cudagloss.model.term import SLUG_PATTERN, is_slug
from cudagloss.model.urls import url_problem
from cudagloss.text.emails import email_at
from cudagloss.text.markdown import link_scheme, link_targets
from cudagloss.text.skeleton import skeleton

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


def _d(term: LoadedTerm, where: str, message: str, hint: str = "", key: bool = False) -> Diagnostic:
    line, col = term.positions.key_at(where) if key else term.at(where)
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


def _related(t: LoadedTerm, known: set[str]) -> Iterator[Diagnostic]:
    seen: set[str] = set()
    for i, slug in enumerate(t.term.related):
        where = f"related[{i}]"
        if slug == t.slug:
            yield _d(t, where, "a term cannot be related to itself", "remove this item")
        elif slug not in known:
            yield _d(
                t,
                where,
                f"no term '{slug}'{did_you_mean(slug, known)}",
                "related lists slugs: the file names in terms/ without '.yaml'",
            )
        elif slug in seen:
            yield _d(t, where, f"'{slug}' is listed twice", "remove the repeated item")
        seen.add(slug)


def _sources(t: LoadedTerm) -> Iterator[Diagnostic]:
    first: dict[str, int] = {}
    for i, source in enumerate(t.term.sources):
        where = f"sources[{i}]"
        if not source.title.strip():
            yield _d(t, f"{where}.title", "is empty", "say what the source is, e.g. 'NVIDIA PTX ISA reference'")
        problem = url_problem(source.url)
        if problem:
            yield _d(
                t,
                f"{where}.url",
                f"'{shown(source.url)}' {problem}",
                "sources must be public web pages, starting with https://",
            )
            continue
        key = source.url.rstrip("/").lower()
        if key in first:
            yield _d(t, where, f"duplicate source: same URL as sources[{first[key]}]", "remove one of the two")
        else:
            first[key] = i


def _meet(t: LoadedTerm, known: set[str]) -> Iterator[Diagnostic]:
    for i, entry in enumerate(t.term.where_you_meet_this):
        where = f"where_you_meet_this[{i}]"
        if not entry.label.strip():
            yield _d(t, f"{where}.label", "is empty", "name the place, e.g. an API call or a tool")
        link = entry.link
        if link is None or link in known:
            continue
        problem = url_problem(link) if ":" in link or "/" in link else "is neither an http(s) URL nor a term"
        if problem:
            yield _d(
                t,
                f"{where}.link",
                f"'{shown(link)}' {problem}{did_you_mean(link, known) if ':' not in link else ''}",
                "link to a web page (https://...) or give another term's slug",
            )


def _byline(t: LoadedTerm, today: dt.date | None) -> Iterator[Diagnostic]:
    """No e-mail address in any text field, the byline's names included (a page is public;
    an address there is harvested), and no date in the future."""
    yield from emails(t.path, t.term, t.positions, locate=lambda where, text: _at(t, where, *email_at(text)))
    yield from future_dates(t.path, t.term, t.positions, today)


def _mailto(text: str) -> list[AuthorTextError]:
    """A mailto: link publishes its address however it is spelt ('%40', no dot at all)."""
    out = []
    for target in link_targets(text):
        if link_scheme(target) == "mailto":
            line, col = _text_position(text, target)
            out.append(AuthorTextError(f"link to {shown(target)} is an e-mail address", line, EMAIL_HINT, col))
    return out


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
                "ids are lower case with dashes, as `make verify --list` shows",
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
                "`make verify --list` shows the experiments",
            )
            continue
        record = measurements.get(experiment)
        for run in record.runs if record else []:
            if run.stale:
                yield replace(
                    _d(
                        t,
                        where,
                        f"'{experiment}' on node '{run.node}' was measured by older experiment code ({run.good_path})",
                        f"run `{verify_command(experiment)}` on a GPU node and commit the new file",
                    ),
                    warning=True,
                )
        names = record.result_names() if record else []
        for j, name in enumerate(citation.results):
            if names and name not in names:
                yield _d(
                    t,
                    f"measurements[{i}].results[{j}]",
                    f"experiment '{experiment}' has no result '{name}'{did_you_mean(name, names)}",
                    "its measurement page lists the results it records",
                )


def _at(t: LoadedTerm, where: str, line: int, col: int) -> tuple[int, int]:
    """A position inside a Markdown field's text as a position in the file: exact for a
    block scalar (`body: |`), the field's own position otherwise."""
    first = t.positions.block_first_line.get(where)
    if not first:
        return t.at(where)
    try:
        lines = t.file.read_text(encoding="utf-8").splitlines()
        file_line = lines[first + line - 2]
    except (OSError, UnicodeDecodeError, IndexError):
        return first + line - 1, col
    return first + line - 1, len(file_line) - len(file_line.lstrip(" ")) + col


def _markdown_fields(t: LoadedTerm, measurements: MeasurementSet | None) -> Iterator[Diagnostic]:
    """Author Markdown (body, definition, notes): only the directive where it belongs, only
    links a reader may follow, and no more unclosed brackets than the parser bears; then
    every value the body cites must exist."""
    term = t.term
    fields = [("body", term.body, True), ("definition", term.definition, False)]
    fields += [(f"where_you_meet_this[{i}].note", m.note, False) for i, m in enumerate(term.where_you_meet_this)]
    fields += [(f"measurements[{i}].note", c.note, False) for i, c in enumerate(term.measurements)]
    body_ok = True
    for where, text, directives in fields:
        errors = check_markdown(text, directives=directives) + _mailto(text)
        for target in link_targets(text):
            problem = url_problem(target) if link_scheme(target) in ("http", "https") else None
            if problem:
                line, col = _text_position(text, target)
                errors.append(AuthorTextError(f"link to {shown(target)} {problem}", line, "fix the address", col))
        body_ok = body_ok and not (directives and errors)
        for e in errors:
            yield Diagnostic(t.path, *_at(t, where, e.line, e.col), f"{where}: {e.message}", e.hint)
    if body_ok:
        try:
            check_citations(term, measurements)
        except AuthorTextError as exc:
            yield Diagnostic(t.path, *_at(t, "body", exc.line, exc.col), f"body: {exc.message}", exc.hint)


def _text_position(text: str, needle: str) -> tuple[int, int]:
    offset = max(text.find(needle), 0)
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _sections(corpus: Corpus) -> Iterator[Diagnostic]:
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
    for t in corpus:
        if t.term.section not in known:
            yield _d(
                t,
                "section",
                f"no section '{t.term.section}'{did_you_mean(t.term.section, known)}",
                f"sections are listed in {corpus.sections_path}: {', '.join(known)}",
            )


def validate(
    corpus: Corpus, *, all_slugs: dict[str, list[str]], sections_loaded: bool = True, today: dt.date | None = None
) -> list[Diagnostic]:
    """Every cross-field and cross-file check. all_slugs maps each slug to the files named so;
    today (UTC, by default) is the latest date a term may hold, give or take a day."""
    out: list[Diagnostic] = []
    for slug, paths in all_slugs.items():
        for path in paths[1:]:
            out.append(
                Diagnostic(
                    path, 1, 1, f"duplicate slug '{slug}' (also {paths[0]})", "rename or remove one of the two files"
                )
            )
    known = set(all_slugs)
    for t in corpus:
        out += _text_fields(t)
        out += _related(t, known)
        out += _sources(t)
        out += _meet(t, known)
        out += _byline(t, today)
        out += _measurements(t, corpus.measurements)
        out += _markdown_fields(t, corpus.measurements)
    out += name_diagnostics(corpus)
    out += slug_diagnostics(all_slugs)
    if sections_loaded:
        out += _sections(corpus)
        for i, section in enumerate(corpus.sections):
            out += emails(corpus.sections_path, section, corpus.sections_positions, f"sections[{i}]")
    return out
