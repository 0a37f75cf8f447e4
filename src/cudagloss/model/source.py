"""A source of a term: a public page, and the stamps the link checker writes beside it.

Apart from the term (model/term.py re-exports it) because the link checker's fields grew it:
the quote it looks for, the archived copy, the broken runs in a row. The value types a stamp
shares with the byline ('pending' until known) are defined here too. Standard library only.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field
from typing import Literal

from cudagloss.model.limits import COUNT_MAX, LINE_MAX, NAME_MAX, QUOTE_MAX, URL_MAX, doc

PENDING: Literal["pending"] = "pending"
"""The value of a byline or stamp field that nobody knows yet."""

Pending = Literal["pending"]
DateOrPending = _dt.date | Pending

SLUG_PATTERN = r"^[a-z0-9]+(-[a-z0-9]+)*$"
URL_PATTERN = r"^https?://"


def is_slug(text: str) -> bool:
    """Lower-case ASCII words joined by single dashes (SLUG_PATTERN, but a trailing newline
    does not pass as re.match's '$' would let it)."""
    return re.fullmatch(SLUG_PATTERN.strip("^$"), text) is not None


@dataclass(frozen=True)
class Source:
    """A public page a term's facts come from."""

    title: str = field(metadata=doc("What the source is, as a reader would name it.", max_length=LINE_MAX))
    url: str = field(
        metadata=doc("Where it is; http or https only.", pattern=URL_PATTERN, format="uri", max_length=URL_MAX)
    )
    id: str | None = field(
        default=None,
        metadata=doc(
            "Optional short name, unique within the term, by which the body cites it: "
            "{{ cite('ptx-isa') }} shows the title, linked, with the date it was checked.",
            pattern=SLUG_PATTERN,
            max_length=NAME_MAX,
        ),
    )
    checked_on: DateOrPending = field(
        default=PENDING,
        metadata=doc(
            "The date (YYYY-MM-DD) the link checker last found the URL reachable, or "
            "'pending'. Written by `make links`; authors leave it alone."
        ),
    )
    quote: str | None = field(
        default=None,
        metadata=doc(
            "Optional passage of the source, in its own words, that supports what the term says "
            "(a few dozen characters to two sentences). `make links` looks for it on the page every "
            "run, and the page links to it with a text fragment.",
            max_length=QUOTE_MAX,
        ),
    )
    quote_checked_on: DateOrPending = field(
        default=PENDING,
        metadata=doc(
            "The date (YYYY-MM-DD) the link checker last found the quote on the page, or 'pending'. "
            "Written by `make links`; authors leave it alone."
        ),
    )
    archived_url: str | None = field(
        default=None,
        metadata=doc(
            "An archived copy of the page (a Wayback Machine snapshot), found by `make links` the "
            "first time the URL was reachable; shown in place of the URL once it has been broken "
            "for several runs. Authors leave it alone.",
            pattern=URL_PATTERN,
            format="uri",
            max_length=URL_MAX,
        ),
    )
    archived_on: DateOrPending = field(
        default=PENDING,
        metadata=doc("The date (YYYY-MM-DD) of that archived copy, or 'pending'. Written by `make links`."),
    )
    failed_checks: int = field(
        default=0,
        metadata=doc(
            "How many link checks in a row have found the URL broken since it was last found "
            "reachable (0: the last check found it). Written by `make links`; authors leave it alone.",
            minimum=0,
            maximum=COUNT_MAX,
        ),
    )
