"""The Markdown rules of author text outside its directives: what a page must not send a
reader to (a script or data link, an image from another site) and nesting the parser cannot bear.

cudagloss.model.directives reads the directives; this module reports, at a line and column of one
field's text, everything else in author Markdown that the page would suffer from.
"""

from __future__ import annotations

import bisect
import re

from cudagloss.model.directives import AuthorTextError, scan
from cudagloss.model.urls import SAFE_SCHEMES
from cudagloss.text.markdown import (
    MAX_NESTING,
    MAX_UNMATCHED,
    dangerous_schemes,
    deepest_block,
    deepest_bracket,
    link_scheme,
    link_targets,
    unmatched_openers,
)
from cudagloss.text.spans import code_ranges, position

_IMAGE = re.compile(r"!\[")


def check_markdown(text: str, *, directives: bool) -> list[AuthorTextError]:
    """Every mistake in an author's Markdown field that the page would suffer from: braces
    that are not directives (or any, where directives are not allowed), link targets a
    reader must not be sent to, and more unclosed brackets than the parser can bear."""
    found, errors = scan(text)
    if found and not directives:
        for d in found:
            line, col = position(text, d.start)
            what = d.spec.cites
            errors.append(
                AuthorTextError(
                    f"{d.call} is allowed only in the body", line=line, col=col, hint=f"cite {what} in the body"
                )
            )
    flagged: set[int] = set()
    for target in link_targets(text):
        scheme = link_scheme(target)
        if scheme and scheme not in SAFE_SCHEMES:
            line, col = position(text, max(text.find(target), 0))
            flagged.add(line)
            errors.append(
                AuthorTextError(
                    f"link to {target!r} is not allowed",
                    line=line,
                    col=col,
                    hint="links go to http(s) pages or to other terms ('sass.md')",
                )
            )
    for offset, word in dangerous_schemes(text):
        line, col = position(text, offset)
        if line not in flagged:
            flagged.add(line)
            errors.append(
                AuthorTextError(
                    f"'{word}:' outside code: a browser would run or load it from a link",
                    line=line,
                    col=col,
                    hint=f"to mention the scheme, write it as code: `{word}:`",
                )
            )
    code = code_ranges(text, indented=False) if "![" in text else []
    starts = [a for a, _ in code]
    for m in _IMAGE.finditer(text):
        k = bisect.bisect_right(starts, m.start()) - 1
        if not (k >= 0 and m.start() < code[k][1]):
            line, col = position(text, m.start())
            errors.append(
                AuthorTextError(
                    "images are not published: each reader's browser would fetch them from another site",
                    line=line,
                    col=col,
                    hint="link to the picture instead: [a diagram of it](https://...)",
                )
            )
    for depth, offset, what in (
        (*deepest_bracket(text), "brackets"),
        (*deepest_block(text), "lists and quotes"),
    ):
        if depth > MAX_NESTING:
            line, col = position(text, offset)
            errors.append(
                AuthorTextError(
                    f"{what} nested {depth} deep (at most {MAX_NESTING})",
                    line=line,
                    col=col,
                    hint="flatten it; Markdown that deep takes the site build minutes or crashes it",
                )
            )
    unmatched = unmatched_openers(text)
    if len(unmatched) > MAX_UNMATCHED:
        line, col = position(text, unmatched[MAX_UNMATCHED])
        errors.append(
            AuthorTextError(
                f"{len(unmatched)} unclosed '[' or '(' (at most {MAX_UNMATCHED})",
                line=line,
                col=col,
                hint="close each bracket, or write \\[ and \\( for literal ones",
            )
        )
    return sorted(errors, key=lambda e: (e.line, e.col))
