"""Contributor text in the exported glossary, set apart so that it cannot pose as an entry.

In llms-full.txt each entry is a `## Name` heading and its parts `### Measured`, `### Sources`; a
body is Markdown a contributor wrote, and a `## PTX` in it would read as a second entry with
whatever it says, while a fence left open would turn every later entry into code. So in the
export every heading of a body is moved three levels down (`#` to `####`, at most `######`),
setext headings written as ATX ones, and a fence the body leaves open is closed at its end; the
body sits under its own `### Explanation (contributor text)` heading, and llms.txt says what
that means. A definition or a note, author Markdown printed inside the template's own lines, is
folded to one line that parses as a paragraph by itself (a leading block marker escaped).

Parsed, never pattern-matched: what is a fence, a heading or code is what CommonMark says
(markdown-it-py, with each block's line numbers), since a line that looks like a fence to a
pattern but is none to a reader's parser (indented four spaces, a backtick in a backtick
fence's info string, a closing fence too short) is how a body's heading became an entry. The
result is parsed again and checked; a body that still escaped would be shown as code, whole.
"""

from __future__ import annotations

import functools
import re
import string

from markdown_it import MarkdownIt
from markdown_it.token import Token

from cudagloss.site.escape import code

SHIFT = 3
LOWEST = 4
"""The highest level a body's heading may have: `##` is an entry, `###` a part of one."""
_END = "cudagloss-set-apart-end"
"""A paragraph after the body, as the export's next line would be: it must parse as one."""


@functools.cache
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark")


def set_apart(markdown: str) -> str:
    """markdown with every heading moved SHIFT levels down (within LOWEST..6) and an open fence
    closed, so it ends where it is set: checked by parsing it again, else fenced whole."""
    out = _closed(_demoted(markdown))
    return out if _contained(out) else fenced(markdown)


def _demoted(markdown: str) -> str:
    """Every heading (in a quote or a list too) moved down; code and everything else as written."""
    lines = markdown.split("\n")
    tokens = _parser().parse(markdown)
    replaced: dict[int, tuple[int, str]] = {}
    for i, token in enumerate(tokens):
        if token.type != "heading_open" or token.map is None:
            continue
        level = min(int(token.tag[1]) + SHIFT, 6)
        start, end = token.map
        if token.markup.startswith("#"):  # ATX: no container marker is a '#', so the first one opens it
            line = lines[start]
            at = line.index("#")
            replaced[start] = (start + 1, line[:at] + "#" * level + line[at + len(token.markup) :])
        else:  # setext, over lines start..end-2 and underlined at end-1: one ATX line instead
            text = _inline(tokens, i)
            first = text.split("\n")[0]
            at = lines[start].find(first) if first else -1
            if at < 0:
                continue  # left for _contained to judge
            replaced[start] = (end, lines[start][:at] + "#" * level + " " + " ".join(text.split("\n")))
    out: list[str] = []
    n = 0
    while n < len(lines):
        if n in replaced:
            n, line = replaced[n]
            out.append(line)
        else:
            out.append(lines[n])
            n += 1
    return "\n".join(out)


def _inline(tokens: list[Token], i: int) -> str:
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    return nxt.content if nxt is not None and nxt.type == "inline" else ""


def _after(markdown: str) -> Token | None:
    """The block that the line after the body (past a blank line) would be part of."""
    text = markdown + "\n\n" + _END
    line = text.count("\n")
    top = [t for t in _parser().parse(text) if t.level == 0 and t.nesting >= 0 and t.map is not None]
    return next((t for t in top if t.map is not None and t.map[0] <= line < t.map[1]), None)


def _closed(markdown: str) -> str:
    """markdown with the fence that runs past its end (if any) closed by a line of its own."""
    block = _after(markdown)
    if block is not None and block.type == "fence" and block.markup:
        return markdown + ("" if markdown.endswith("\n") else "\n") + block.markup
    return markdown


def _contained(markdown: str) -> bool:
    """Whether the next line after markdown starts a paragraph of its own and no heading in it
    is above LOWEST."""
    block = _after(markdown)
    if block is None or block.type != "paragraph_open" or block.map is None or block.map[0] != markdown.count("\n") + 2:
        return False
    return all(int(t.tag[1]) >= LOWEST for t in _parser().parse(markdown) if t.type == "heading_open")


def fenced(text: str) -> str:
    """text as a fenced code block with a fence longer than any run of backticks in it, which
    no line of it can close."""
    longest, run = 0, 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


def one_line(markdown: str) -> str:
    """Author inline Markdown (a definition, a note) on one line that is a paragraph of its own
    wherever the export prints it, a line's start included: a line break in it would let its
    next line open a heading or a fence. Else it is shown as a code span."""
    line = " ".join(markdown.replace("\r", "\n").split("\n")).strip(" \t")
    if not line or _paragraph(line):
        return line
    if line[0] in string.punctuation:
        escaped = "\\" + line
    else:  # an ordered list's marker, '1.' or '1)': the digits need no escape, the mark does
        digits = re.match(r"[0-9]*", line)
        at = digits.end() if digits else 0
        escaped = line[:at] + "\\" + line[at:]
    return escaped if _paragraph(escaped) else str(code(line))


def _paragraph(line: str) -> bool:
    return [t.type for t in _parser().parse(line)] == ["paragraph_open", "inline", "paragraph_close"]
