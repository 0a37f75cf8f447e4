"""Field rules over loaded data: bounds, dates, source URLs and e-mail addresses.

Bounds come from the model's field metadata (max_length, max_items), the same numbers the
JSON Schema gives editors, so a file too big to be a term is refused with the position of
the first value past the bound, before anything renders it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from cudagloss.errors import Diagnostic
from cudagloss.model.addresses import url_host_problem
from cudagloss.model.corpus import LoadedTerm
from cudagloss.model.positions import Positions
from cudagloss.model.urls import url_problem
from cudagloss.text.emails import has_email, without_email

__all__ = ["has_email", "without_email"]  # where the rest of the package has them from

DATE_SLACK = dt.timedelta(days=1)
"""A date may be at most one day past today in UTC: it is already tomorrow in UTC+14 while
it is today in UTC, and a stamp written there must pass a check run here."""
EMAIL_HINT = "e-mail addresses are never published; name the person or link their public page"
SOURCE_URL_HINT = "sources must be public web pages, starting with https://"
ARCHIVED_URL_HINT = "`make links` writes archived_url (a public snapshot of the page); remove the line and run it"
Locate = Callable[[str, str], tuple[int, int]]
_NOT_TEXT = frozenset({"url", "link"})
"""Fields that are addresses, not text: url_problem refuses an '@' (credentials) in them."""


def utc_today() -> dt.date:
    return dt.datetime.now(dt.UTC).date()


def shown(text: str, limit: int = 80) -> str:
    """A value quoted in a message: cut to a line."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


_FIELDS: dict[type, tuple[tuple[str, dict[str, Any]], ...]] = {}


def _fields(cls: type) -> tuple[tuple[str, dict[str, Any]], ...]:
    """A model class's field names and metadata (dataclasses.fields is slow, and they never change)."""
    if cls not in _FIELDS:
        _FIELDS[cls] = tuple((f.name, dict(f.metadata)) for f in dataclasses.fields(cls))
    return _FIELDS[cls]


def walk(obj: Any, where: str) -> Iterator[tuple[str, dict[str, Any], Any]]:
    """(field path, field metadata, value) of every field of a model object, depth first."""
    for name, meta in _fields(type(obj)):
        value = getattr(obj, name)
        sub = f"{where}.{name}" if where else name
        yield sub, meta, value
        if isinstance(value, list):
            for i, item in enumerate(value):
                if dataclasses.is_dataclass(item):
                    yield from walk(item, f"{sub}[{i}]")
        elif dataclasses.is_dataclass(value):
            yield from walk(value, sub)


def bounds(path: str, obj: Any, positions: Positions) -> list[Diagnostic]:
    """Every value longer, and every list longer, than the model allows."""
    out: list[Diagnostic] = []
    for where, meta, value in walk(obj, ""):
        most, items = meta.get("max_length"), meta.get("max_items")
        if isinstance(value, list) and items is not None and len(value) > items:
            out.append(
                Diagnostic(
                    path,
                    *positions.at(f"{where}[{items}]"),
                    f"{where}: has {len(value)} items; at most {items} are allowed",
                    "keep the ones a reader needs most",
                )
            )
        texts = [(where, value)] if isinstance(value, str) else []
        if isinstance(value, list):
            texts = [(f"{where}[{i}]", v) for i, v in enumerate(value[: items or None]) if isinstance(v, str)]
        for sub, text in texts:
            if most is not None and len(text) > most:
                out.append(
                    Diagnostic(
                        path,
                        *positions.at(sub),
                        f"{sub}: is {len(text):,} characters long; at most {most:,} are allowed",
                        "shorten it" + ("; split a long body into several terms" if sub == "body" else ""),
                    )
                )
    return out


def source_url_mistake(t: LoadedTerm, i: int, key: str = "url") -> Diagnostic | None:
    """Why the term's i-th source cannot be cited, nor checked by the link checker: not an
    http(s) URL (or one with credentials), or a host that is not a public address
    (cudagloss.model.addresses). `make check` and `make links` both ask. key "archived_url":
    the same of its archived copy, which a page links in place of the URL once it is gone."""
    url = t.term.sources[i].url if key == "url" else t.term.sources[i].archived_url
    problem = None if url is None else url_problem(url) or url_host_problem(url)
    if url is None or problem is None:
        return None
    where = f"sources[{i}].{key}"
    hint = SOURCE_URL_HINT if key == "url" else ARCHIVED_URL_HINT
    return Diagnostic(t.path, *t.at(where), f"{where}: '{shown(url)}' {problem}", hint)


def future_dates(
    path: str, dates: Iterable[tuple[str, str, tuple[int, int]]], today: dt.date | None = None
) -> list[Diagnostic]:
    """Every date (field path, ISO text, position) after today (UTC, with DATE_SLACK): a
    checked_on in the future would stop the link checker from ever checking that URL again."""
    latest = ((today or utc_today()) + DATE_SLACK).isoformat()
    return [
        Diagnostic(
            path,
            *at,
            f"{where}: {value} is in the future",
            "write the date it happened: today at the latest (UTC, with a day's slack for time zones)",
        )
        for where, value, at in dates
        if value > latest
    ]


def emails(
    path: str, obj: Any, positions: Positions, where: str = "", locate: Locate | None = None
) -> list[Diagnostic]:
    """Every text field of a model object (a term, a section) that holds an e-mail address:
    a page is public, and an address there is harvested. Slugs and URLs are not text here.
    locate(field, text) places it in the file (a body's line); the field's position otherwise."""
    out: list[Diagnostic] = []
    for sub, meta, value in walk(obj, where):
        if sub.rsplit(".", 1)[-1] in _NOT_TEXT or "pattern" in meta:
            continue
        texts = [(sub, value)] if isinstance(value, str) else []
        if isinstance(value, list):
            texts = [(f"{sub}[{i}]", v) for i, v in enumerate(value) if isinstance(v, str)]
        out += [
            Diagnostic(
                path,
                *(locate(at, text) if locate else positions.at(at)),
                f"{at}: holds an e-mail address, which would be published",
                EMAIL_HINT,
            )
            for at, text in texts
            if has_email(text)
        ]
    return out
