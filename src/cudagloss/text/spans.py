"""Where things are in author Markdown: the code in it (where braces are literal text) and the
line and column of an offset, as every report of a mistake inside one field needs them."""

from __future__ import annotations

from cudagloss.text.markdown import CODE_SPAN, blocks


def code_ranges(text: str, *, indented: bool = True) -> list[tuple[int, int]]:
    """Offsets of code in Markdown (blocks and inline spans), where braces are literal;
    indented=False leaves out what only may be an indented code block."""
    ranges: list[tuple[int, int]] = []
    offset = 0
    for block in blocks(text):
        if block.kind == "code" or (indented and block.kind == "indented"):
            ranges.append((offset, offset + len(block.text)))
        elif "`" in block.text:
            ranges += [(offset + m.start(), offset + m.end()) for m in CODE_SPAN.finditer(block.text)]
        offset += len(block.text)
    return ranges


def position(text: str, offset: int) -> tuple[int, int]:
    """The 1-based line and column of offset in text."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1
