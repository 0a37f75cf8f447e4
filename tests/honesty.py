"""What a reader checking the site's numbers would check (issue 38), as functions over the
rendered pages, so the site-wide test and the tests that break the code on purpose share them:

- every measured number a page shows inline (prose, diagrams, worked examples, highlights) is
  on the row its link goes to, or in a table on the page;
- no page counts more cards than the measurement files hold, or counts nodes at all;
- no byline names a card twice.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import dataclass

LINK = re.compile(r"\[([^\]]+)\]\(((?:\.\./)*measurements/([a-z0-9-]+)\.md)#([^ )]+)(?: \"([^\"]*)\")?\)")
ROW = re.compile(r'<tr id="([^"]+)"><td>.*?</td><td>(.*?)</td>')
_MODEL = r"(?:NVIDIA )?(?:[A-Z][\w-]*\d[\w-]*|Example GPU(?: [A-Z])?)"
COUNTED = re.compile(
    rf"\b(\d+|one|two|three) (?:{_MODEL} )?(?:cards?|[A-Z]\d{{3}}s)\b"
    rf"|\b(\d+|one|two|three) {_MODEL} nodes?\b|\bof (\d+) nodes than\b"
)
"""A count of cards ('2 NVIDIA H200 cards', 'one H200 card', '2 H200s') or of nodes named by a
model ('2 H200 nodes', 'slower on 1 of 2 nodes than'); a bare '64 nodes' is a pointer chase's list, not a fleet."""
WORDS = {"one": 1, "two": 2, "three": 3}
RANGE_TAIL = re.compile(r" on \d+ \S+s$")
MISSING_TAIL = re.compile(r" \(not measured on \d+ of \d+\)$")


@dataclass(frozen=True)
class Unfound:
    page: str
    text: str
    target: str

    def __str__(self) -> str:
        return f"{self.page}: '{self.text}' is on no table of the page and not on {self.target}"


def rows(pages: dict[str, str]) -> dict[tuple[str, str], str]:
    """(experiment, row id) -> the value cell of that row, on every measurement page."""
    found = {}
    for uri, text in pages.items():
        if uri.startswith("measurements/") and uri.count("/") == 1:
            experiment = uri.removeprefix("measurements/").removesuffix(".md")
            for anchor, value in ROW.findall(text):
                found[(experiment, anchor)] = html.unescape(value)
    return found


def _tables(text: str) -> str:
    """Every table line of a page (Markdown rows), unescaped, as one text to search."""
    lines = [line for line in text.splitlines() if line.lstrip().startswith("|")]
    return html.unescape(re.sub(r"\]\([^)]*\)", "]", "\n".join(lines))).replace("`", "").replace("\\", "")


def _value(shown: str) -> str:
    """A link's text as the number it shows: markup, '(stale)' and a range's count taken off."""
    text = html.unescape(shown).replace("`", "").replace("\\", "").removesuffix(" (stale)")
    return RANGE_TAIL.sub("", MISSING_TAIL.sub("", text))


def unfound(pages: dict[str, str]) -> Iterator[Unfound]:
    """Each measured value a page shows that a reader cannot find: not in the linked row's value,
    not in a table of the page (a range: each of its ends); of a compare() phrase, each number
    (the ratio, the samples) in a table of the page."""
    held = rows(pages)
    for uri, text in pages.items():
        tables = _tables(text)
        for shown, _, experiment, anchor, title in LINK.findall(text):
            if shown.startswith("Recorded on ") or experiment == "index":
                continue  # a listing's caption, the index's reading rules: not a value
            value = _value(shown)
            if "Rule:" in (title or ""):  # a comparison: each of its numbers (a ratio, the samples) in a table
                # Counts of cards ('slower on 2, not shown to differ on 4 of 6 cards') are counts, which
                # counts() holds to the files; every other number (a ratio, the samples) is in a table.
                measured = re.sub(r"\bon \d+\b|\bof \d+ cards\b", "", value)
                missing = [n for n in (m.rstrip(",.") for m in re.findall(r"\d[\d.,]*", measured)) if n not in tables]
                if missing:
                    yield Unfound(uri, value, f"any table (its {', '.join(missing)})")
                continue
            row = held.get((experiment, anchor))
            if row is None:
                yield Unfound(uri, value, f"a row: measurements/{experiment}#{anchor} does not exist")
                continue
            if value in row or value in tables:
                continue
            ends = re.split(r"–", value)
            unit = value.rsplit(" ", 1)[-1] if " " in value else ""
            if len(ends) == 2 and all(e in tables or f"{e} {unit}" in tables or e in row for e in ends):
                continue
            yield Unfound(uri, value, f"measurements/{experiment}#{anchor} ({row})")


def counts(pages: dict[str, str]) -> Iterator[tuple[str, str, int]]:
    """(page, phrase, count) of each count of cards, nodes or GPUs ('2 H200s') a page's reader text makes."""
    for uri, text in pages.items():
        if uri == "measurements/index.md":
            continue  # how to read the numbers: its counts are examples ('13.4–19.8 ms on 2 H200s')
        reader = re.sub(r"\]\([^)]*\)", "]", text)  # link targets and hover titles are not counted text
        for found in COUNTED.finditer(reader):
            number = found[1] or found[2] or found[3]
            yield uri, found[0], WORDS.get(number) or int(number)


def bylines(pages: dict[str, str]) -> Iterator[tuple[str, list[str]]]:
    """(page, the card names its byline gives, in order)."""
    for uri, text in pages.items():
        found = re.search(r"^The numbers came from (.*)\.$", text, re.MULTILINE)
        if found:
            yield uri, re.findall(r"`([^`]+)`", found[1])
