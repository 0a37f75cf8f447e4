"""How one value of a measurement file is checked: its type, its bounds, what it may hold.

A :class:`Checker` walks a parsed file (cudagloss.model.measurement_rules says what each
field must be) and collects every :class:`Issue` at the offset of the value (or key) at
fault, so that a file's every problem is reported at once. Standard library only: the
verifier imports this on GPU nodes.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cudagloss.text.emails import has_email
from cudagloss.text.strictjson import Key, Where

INT_LIMIT = 2**53
"""The largest magnitude of a number: integers up to it are exact in a double (and in a
reader's JavaScript), and a page never shows a 300-digit number."""
PROVENANCE_KEY = re.compile(r"[a-z][a-z0-9_]{0,63}")
"""A provenance key, and any key a path shows plainly ('results[3].unit')."""


def first_unseen(text: str, *, multiline: bool = False) -> int | None:
    """The index of the first control, invisible, direction-changing, private, unassigned or
    surrogate character (tab and newline are allowed where multiline), or None."""
    plain = text.replace("\n", "").replace("\t", "") if multiline else text
    if plain.isprintable():
        return None
    return next(i for i, ch in enumerate(text) if not ch.isprintable() and not (multiline and ch in "\n\t"))


def shown(value: str, limit: int = 40) -> str:
    """A value quoted for a message: escaped (a terminal never sees its controls) and short."""
    text = value if len(value) <= limit else value[:limit] + "…"
    return ascii(text) if not (text.isascii() and text.isprintable()) else repr(text)


MISSING: Any = object()
"""A field that is absent: reported once, as missing, and not again as the wrong type."""


def kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    return {str: "text", dict: "an object", list: "an array", type(None): "null"}.get(type(value), "a value")


def dotted(path: tuple[Key, ...]) -> str:
    """'results[3].unit'; a key that is not a plain name is quoted and escaped."""
    steps = (
        f"[{p}]" if isinstance(p, int) else f".{p}" if PROVENANCE_KEY.fullmatch(p) else f"[{shown(p)}]" for p in path
    )
    return "".join(steps).lstrip(".") or "the file"


@dataclass(frozen=True)
class Issue:
    offset: int
    message: str
    hint: str = ""
    """Empty for the usual hint (measurement files are written by make verify)."""


class Checker:
    """Walks a parsed file, collecting every Issue; each method returns the value or None."""

    def __init__(self, where: Where) -> None:
        self.where = where
        self.issues: list[Issue] = []

    def fail(self, path: tuple[Key, ...], message: str, *, key: str = "") -> None:
        """An issue with the value at path, or (given key) with that key of the object at path."""
        offset = self.where.offset((*path, key), key=True) if key else self.where.offset(path)
        self.issues.append(Issue(offset, f"{dotted(path)}: {message}"))

    def text(
        self,
        value: Any,
        path: tuple[Key, ...],
        limit: int,
        *,
        multiline: bool = False,
        pattern: re.Pattern[str] | None = None,
        like: str = "",
    ) -> str | None:
        if value is MISSING:
            return None
        if not isinstance(value, str):
            self.fail(path, f"must be text, not {kind(value)}")
            return None
        if len(value) > limit:
            self.fail(path, f"is {len(value):,} characters long; the limit is {limit:,}")
            return None
        bad = first_unseen(value, multiline=multiline)
        if bad is not None:
            char = value[bad]
            name = unicodedata.name(char, "a control character")
            self.fail(path, f"holds U+{ord(char):04X} ({name}) at character {bad + 1}; text here must be visible")
            return None
        if pattern is not None and (pattern.fullmatch(value) is None or len(value) > limit):
            self.fail(path, f"{shown(value)} is not {like}")
            return None
        if has_email(value):
            message = f"{dotted(path)}: holds an e-mail address, which would be published"
            hint = "e-mail addresses are never published; remove it (make verify writes none)"
            self.issues.append(Issue(self.where.offset(path), message, hint))
            return None
        return value

    def name(self, value: Any, path: tuple[Key, ...], test: Callable[[str], bool], like: str) -> str | None:
        checked = self.text(value, path, 64)
        if checked is not None and not test(checked):
            self.fail(path, f"{shown(checked)} is not {like}")
            return None
        return checked

    def number(self, value: Any, path: tuple[Key, ...]) -> float | int | None:
        if value is MISSING:
            pass
        elif isinstance(value, bool) or not isinstance(value, int | float):
            self.fail(path, f"must be a number, not {kind(value)}")
        elif isinstance(value, float) and not math.isfinite(value):
            self.fail(path, "is too large to be a finite number")
        elif isinstance(value, int) and abs(value) > INT_LIMIT:
            self.fail(path, f"is an integer beyond ±2^53 ({len(str(abs(value)))} digits)")
        elif abs(value) > INT_LIMIT:
            self.fail(path, f"is {value:.3g}, beyond ±2^53 (no measurement here is that large)")
        else:
            return value
        return None

    def scalar(self, value: Any, path: tuple[Key, ...], text_limit: int, *, multiline: bool = False) -> Any:
        if value is None or isinstance(value, bool):
            return value
        if value is MISSING:
            return None
        if isinstance(value, int | float):
            return self.number(value, path)
        if isinstance(value, str):
            return self.text(value, path, text_limit, multiline=multiline)
        self.fail(path, f"must be text, a number, true/false or null, not {kind(value)}")
        return None

    def fields(
        self, value: Any, path: tuple[Key, ...], known: tuple[str, ...], required: tuple[str, ...]
    ) -> dict[str, Any] | None:
        """An object with only known keys and every required one."""
        if not isinstance(value, dict):
            self.fail(path, f"must be an object, not {kind(value)}")
            return None
        for key in value:
            if key not in known:
                self.fail(path, f"unknown field {shown(key)}", key=key)
        for key in required:
            if key not in value:
                self.fail(path, f"missing field '{key}'")
        return value

    def array(self, value: Any, path: tuple[Key, ...], limit: int) -> list[Any]:
        if value is MISSING:
            return []
        if not isinstance(value, list):
            self.fail(path, f"must be an array, not {kind(value)}")
            return []
        if len(value) > limit:
            self.fail(path, f"holds {len(value):,} items; the limit is {limit:,}")
            return []
        return value
