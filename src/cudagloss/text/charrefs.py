"""Numeric character references bounded before Python's html module reads them.

`html.unescape` turns `&#NNN;` into an int, and Python refuses to convert a string of more than
4300 digits (sys.get_int_max_str_digits): a term body, a diagram or a fetched page holding
`&#0000…65;` or `&#99999…;` would end in a traceback instead of a line. bound_charrefs rewrites
every numeric reference first: leading zeros dropped (`&#00065;` is still "A", as a browser reads
it), and one whose digits still pass MAX_DIGITS replaced with U+FFFD, which is what it decodes to
anyway (any such number is past U+10FFFF). Linear in the text, whatever its references.
"""

from __future__ import annotations

import html
import re

MAX_DIGITS = 8
"""Digits a numeric reference keeps after its leading zeros: U+10FFFF is 1114111 (7 digits) and
10FFFF in hex (6), so every longer one names no character and decodes to U+FFFD."""

SHORT = 32
"""A reference this long or shorter is left as written, so text without long ones is unchanged
(a diagram's line:col positions stay those of its file)."""

_NUMERIC = re.compile(r"&#(?:([xX])0*([0-9a-fA-F]+)|0*([0-9]+));?")
"""A numeric reference with at least one digit after its zeros (all zeros: `&#0;`, kept as is)."""


def _bounded(match: re.Match[str]) -> str:
    if len(match.group(0)) <= SHORT:
        return match.group(0)
    x, hex_digits, digits = match.groups()
    kept = hex_digits if x else digits
    if len(kept) > MAX_DIGITS:
        return "\N{REPLACEMENT CHARACTER}"
    return f"&#{x or ''}{kept};"


def bound_charrefs(text: str) -> str:
    """text with every numeric character reference short enough for int(): same decoded text."""
    return _NUMERIC.sub(_bounded, text) if "&#" in text else text


def unescape(text: str) -> str:
    """html.unescape that never raises, whatever the references in text."""
    return html.unescape(bound_charrefs(text))
