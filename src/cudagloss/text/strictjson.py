"""Strict JSON for files a machine wrote and a person may have tampered with.

`json.loads` accepts NaN and Infinity, keeps the last of two equal keys, recurses once per
bracket (10,000 of them end in RecursionError) and forgets where each value was. This parser
refuses the first two, has no recursion (depth is a bound it reports), and remembers the
offset of every value and key, so a checker can name the line and column of what it rejects.
Strings and their escapes are decoded by the standard library's own scanner. Standard
library only: the verifier imports this on GPU nodes that have nothing else.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from json.decoder import JSONDecodeError, scanstring  # type: ignore[attr-defined]
from typing import Any, Union

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_NUMBER_MAX = 64
"""Digits in one number token: enough for any double, and int() is never handed 4,300."""
_LITERALS = {"true": True, "false": False, "null": None}
_CONSTANTS = ("NaN", "-Infinity", "Infinity")
_NUMBER_START = frozenset("-0123456789")
_STRING_PROBLEMS = {
    "Unterminated string starting at": "a string that never ends",
    "Invalid control character at": "a control character inside a string (JSON writes it as \\u00XX)",
    "Invalid \\escape": "an escape JSON does not have (\\n, \\t, \\uXXXX and a few more)",
    "Invalid \\uXXXX escape": "a \\u escape without four hex digits",
}

Key = str | int
Located = Union[int, "Where"]
"""Where a value is: a scalar's offset, or a container's Where."""


@dataclass
class Where:
    """A container's offset, and where each of its members (and, for an object, keys) are."""

    at: int
    members: dict[Key, Located] = field(default_factory=dict)
    keys: dict[str, int] = field(default_factory=dict)

    def offset(self, path: tuple[Key, ...], *, key: bool = False) -> int:
        """The offset of the value (or its key) at path, or of the nearest enclosing value."""
        here: Located = self
        for i, step in enumerate(path):
            if not isinstance(here, Where) or step not in here.members:
                break
            if key and i == len(path) - 1 and isinstance(step, str):
                return here.keys.get(step, here.at)
            here = here.members[step]
        return here if isinstance(here, int) else here.at


class JsonProblem(Exception):
    """Text that is not strict JSON, at a character offset (parsing stops there)."""

    def __init__(self, offset: int, message: str) -> None:
        super().__init__(message)
        self.offset, self.message = offset, message


@dataclass
class Parsed:
    value: Any
    where: Where
    duplicates: list[tuple[int, str]]
    """(offset, key) of every key that repeats one before it in the same object (the first is kept)."""


@dataclass
class _Open:
    """A container being filled: what it holds so far, where, and the key awaiting its value."""

    container: dict[str, Any] | list[Any]
    where: Where
    key: str = ""
    repeated: bool = False

    @property
    def closer(self) -> str:
        return "}" if isinstance(self.container, dict) else "]"

    def attach(self, value: Any, located: Located) -> None:
        if isinstance(self.container, list):
            self.where.members[len(self.container)] = located
            self.container.append(value)
        elif not self.repeated:
            self.container[self.key] = value
            self.where.members[self.key] = located


def parse(text: str, *, max_depth: int = 32, max_values: int = 1_000_000) -> Parsed:
    """Parse the one JSON value that fills text; raise JsonProblem at the first syntax error."""
    duplicates: list[tuple[int, str]] = []
    stack: list[_Open] = []
    pos = _skip(text, 0)
    if pos == len(text):
        raise JsonProblem(pos, "the file is empty" if not text else "the file holds only white space")
    for count in itertools.count(1):
        if count > max_values:
            raise JsonProblem(pos, f"more than {max_values:,} values in one file")
        char = text[pos : pos + 1]
        value: Any
        located: Located
        if char == "{" or char == "[":
            if len(stack) >= max_depth:
                raise JsonProblem(pos, f"nested deeper than {max_depth} levels")
            opened = _Open({} if char == "{" else [], Where(pos))
            pos = _skip(text, pos + 1)
            if not text.startswith(opened.closer, pos):
                stack.append(opened)
                if isinstance(opened.container, dict):
                    pos = _key(text, pos, opened, duplicates)
                continue
            value, located, pos = opened.container, opened.where, pos + 1
        else:
            located = pos
            value, pos = _scalar(text, pos)
        # A value is complete: attach it, then close every container that it completes.
        while stack:
            top = stack[-1]
            top.attach(value, located)
            pos = _skip(text, pos)
            sep = text[pos : pos + 1]
            if sep == ",":
                pos = _skip(text, pos + 1)
                if isinstance(top.container, dict):
                    pos = _key(text, pos, top, duplicates)
                break
            if sep != top.closer:
                raise JsonProblem(pos, f"expected ',' or '{top.closer}' here" + _found(text, pos))
            stack.pop()
            value, located, pos = top.container, top.where, pos + 1
        else:
            pos = _skip(text, pos)
            if pos != len(text):
                raise JsonProblem(pos, "more text after the JSON value" + _found(text, pos))
            return Parsed(value, located if isinstance(located, Where) else Where(located), duplicates)
    raise AssertionError("unreachable")


def _scalar(text: str, pos: int) -> tuple[Any, int]:
    """The string, number or literal at pos, and the offset after it."""
    char = text[pos : pos + 1]
    if char == '"':
        return _string(text, pos)
    if char in _NUMBER_START and char:
        match = _NUMBER.match(text, pos)
        if match:
            token = match.group()
            if len(token) > _NUMBER_MAX:
                raise JsonProblem(pos, f"a number {len(token):,} characters long")
            number: float | int = float(token) if match.group(1) or match.group(2) else int(token)
            return number, match.end()
    for name, literal in _LITERALS.items():
        if text.startswith(name, pos):
            return literal, pos + len(name)
    for name in _CONSTANTS:
        if text.startswith(name, pos):
            raise JsonProblem(pos, f"{name} is not a JSON number; every number here must be finite")
    raise JsonProblem(pos, "expected a JSON value here" + _found(text, pos))


def _string(text: str, pos: int) -> tuple[str, int]:
    try:
        return scanstring(text, pos + 1, True)  # type: ignore[no-any-return]
    except JSONDecodeError as exc:
        message = _STRING_PROBLEMS.get(exc.msg, exc.msg[:1].lower() + exc.msg[1:])
        raise JsonProblem(exc.pos, message) from None


def _key(text: str, pos: int, top: _Open, duplicates: list[tuple[int, str]]) -> int:
    """Read the key at pos and the colon after it into top; return where its value starts."""
    if not text.startswith('"', pos):
        raise JsonProblem(pos, "expected a key in double quotes here" + _found(text, pos))
    top.key, after = _string(text, pos)
    top.repeated = top.key in top.where.keys
    if top.repeated:
        duplicates.append((pos, top.key))
    else:
        top.where.keys[top.key] = pos
    after = _skip(text, after)
    if not text.startswith(":", after):
        raise JsonProblem(after, "expected ':' after the key" + _found(text, after))
    return _skip(text, after + 1)


def _skip(text: str, pos: int) -> int:
    match = _WS.match(text, pos)
    return match.end() if match else pos


def _found(text: str, pos: int) -> str:
    if pos >= len(text):
        return ", found the end of the file"
    return f", found {text[pos]!a}"


def line_col(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column (in characters) of a character offset."""
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1
