"""Prose as a reader reads it, for the typed-number check: a number disguised in the source
must not pass because the check reads what the author typed rather than what the page shows.

The page decodes character references (`&#49;&#51;&#50;` shows 132), drops soft hyphens and
other invisible characters (`S\u00adMs` shows SMs), and a reader takes full-width and other
compatibility forms for the plain ones (`１３２ ＳＭｓ`). So the check runs on this view of the
prose, with each character's offset in the prose kept, and reports at the source's place.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from cudagloss.text.charrefs import unescape
from cudagloss.text.skeleton import default_ignorable

DROP = "\x01"
"""Fills the rest of a span whose shown text is shorter (an entity): read as nothing."""


def shown_entity(source: str) -> str:
    """What an entity span shows, padded with DROP to its own length (offsets stay), or ''
    where it shows more characters than it takes (left to the caller to blank)."""
    text = unescape(source)
    return text + DROP * (len(source) - len(text)) if len(text) <= len(source) else ""


def folded(prose: str) -> tuple[str, Sequence[int]]:
    """prose as read: DROP fills and invisible characters left out, every other character in
    its compatibility form (NFKC); with, for each character of the result, its offset in prose."""
    if prose.isascii() and DROP not in prose:  # most prose, at C speed: read as typed
        return prose, range(len(prose) + 1)
    out: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(prose):
        if ch == DROP or (not ch.isascii() and default_ignorable(ch)):
            continue
        plain = ch if ch.isascii() else unicodedata.normalize("NFKC", ch)
        out.append(plain)
        where.extend([i] * len(plain))
    where.append(len(prose))  # the end of a match at the end of the text
    return "".join(out), where
