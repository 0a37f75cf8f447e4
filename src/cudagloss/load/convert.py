"""Turn composed YAML nodes into model dataclasses, driven by the classes' type hints.

Types are read from the model, not guessed from YAML's implicit typing (no 'no' turning
into False): a field that wants text gets text or a clear error. Every error is collected;
positions of every value are kept for the checks that come after.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import re
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Literal, Union

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from cudagloss.check.fields import bounds
from cudagloss.errors import Diagnostic, did_you_mean
from cudagloss.load.yamlnodes import compose, is_date, is_int, is_null, is_text, kind
from cudagloss.model.limits import COUNT_MAX
from cudagloss.model.positions import Positions
from cudagloss.text.characters import scan_text

INVALID: Any = object()
"""Returned for a value that could not be converted (its diagnostic is already recorded)."""

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_COUNT = re.compile(r"[0-9]{1,7}")


@dataclass
class Converter:
    """Converts one file's nodes; collects diagnostics and positions as it goes."""

    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    positions: Positions = field(default_factory=Positions)

    def error(self, node: Node, message: str, hint: str = "") -> Any:
        mark = node.start_mark
        self.diagnostics.append(Diagnostic(self.path, mark.line + 1, mark.column + 1, message, hint))
        return INVALID

    def convert(self, node: Node, hint_type: Any, where: str) -> Any:
        """Convert node to the type hint_type; `where` is the field path for messages."""
        mark = node.start_mark
        self.positions.values[where] = (mark.line + 1, mark.column + 1)
        if isinstance(node, ScalarNode) and node.style in ("|", ">"):
            self.positions.block_first_line[where] = mark.line + 2
        label = f"{where}: " if where else ""
        origin = typing.get_origin(hint_type)
        if dataclasses.is_dataclass(hint_type):
            return self._dataclass(node, hint_type, where, label)
        if origin is list:
            return self._list(node, typing.get_args(hint_type)[0], where, label)
        if origin in (Union, types.UnionType):
            return self._union(node, typing.get_args(hint_type), where, label)
        if origin is Literal:
            return self._literal(node, typing.get_args(hint_type), label)
        if hint_type is str:
            return self._text(node, label)
        if hint_type is dt.date:
            return self._date(node, label, allow_pending=False)
        if hint_type is int:
            return self._count(node, label)
        raise TypeError(f"unsupported model type {hint_type!r}")  # a bug in the model, not the file

    def _text(self, node: Node, label: str) -> Any:
        if is_text(node):
            return node.value
        if is_null(node):
            return self.error(node, f"{label}is empty", "write the text after the colon, or remove the field")
        return self.error(
            node,
            f"{label}expected text, got {kind(node)}",
            "put the value in quotes to make it text"
            if isinstance(node, ScalarNode)
            else "write a single line of text here",
        )

    def _count(self, node: Node, label: str) -> Any:
        """A counter the tools write: plain decimal digits, at most COUNT_MAX (no sign, no
        hexadecimal or underscores, which YAML 1.1 would read as numbers too)."""
        value = node.value if isinstance(node, ScalarNode) else ""
        if is_int(node) and _COUNT.fullmatch(value) and int(value) <= COUNT_MAX:
            return int(value)
        return self.error(node, f"{label}expected a whole number from 0 to {COUNT_MAX:,}", "write digits only, e.g. 2")

    def _date(self, node: Node, label: str, *, allow_pending: bool) -> Any:
        hint = "write dates as YYYY-MM-DD, e.g. 2026-09-01" + (", or 'pending'" if allow_pending else "")
        if allow_pending and is_text(node) and node.value == "pending":
            return "pending"
        if is_date(node) or is_text(node):
            value = node.value
            if _DATE.match(value):
                try:
                    return dt.date.fromisoformat(value)
                except ValueError:
                    return self.error(node, f"{label}'{value}' is not a real date", hint)
            return self.error(node, f"{label}'{value}' is not a date", hint)
        return self.error(node, f"{label}expected a date, got {kind(node)}", hint)

    def _literal(self, node: Node, choices: tuple[Any, ...], label: str) -> Any:
        if is_text(node) and node.value in choices:
            return node.value
        shown = ", ".join(f"'{c}'" for c in choices)
        return self.error(node, f"{label}expected one of {shown}", "")

    def _union(self, node: Node, options: tuple[Any, ...], where: str, label: str) -> Any:
        rest = [o for o in options if o is not type(None)]
        if len(rest) < len(options) and is_null(node):
            return None
        if set(rest) == {dt.date, typing.Literal["pending"]}:
            return self._date(node, label, allow_pending=True)
        if len(rest) == 1:
            return self.convert(node, rest[0], where)
        raise TypeError(f"unsupported union {options!r}")

    def _list(self, node: Node, item_type: Any, where: str, label: str) -> Any:
        if is_null(node):
            return []
        if not isinstance(node, SequenceNode):
            return self.error(
                node,
                f"{label}expected a list, got {kind(node)}",
                "write one item per line, each starting with '- '",
            )
        items = [self.convert(item, item_type, f"{where}[{i}]") for i, item in enumerate(node.value)]
        return INVALID if any(i is INVALID for i in items) else items

    def _dataclass(self, node: Node, cls: Any, where: str, label: str) -> Any:
        if not isinstance(node, MappingNode):
            return self.error(
                node,
                f"{label}expected a mapping of fields, got {kind(node)}",
                "write 'field: value' lines" + (" indented under the key" if where else ""),
            )
        hints, fields = _fields_of(cls)
        seen: dict[str, int] = {}
        values: dict[str, Any] = {}
        failed = False
        prefix = f"{where}." if where else ""
        for key_node, value_node in node.value:
            if not is_text(key_node):
                self.error(key_node, f"{label}field names must be text, got {kind(key_node)}", "")
                failed = True
                continue
            key = key_node.value
            sub = prefix + key
            if key in seen:
                self.error(
                    key_node, f"duplicate field '{sub}' (first set on line {seen[key]})", "remove one of the two"
                )
                failed = True
                continue
            seen[key] = key_node.start_mark.line + 1
            if key not in fields:
                self.error(
                    key_node,
                    f"unknown field '{sub}'{did_you_mean(key, fields)}",
                    f"the fields of {where or 'a term'} are: {', '.join(fields)}",
                )
                failed = True
                continue
            value = self.convert(value_node, hints[key], sub)
            if value is INVALID:
                failed = True
            else:
                values[key] = value
        for name, f in fields.items():
            if name in seen:
                continue
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                self.error(
                    node,
                    f"missing required field '{prefix}{name}'",
                    f"add '{name}:' ({f.metadata.get('doc', '')})".replace(" ()", ""),
                )
                failed = True
        return INVALID if failed else cls(**values)


@functools.cache
def _fields_of(cls: Any) -> tuple[dict[str, Any], dict[str, dataclasses.Field[Any]]]:
    """Type hints and fields of a model class: resolving the hints is slow, and they never change."""
    return typing.get_type_hints(cls), {f.name: f for f in dataclasses.fields(cls)}


def parse_file(shown: str, text: str, model: Any) -> tuple[Any, list[Diagnostic], Positions]:
    """One YAML file's text as a model object (None when it cannot be used), every mistake
    found, and where each value is: refused characters, then YAML, then types, then bounds.
    A refused character, tag or alias stops there, as anything after it is a follow-on."""
    hidden = scan_text(shown, text)
    if hidden:
        return None, hidden, Positions()
    node, found = compose(shown, text)
    if node is None or found:
        return None, found, Positions()
    conv = Converter(shown)
    value = conv.convert(node, model, "")
    if value is INVALID:
        return None, conv.diagnostics, conv.positions
    too_big = bounds(shown, value, conv.positions)
    return (None if too_big else value), conv.diagnostics + too_big, conv.positions
