"""In-place edits of YAML text, the stamp stage's quick way (stamp.py decides what to set).

A new value is written over the characters of the scalar it replaces (found by PyYAML's
marks) and a missing key goes on a line of its own at the end of its block mapping, so
everything else an author wrote (comments, quoting, layout) stays byte for byte. The result
is parsed again and must hold exactly the planned data; a layout this does not handle is
answered with None, and the caller takes the round trip instead.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import re
from typing import Any

import yaml

LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

Where = tuple[str | int, ...]
"""A path of keys and indices from the top of the file."""
Plan = list[tuple[Where, object]]
"""What to set: (where, new value)."""


def parse(text: str) -> tuple[Any, Any] | None:
    """The document's node tree and its data, or None where PyYAML cannot read it."""
    loader = LOADER(text)
    try:
        node = loader.get_single_node()
        return node, (loader.construct_document(node) if node is not None else None)
    except yaml.YAMLError:
        return None
    finally:
        loader.dispose()


def assign(data: Any, plan: Plan) -> None:
    """Set each planned value in data (plain or round-trip), whose containers it names exist."""
    for where, value in plan:
        parent = data
        for key in where[:-1]:
            parent = parent[key]
        parent[where[-1]] = value


def edited(text: str, node: Any, data: Any, plan: Plan) -> str | None:
    """text with plan written into it, where it then loads as data with plan set; else None."""
    edits: list[tuple[int, int, str]] = []
    for where, value in plan:
        target = _find(node, where)
        if target is None:
            insert = _insertion(text, _find(node, where[:-1]), str(where[-1]), scalar(value))
            if insert is None:
                return None
            edits.append(insert)
            continue
        if not isinstance(target, yaml.ScalarNode) or target.style not in (None, "", "'", '"'):
            return None
        if target.start_mark.line != target.end_mark.line:
            return None
        edits.append((target.start_mark.index, target.end_mark.index, scalar(value)))
    out = text
    # from the end back; lines added at one place go in the plan's order (applied last first)
    for start, end, new in sorted(reversed(edits), key=lambda e: e[0], reverse=True):
        out = out[:start] + new + out[end:]
    expected = copy.deepcopy(data)
    assign(expected, plan)
    try:
        return out if yaml.load(out, Loader=LOADER) == expected else None
    except yaml.YAMLError:
        return None


def scalar(value: object) -> str:
    """A value as YAML text that loads back as itself (checked after the edit anyway)."""
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    text = str(value)
    if _PLAIN.match(text) and text.lower() not in ("pending", "null", "true", "false", "yes", "no", "on", "off"):
        return text
    return json.dumps(text, ensure_ascii=False)  # JSON strings are YAML double-quoted scalars


_PLAIN = re.compile(r"^[^\W\d_](?:[\w .'-]*[\w.])?$")
"""Names such as "Zoë O'Brien" stay unquoted, as an author would write them."""


def _insertion(text: str, mapping: Any, key: str, value: str) -> tuple[int, int, str] | None:
    """A new 'key: value' line at the end of a block mapping, indented like its keys (where
    the round-trip library would put it too), or None for a layout this does not handle.
    After a last value over several lines (a block scalar), it goes under its last line of
    text, above any blank line and comment that follow (they belong to what comes next)."""
    if not isinstance(mapping, yaml.MappingNode) or mapping.flow_style or not mapping.value:
        return None
    columns = {k.start_mark.column for k, _ in mapping.value}
    last = mapping.value[-1][1]
    if len(columns) != 1 or not isinstance(last, yaml.ScalarNode):
        return None
    end = last.end_mark.index
    if last.style in ("|", ">"):  # its end mark is past the blank lines after it: go back to its text
        end = last.start_mark.index + len(text[last.start_mark.index : end].rstrip())
    newline = text.find("\n", end)
    line = " " * columns.pop() + f"{key}: {value}"
    if newline < 0:
        return len(text), len(text), "\n" + line
    return newline + 1, newline + 1, line + "\n"


def _find(node: Any, where: Where) -> Any:
    for key in where:
        if isinstance(key, int) and isinstance(node, yaml.SequenceNode) and key < len(node.value):
            node = node.value[key]
        elif isinstance(key, str) and isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == key), None)
            if node is None:
                return None
        else:
            return None
    return node
