"""Line breaks of a file a machine edits: the edit is made on LF text, and every line then
gets back the break it had (CRLF, LF or a lone CR), so a Windows author's file stays theirs."""

from __future__ import annotations

import difflib
import re

_BREAK = re.compile(r"\r\n|\r|\n")


def to_lf(text: str) -> str:
    """text with every line break made LF (YAML reads all three alike)."""
    return _BREAK.sub("\n", text)


def restore(original: str, before: str, after: str) -> str:
    """after (an edit of before, which is original made LF) with original's breaks: each kept
    or changed line keeps its own, an added line takes the one of the line above it."""
    breaks = _BREAK.findall(original)
    common = max(set(breaks), key=breaks.count) if breaks else "\n"
    a, b = before.split("\n"), after.split("\n")
    ends = [common] * (len(b) - 1)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        for k, j in enumerate(range(j1, min(j2, len(ends)))):
            i = min(i1 + k, i2 - 1) if tag in ("equal", "replace") else i1 - 1
            ends[j] = breaks[i] if 0 <= i < len(breaks) else common
    return "".join(line + end for line, end in zip(b, ends, strict=False)) + b[-1]
