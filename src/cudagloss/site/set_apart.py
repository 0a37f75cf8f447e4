"""Contributor text in the exported glossary, set apart so that it cannot pose as an entry.

In llms-full.txt each entry is a `## Name` heading and its parts `### Measured`, `### Sources`; a
body is Markdown a contributor wrote, and a `## PTX` in it would read as a second entry with
whatever it says. So in the export every heading of a body is moved three levels down (`#` to
`####`; past `######`, bold text), setext underlines included, outside code fences, and the body
sits under its own `### Explanation (contributor text)` heading; llms.txt says what that means.
"""

from __future__ import annotations

import re

SHIFT = 3
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"( {0,3})(#{1,6})(?=[ \t]|$)(.*)")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*")


def _heading(level: int, text: str) -> str:
    text = text.strip().rstrip("#").strip()
    return f"{'#' * level} {text}" if level <= 6 else f"**{text}**"


def set_apart(markdown: str) -> str:
    """markdown with every heading outside code fences moved SHIFT levels down."""
    out: list[str] = []
    fence = ""
    for line in markdown.split("\n"):
        if fence:
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = ""
            out.append(line)
            continue
        if opened := _FENCE.match(line):
            fence = opened.group(1)
            out.append(line)
            continue
        if atx := _ATX.fullmatch(line):
            out.append(_heading(len(atx.group(2)) + SHIFT, atx.group(3)))
            continue
        underline = _SETEXT.fullmatch(line)
        if underline and out and out[-1].strip() and not _ATX.fullmatch(out[-1]) and not out[-1].startswith("**"):
            out[-1] = _heading((1 if underline.group(1)[0] == "=" else 2) + SHIFT, out[-1])
            continue
        out.append(line)
    return "\n".join(out)
