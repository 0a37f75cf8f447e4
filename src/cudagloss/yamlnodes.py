"""Safe YAML reading into position-carrying nodes.

We compose PyYAML nodes and never construct Python objects from tags, so a
`!!python/object` tag is reported instead of run. Composing keeps every node's line and
column, which every later diagnostic points at.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from .diagnostics import Diagnostic

_CORE = "tag:yaml.org,2002:"
ALLOWED_TAGS = {_CORE + t for t in ("str", "int", "float", "bool", "null", "timestamp", "seq", "map")}


class _Loader(yaml.SafeLoader):
    """A SafeLoader whose composer refuses aliases (no billion-laughs, no shared nodes)."""

    def __init__(self, text: str, path: str) -> None:
        super().__init__(text)
        self.cg_path = path
        self.cg_diagnostics: list[Diagnostic] = []

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.get_event()  # type: ignore[no-untyped-call]
            mark = event.start_mark
            self.cg_diagnostics.append(
                Diagnostic(
                    self.cg_path,
                    mark.line + 1,
                    mark.column + 1,
                    f"alias '*{event.anchor}' is not allowed",
                    "write the value out in full; term files do not use anchors and aliases",
                )
            )
            return ScalarNode(_CORE + "null", "", mark, event.end_mark)
        return super().compose_node(parent, index)


def _tab_diagnostics(path: str, text: str) -> list[Diagnostic]:
    out = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        stripped = line.lstrip(" \t")
        indent = line[: len(line) - len(stripped)]
        if "\t" in indent:
            out.append(
                Diagnostic(
                    path,
                    lineno,
                    indent.index("\t") + 1,
                    "tab character in indentation",
                    "YAML indents with spaces only; replace the tab with spaces",
                )
            )
    return out


def _check_tags(path: str, node: Node, out: list[Diagnostic]) -> None:
    if node.tag not in ALLOWED_TAGS:
        tag = node.tag.replace(_CORE, "!!")
        out.append(
            Diagnostic(
                path,
                node.start_mark.line + 1,
                node.start_mark.column + 1,
                f"tag '{tag}' is not allowed",
                "term files hold plain data (text, numbers, dates, lists, mappings); remove the tag",
            )
        )
    if isinstance(node, SequenceNode):
        for item in node.value:
            _check_tags(path, item, out)
    elif isinstance(node, MappingNode):
        for key, value in node.value:
            _check_tags(path, key, out)
            _check_tags(path, value, out)


def _shares_nodes(node: Node, seen: set[int]) -> bool:
    """True when a node object occurs twice: how libyaml's composer resolves an alias."""
    if id(node) in seen:
        return True
    seen.add(id(node))
    if isinstance(node, SequenceNode):
        return any(_shares_nodes(item, seen) for item in node.value)
    if isinstance(node, MappingNode):
        return any(_shares_nodes(k, seen) or _shares_nodes(v, seen) for k, v in node.value)
    return False


def _compose_fast(text: str) -> Node | bool | None:
    """libyaml's composer (C, several times faster) for a file with nothing to report; False
    when it cannot tell (no libyaml, any error, an alias) and the exact Python path must run."""
    if not getattr(yaml, "__with_libyaml__", False):
        return False
    loader = yaml.CSafeLoader(text)
    try:
        node: Node | None = loader.get_single_node()
    except yaml.YAMLError:
        return False
    finally:
        loader.dispose()
    if node is not None and _shares_nodes(node, set()):
        return False
    return node


def compose(path: str, text: str) -> tuple[Node | None, list[Diagnostic]]:
    """Parse one YAML document into nodes; never raises for bad input."""
    fast = _compose_fast(text)
    if isinstance(fast, Node):
        found: list[Diagnostic] = []
        _check_tags(path, fast, found)
        return fast, found
    loader = _Loader(text, path)
    try:
        node = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        tabs = _tab_diagnostics(path, text)
        if tabs:
            return None, tabs
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = exc.problem or exc.context or "cannot be read"
        if "expected a single document" in (exc.context or ""):
            return None, [
                Diagnostic(
                    path,
                    line,
                    col,
                    "more than one YAML document in the file",
                    "a term file holds one mapping; remove the extra '---' line",
                )
            ]
        return None, [
            Diagnostic(
                path,
                line,
                col,
                f"YAML syntax error: {problem}",
                "check the indentation, and quote text that contains ': ' or starts with a special character",
            )
        ]
    except yaml.YAMLError as exc:  # reader errors: bad characters
        return None, [Diagnostic(path, 1, 1, f"YAML error: {exc}", "save the file as UTF-8 text")]
    finally:
        loader.dispose()
    diagnostics = list(loader.cg_diagnostics)
    if node is None:
        return None, [
            Diagnostic(
                path, 1, 1, "the file is empty", "a term file is a mapping of fields; see schema/term.schema.json"
            )
        ]
    _check_tags(path, node, diagnostics)
    return node, diagnostics


def kind(node: Node) -> str:
    """How a node's type reads in a message: 'text', 'a list', 'a number'..."""
    if isinstance(node, MappingNode):
        return "a mapping"
    if isinstance(node, SequenceNode):
        return "a list"
    return {
        _CORE + "str": "text",
        _CORE + "int": "a number",
        _CORE + "float": "a number",
        _CORE + "bool": "true/false",
        _CORE + "null": "an empty value",
        _CORE + "timestamp": "a date",
    }.get(node.tag, "a tagged value")


def is_null(node: Node) -> bool:
    return isinstance(node, ScalarNode) and node.tag == _CORE + "null"


def is_text(node: Node) -> bool:
    return isinstance(node, ScalarNode) and node.tag == _CORE + "str"


def is_date(node: Node) -> bool:
    return isinstance(node, ScalarNode) and node.tag == _CORE + "timestamp"
