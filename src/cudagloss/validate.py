"""Validate stage: checks that need the whole corpus or more than a field's type.

Each check returns diagnostics; none stops the others, so an author sees every mistake.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from urllib.parse import urlsplit

from .authortext import AuthorTextError, render_body
from .corpus import Corpus, LoadedTerm
from .diagnostics import Diagnostic, did_you_mean
from .markdown_text import link_targets
from .measured import MeasurementSet, verify_command
from .model import SLUG_PATTERN

_ABBREVIATIONS = {"e.g", "i.e", "etc", "vs", "cf", "approx", "no", "fig", "sec", "ch"}
_BOUNDARY = re.compile(r"([.!?])[\"”')\]]*\s+(?=[\"“(\[]?[A-Z0-9])")
_SAFE_BODY_SCHEMES = {"http", "https", "mailto"}


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


def is_web_url(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.netloc)


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
        if not is_web_url(source.url):
            yield _d(
                t,
                f"{where}.url",
                f"'{source.url}' is not an http(s) URL",
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
        if link is not None and not is_web_url(link) and link not in known:
            yield _d(
                t,
                f"{where}.link",
                f"'{link}' is neither an http(s) URL nor a term{did_you_mean(link, known)}",
                "link to a web page (https://...) or give another term's slug",
            )


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


def _body(t: LoadedTerm, measurements: MeasurementSet | None) -> Iterator[Diagnostic]:
    body = t.term.body
    first = t.positions.block_first_line.get("body")
    try:
        render_body(t.term, measurements, f"terms/{t.slug}.md")
    except AuthorTextError as exc:
        line, col = (first + exc.line - 1, 1) if first else t.at("body")
        yield Diagnostic(
            t.path,
            line,
            col,
            f"body: {exc.message}",
            exc.hint or "values in '{{ }}' must exist; write '{{ \"{{\" }}' for a literal '{{'",
        )
    for target in link_targets(body):
        scheme = urlsplit(target).scheme.lower()
        if scheme and scheme not in _SAFE_BODY_SCHEMES:
            line, col = t.at("body")
            if first:
                lineno = next((n for n, text in enumerate(body.splitlines()) if target in text), 0)
                line, col = first + lineno, 1
            yield Diagnostic(
                t.path,
                line,
                col,
                f"body: link to '{target}' is not allowed",
                "links in a body go to http(s) pages or to other terms ('sass.md')",
            )


def _names(corpus: Corpus) -> Iterator[Diagnostic]:
    """Names, aliases, abbreviations and plurals must each point at one term.

    Names are claimed first, so a clash between a name and another term's alias is
    reported at the alias, whatever the file order.
    """
    owner: dict[str, tuple[LoadedTerm, str]] = {}
    claims: list[tuple[LoadedTerm, str, str]] = [(t, "name", t.term.name) for t in corpus]
    for t in corpus:
        for field in ("aliases", "abbreviations", "plurals"):
            claims += [(t, f"{field}[{i}]", value) for i, value in enumerate(getattr(t.term, field))]
    for t, where, value in claims:
        key = value.strip().casefold()
        if not key:
            continue
        if key in owner:
            other, other_where = owner[key]
            place = f"{other.path} ({other_where})" if other is not t else other_where
            yield _d(
                t,
                where,
                f"'{value}' is already used by {place}",
                "each name, alias, abbreviation and plural belongs to one term",
            )
        else:
            owner[key] = (t, where)


def _sections(corpus: Corpus) -> Iterator[Diagnostic]:
    known = [s.slug for s in corpus.sections]
    seen: set[str] = set()
    for i, slug in enumerate(known):
        if slug in seen:
            yield Diagnostic(
                corpus.sections_path, 1, 1, f"sections[{i}]: duplicate section '{slug}'", "remove one of the two"
            )
        seen.add(slug)
    for t in corpus:
        if t.term.section not in seen:
            yield _d(
                t,
                "section",
                f"no section '{t.term.section}'{did_you_mean(t.term.section, known)}",
                f"sections are listed in {corpus.sections_path}: {', '.join(known)}",
            )


def validate(corpus: Corpus, *, all_slugs: dict[str, list[str]], sections_loaded: bool = True) -> list[Diagnostic]:
    """Every cross-field and cross-file check. all_slugs maps each slug to the files named so."""
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
        out += _measurements(t, corpus.measurements)
        out += _body(t, corpus.measurements)
    out += _names(corpus)
    if sections_loaded:
        out += _sections(corpus)
    return out
