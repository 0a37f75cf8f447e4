"""CSS text split as the CSS Syntax standard splits it, in one linear pass: strings (with their
escapes) first, then comments outside strings (each read as a space), escapes, url(...), and
the brackets that nest ((), [], {}), so that `content:"/*"` or `@import url('a{b')` is never
read as a comment or a block. Used by css_text.py and html_css.py.

Each call does at most a bounded amount of work per character, counted in Scanned.steps, so a
page's CSS work can be budgeted (html_css.WORK_MAX) without depending on the machine's speed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_RUN = re.compile(r"[^\"'/\\{}()\[\];]+")
_STRING = {q: re.compile(rf"{q}(?:[^{q}\\\n\r\f]|\\[\s\S])*{q}?") for q in "\"'"}
_URL = re.compile(r"(?:[^)\\]|\\[\s\S])*\)?")
_CLOSER = {"(": ")", "[": "]", "{": "}"}


@dataclass(frozen=True)
class Item:
    """One statement (brace -1: ends at a ';' or the end) or one block (prelude, then the text
    between brace and end, where end is past its '}', or the end), as indexes into Scanned.text."""

    start: int
    brace: int
    end: int


@dataclass(frozen=True)
class Scanned:
    """CSS text with its comments made spaces, its top-level statements and blocks, and the
    steps taken to read it."""

    text: str
    items: list[Item]
    steps: int

    def prelude(self, item: Item) -> str:
        return self.text[item.start : item.end if item.brace < 0 else item.brace]

    def body(self, item: Item) -> str:
        if item.brace < 0:
            return ""
        closed = item.end > item.brace + 1 and self.text[item.end - 1] == "}"
        return self.text[item.brace + 1 : item.end - 1 if closed else item.end]


def _is_url(css: str, i: int) -> bool:
    """Whether the '(' at i opens an unquoted url(...) (a token that ends only at ')')."""
    if css[max(0, i - 3) : i].lower() != "url" or (i > 3 and (css[i - 4].isalnum() or css[i - 4] in "-_\\")):
        return False
    rest = css[i + 1 : i + 64].lstrip(" \t\n\f\r")
    return not rest.startswith(("'", '"'))


def scan(css: str, top: bool, limit: int = -1) -> Scanned:
    """css split into its statements and blocks at the outer level; top: a stylesheet's (where
    only an at-rule ends at ';'), else a block's body (declarations and nested rules). Past
    limit steps (if not -1) reading stops: what is left is not read (Scanned.steps says so)."""
    out: list[str] = []
    items: list[Item] = []
    closers: list[str] = []
    n, i, size, steps = len(css), 0, 0, 0
    start, brace, lead = 0, -1, ""
    while i < n and steps != limit:
        steps += 1
        run = _RUN.match(css, i)
        c = css[i]
        if run is not None:
            piece, j = run.group(), run.end()
        elif c in "\"'":
            j = _STRING[c].match(css, i).end()  # type: ignore[union-attr]  # always matches the quote
            piece = css[i:j]
        elif c == "/" and css.startswith("/*", i):
            close = css.find("*/", i + 2)
            piece, j = " ", n if close < 0 else close + 2
        elif c == "\\":
            piece, j = css[i : i + 2], i + 2
        elif c == "(" and _is_url(css, i):
            j = _URL.match(css, i + 1).end()  # type: ignore[union-attr]  # matches the empty string
            piece = css[i:j]
        else:
            piece, j = c, i + 1
            ended = False
            if c in _CLOSER:
                if c == "{" and not closers:
                    brace = size
                closers.append(_CLOSER[c])
            elif closers and c == closers[-1]:
                closers.pop()
                if c == "}" and not closers:
                    items.append(Item(start, brace, size + 1))
                    start, brace, lead, ended = size + 1, -1, "", True
            elif c == ";" and not closers and (not top or lead == "@"):
                items.append(Item(start, -1, size))
                start, lead, ended = size + 1, "", True
            if ended:
                out.append(piece)
                size, i = size + 1, j
                continue
        if not lead and piece.strip(" \t\n\f\r"):
            lead = piece.lstrip(" \t\n\f\r")[0]
        out.append(piece)
        size += len(piece)
        i = j
    text = "".join(out)
    if text[start:].strip(" \t\n\f\r"):
        items.append(Item(start, brace, size))
    return Scanned(text, items, steps)


def strip_comments(css: str) -> str:
    """css with its comments (outside strings) made spaces."""
    return scan(css, False).text
