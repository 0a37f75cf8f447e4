"""Markdown as text: find the parts of author Markdown that must be left alone.

The autolinker and the HTML neutraliser both need to know which characters are prose and
which are code, headings, link syntax or URLs. We tokenise just enough Markdown for that;
anything unusual stays untouched, which is the safe direction for both users.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass

from cudagloss.text.charrefs import unescape

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^ {0,3}#{1,6}(\s|$)")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)\s*$")
_REFDEF = re.compile(r"^ {0,3}\[[^\]]+\]:")
_LIST = re.compile(r"^\s*([-*+]|\d+[.)])\s")

# Inline spans that are not prose: code, links and images (with their text), bracketed
# references, autolinks, bare URLs and HTML entities.
_INLINE = re.compile(
    r"""
    (?P<code>(?<![`\\])(?P<ticks>`+)(?!`)[^\n]+?(?<!`)(?P=ticks)(?!`))
  | (?P<link>!?\[(?:[^\[\]\n]|\[[^\]\n]*\])*\]
      (?:\([ \t]*<?(?:[^()\s<>]|\([^)\s]*\))*>?(?:[ \t]+"[^"\n]*")?[ \t]*\)|\[[^\]\n]*\])?)
  | (?P<auto><https?://[^>\s]+>)
  | (?P<url>https?://[^\s<>()\[\]]+)
  | (?P<entity>&\#?\w+;)
    """,
    re.VERBOSE | re.DOTALL,
)

_LINK_TARGET = re.compile(r"\]\(\s*<?((?:[^()\s<>]|\([^()\s]*\))*)")
_REF_TARGET = re.compile(r"^ {0,3}\[[^\]]+\]:[ \t]*\n?[ \t]*<?(\S*?)>?(?:\s|$)", re.MULTILINE)
_LINK_TEXT = re.compile(r"!?\[(?:[^\[\]\n]|\[[^\]\n]*\])*\]")


@dataclass(frozen=True)
class Block:
    """A run of lines: 'code' (a closed fence, or a reference definition), 'indented' (what
    may be an indented code block: raw HTML in it is still escaped, as a renderer that reads
    it as a paragraph would make it live), 'heading' or 'prose'."""

    kind: str
    text: str


@functools.lru_cache(maxsize=1 << 12)
def blocks(markdown: str) -> tuple[Block, ...]:
    """Split Markdown into code, heading and prose blocks, keeping every character. Memoised:
    the checks, the neutraliser and the autolinker each read the same field's blocks."""
    return tuple(_blocks(markdown))


def _blocks(markdown: str) -> Iterator[Block]:
    lines = markdown.splitlines(keepends=True)
    i = 0
    prose: list[str] = []
    prev_blank = True
    in_list = False

    def flush() -> Iterator[Block]:
        if prose:
            yield Block("prose", "".join(prose))
            prose.clear()

    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        # A fence is code only once it is closed, and a backtick fence's info string holds no
        # backtick: when in doubt a block is prose, the safe side for the HTML neutraliser.
        if fence and not (fence.group(1)[0] == "`" and "`" in line[fence.end() :]):
            char, size = fence.group(1)[0], len(fence.group(1))
            close = re.compile(rf"^ {{0,3}}{re.escape(char)}{{{size},}}[ \t]*\r?\n?$")
            j = i + 1
            while j < len(lines) and not close.match(lines[j]):
                j += 1
            if j < len(lines):
                yield from flush()
                yield Block("code", "".join(lines[i : j + 1]))
                i, prev_blank = j + 1, False
                continue
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        blank = not line.strip(" \t\r\n")  # what Markdown calls blank (not NBSP)
        if _ATX.match(line):
            yield from flush()
            yield Block("heading", line)
            i, prev_blank = i + 1, False
            continue
        if not blank and _SETEXT.match(nxt) and "|" not in nxt and not _LIST.match(line) and prev_blank:
            yield from flush()
            yield Block("heading", line + nxt)
            i, prev_blank = i + 2, False
            continue
        if _REFDEF.match(line) or (
            not blank and prev_blank and not in_list and (line.startswith("    ") or line.startswith("\t"))
        ):
            yield from flush()
            yield Block("code" if _REFDEF.match(line) else "indented", line)
            i, prev_blank = i + 1, False
            continue
        prose.append(line)
        if _LIST.match(line):
            in_list = True
        elif blank:
            pass
        elif not line.startswith((" ", "\t")):
            in_list = False
        prev_blank = blank
        i += 1
    yield from flush()


def protected_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every inline span in prose that is not plain prose."""
    return [m.span() for m in _INLINE.finditer(text)]


@functools.lru_cache(maxsize=1 << 14)
def link_targets(markdown: str) -> tuple[str, ...]:
    """Destinations of the inline links, images and reference definitions in Markdown."""
    out: list[str] = []
    for block in blocks(markdown):
        if block.kind == "prose":
            for m in _INLINE.finditer(block.text):
                if m.group("link"):
                    out += _LINK_TARGET.findall(m.group("link"))
    # Reference definitions, whose target may stand on the next line (so not per block).
    out += _REF_TARGET.findall(markdown)
    return tuple(out)


def neutralize_html(markdown: str) -> str:
    """Escape '<' outside code, autolinks and link destinations, so raw HTML in author text
    (a link's text included) shows as text."""
    if "<" not in markdown:  # nothing to escape: most text, and the check is cheap
        return markdown
    out: list[str] = []
    for block in blocks(markdown):
        if block.kind == "code" and not _REFDEF.match(block.text):
            out.append(block.text)
            continue
        pos = 0
        text = block.text
        for m in _INLINE.finditer(text):
            start, end = m.span()
            out.append(text[pos:start].replace("<", "&lt;"))
            if m.group("link"):
                label = _LINK_TEXT.match(text, start)
                split = label.end() if label else start
                out.append(text[start:split].replace("<", "&lt;"))
                out.append(text[split:end])
            else:
                out.append(text[start:end])
            pos = end
        out.append(text[pos:].replace("<", "&lt;"))
    return "".join(out)


@functools.lru_cache(maxsize=1 << 14)
def plain_text(markdown: str) -> str:
    """Inline Markdown reduced to the text a reader sees (for tooltips and JSON-LD)."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", markdown)
    text = re.sub(r"`+([^`]*)`+", r"\1", text)
    text = re.sub(r"(\*\*|__|\*)(\S.*?\S|\S)\1", r"\2", text)
    return unescape(" ".join(text.split()))


MAX_UNMATCHED = 32
"""Unclosed '[' or '(' a Markdown field may hold: Python-Markdown looks for each one's
closer to the end of its text, so many of them in a long text take time quadratic in
its length (measured: 500 of them before 60,000 characters took 9 s)."""


MAX_NESTING = 16
"""How deep brackets, lists and block quotes may nest in a Markdown field: Python-Markdown
takes time quadratic in bracket depth (19,500 nested pairs: 94 s) and recurses once per
nested list or quote level (about 500 levels end in RecursionError)."""


def unmatched_openers(markdown: str) -> list[int]:
    """Offsets of the '[' and '(' that nothing closes, in one linear pass over the brackets."""
    return _brackets(markdown)[0]


def deepest_bracket(markdown: str) -> tuple[int, int]:
    """(depth, offset) of the most deeply nested pair of brackets (unclosed ones are
    bounded by MAX_UNMATCHED instead)."""
    return _brackets(markdown)[1]


@functools.lru_cache(maxsize=1 << 12)
def _prose_only(markdown: str) -> str:
    """markdown with closed fenced blocks and code spans blanked (offsets kept): what the
    inline parser works through."""
    if "`" not in markdown and "~~~" not in markdown:
        return markdown
    out: list[str] = []
    for block in blocks(markdown):
        if block.kind == "code" and not _REFDEF.match(block.text):
            out.append(re.sub(r"[^\n]", " ", block.text))
        else:
            out.append(CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), block.text))
    return "".join(out)


@functools.lru_cache(maxsize=1 << 12)
def _brackets(markdown: str) -> tuple[list[int], tuple[int, int]]:
    markdown = _prose_only(markdown)
    stacks: dict[str, list[int]] = {"[": [], "(": []}
    closers = {"]": "[", ")": "("}
    deepest = (0, 0)
    for m in _BRACKET.finditer(markdown):
        char = m.group()
        if char in stacks:
            stacks[char].append(m.start())
        elif stacks[closers[char]]:
            depth = len(stacks["["]) + len(stacks["("])  # of the pair this closes
            opened = stacks[closers[char]].pop()
            if depth > deepest[0]:
                deepest = (depth, opened)
    return sorted(stacks["["] + stacks["("]), deepest


_BLOCK_MARKERS = re.compile(r"(?:[ \t]*(?:[-+*]|\d{1,9}[.)])(?=[ \t]|$)|[ \t]*>)")


def deepest_block(markdown: str) -> tuple[int, int]:
    """(depth, offset) of the line whose list markers, quote markers and indentation nest
    deepest (each marker or four columns of indentation is a level)."""
    deepest = (0, 0)
    offset = 0
    # Indentation and markers are read from the author's line, code from the prose: a code span
    # that opens a line is blanked there, and its blanks are neither indentation nor a marker
    # ("nested 20 deep" for a long span was a false alarm).
    for line, raw in zip(
        _prose_only(markdown).splitlines(keepends=True), markdown.splitlines(keepends=True), strict=True
    ):
        stripped = raw.lstrip(" \t")
        if not line.strip():
            offset += len(line)
            continue
        indent = len(raw[: len(raw) - len(stripped)].expandtabs(4))
        depth = indent // 4
        pos = len(raw) - len(stripped)
        while (m := _BLOCK_MARKERS.match(raw, pos)) and m.end() > pos:
            depth += 1
            pos = m.end()
        if depth > deepest[0]:
            deepest = (depth, offset)
        offset += len(line)
    return deepest


_BRACKET = re.compile(r"[\[\]()]")


# Script schemes run even with a space after the colon; 'data:', 'file:' and 'blob:' URLs
# have none, and prose ('Data: 5 GB', 'to a file: its name') always does.
_SCHEME_WORD = re.compile(
    r"(?<![a-z0-9+.-])(?:(javascript|vbscript|livescript)[ \t]*:|(data|file|blob):(?=[^\s]))", re.IGNORECASE
)
CODE_SPAN = re.compile(r"(?<![`\\])(`+)(?!`)[^\n]+?(?<!`)\1(?!`)")
"""An inline code span as we count it: not opened by an escaped backtick, and on one line.
Renderers let a span run over lines, but a line can also start a block that ends the
paragraph first (a fence, a heading); a span over lines is taken for prose, the safe side."""


def dangerous_schemes(markdown: str) -> list[tuple[int, str]]:
    """(offset, word) of every 'javascript:', 'data:' and the like outside code, after the
    entity decoding a browser does and without the tabs and line breaks it ignores in a
    URL: whatever form a link takes, its scheme is caught here."""
    found: list[tuple[int, str]] = []
    offset = 0
    for block in blocks(markdown):
        if block.kind != "code" or _REFDEF.match(block.text):
            prose = CODE_SPAN.sub(lambda m: " " * len(m.group()), block.text)
            if ":" in prose:
                decoded = unescape(prose).replace("\t", "").replace("\n", "").replace("\r", "")
                for m in _SCHEME_WORD.finditer(decoded):
                    word = (m.group(1) or m.group(2)).lower()
                    found.append((offset + min(m.start(), len(block.text) - 1), word))
        offset += len(block.text)
    return found


def link_scheme(target: str) -> str:
    """The scheme a browser would see in a link target, after the entity decoding and
    whitespace removal it does ('jav&#x61;script:' and ' java\\tscript:' are javascript)."""
    decoded = unescape(target)
    squeezed = "".join(c for c in decoded if ord(c) > 0x20 and c not in "\x7f\u00a0")
    head, colon, _ = squeezed.partition(":")
    if not colon or "/" in head or "?" in head or "#" in head:
        return ""
    return head.lower()
