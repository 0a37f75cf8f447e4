"""Safe YAML reading into position-carrying nodes.

We compose PyYAML nodes and never construct Python objects from tags, so a
`!!python/object` tag is reported instead of run. Composing keeps every node's line and
column, which every later diagnostic points at.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from cudagloss.errors import Diagnostic
from cudagloss.text.characters import char_name

_CORE = "tag:yaml.org,2002:"
ALLOWED_TAGS = {_CORE + t for t in ("str", "int", "float", "bool", "null", "timestamp", "seq", "map")}
MAX_DEPTH = 32
"""Nesting levels a file may have (a term needs four): deeper is refused, never a RecursionError."""
_ESCAPE = re.compile(r"\\(x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)", re.DOTALL)
_SHORT_ESCAPES = dict(zip("0abtvnfre N_LP", "\0\a\b\t\v\n\f\r\x1b \x85\xa0\u2028\u2029", strict=True))


class _TooDeep(Exception):
    def __init__(self, mark: Any) -> None:
        super().__init__("too deep")
        self.mark = mark


class _Loader(yaml.SafeLoader):
    """A SafeLoader whose composer refuses aliases (no billion-laughs, no shared nodes)."""

    def __init__(self, text: str, path: str) -> None:
        super().__init__(text)
        self.cg_path = path
        self.cg_diagnostics: list[Diagnostic] = []
        self.cg_depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self.cg_depth += 1
        try:
            if self.cg_depth > MAX_DEPTH:
                raise _TooDeep(self.peek_event().start_mark)  # type: ignore[no-untyped-call]
            return self._compose_node(parent, index)
        finally:
            self.cg_depth -= 1

    def _compose_node(self, parent: Any, index: Any) -> Any:
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


def _nodes(root: Node) -> Iterator[tuple[Node, int]]:
    """Every node under root with its depth (root is 1), in file order, without recursion."""
    stack = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        yield node, depth
        if isinstance(node, SequenceNode):
            stack += [(item, depth + 1) for item in reversed(node.value)]
        elif isinstance(node, MappingNode):
            stack += [(n, depth + 1) for pair in reversed(node.value) for n in reversed(pair)]


def _check_nodes(path: str, text: str, root: Node, out: list[Diagnostic]) -> None:
    """Refused tags, and escapes in double-quoted text that make a character other than
    printable ASCII, a tab or a line break: written out, any character meets the
    character rules of :mod:`cudagloss.text.characters`; escaped, it would slip past them."""
    for node, _depth in _nodes(root):
        mark = node.start_mark
        if node.tag not in ALLOWED_TAGS:
            tag = node.tag.replace(_CORE, "!!")
            out.append(
                Diagnostic(
                    path,
                    mark.line + 1,
                    mark.column + 1,
                    f"tag '{tag}' is not allowed",
                    "term files hold plain data (text, numbers, dates, lists, mappings); remove the tag",
                )
            )
        if isinstance(node, ScalarNode) and node.style == '"' and "\\" in text[mark.index : node.end_mark.index]:
            _check_escapes(path, text[mark.index : node.end_mark.index], mark, out)


def _check_escapes(path: str, span: str, mark: Any, out: list[Diagnostic]) -> None:
    for m in _ESCAPE.finditer(span):
        code = m.group(1)
        ch = chr(int(code[1:], 16)) if len(code) > 1 else _SHORT_ESCAPES.get(code, code)
        if ch in "\t\n" or " " <= ch <= "~":
            continue
        before = span[: m.start()]
        line = mark.line + 1 + before.count("\n")
        col = (mark.column + len(before) if "\n" not in before else len(before) - before.rindex("\n") - 1) + 1
        out.append(
            Diagnostic(
                path,
                line,
                col,
                f"the escape '{m.group()}' makes {char_name(ch)}, which is not plain text",
                "write the character itself, not an escape (invisible and control characters are not allowed)",
            )
        )


def _unusual_shape(root: Node) -> bool:
    """True when nodes nest deeper than MAX_DEPTH or a node occurs twice (how libyaml's
    composer resolves an alias): the exact Python path then reports it."""
    seen: set[int] = set()
    for node, depth in _nodes(root):
        if depth > MAX_DEPTH or id(node) in seen:
            return True
        seen.add(id(node))
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
    if node is not None and _unusual_shape(node):
        return False
    return node


def compose(path: str, text: str) -> tuple[Node | None, list[Diagnostic]]:
    """Parse one YAML document into nodes; never raises for bad input."""
    fast = _compose_fast(text)
    if isinstance(fast, Node):
        found: list[Diagnostic] = []
        _check_nodes(path, text, fast, found)
        return fast, found
    try:
        loader = _Loader(text, path)
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow (the constructor reads it)
        before = text[: exc.position]
        line, col = before.count("\n") + 1, exc.position - (before.rfind("\n") + 1) + 1
        return None, [Diagnostic(path, line, col, f"YAML cannot hold U+{exc.character:04X}", "delete the character")]
    try:
        node = loader.get_single_node()
    except _TooDeep as exc:
        return None, [
            Diagnostic(
                path,
                exc.mark.line + 1,
                exc.mark.column + 1,
                f"values are nested more than {MAX_DEPTH} levels deep",
                "a term file is a mapping of fields, some holding lists; remove the extra brackets or indentation",
            )
        ]
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
    _check_nodes(path, text, node, diagnostics)
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


def is_int(node: Node) -> bool:
    return isinstance(node, ScalarNode) and node.tag == _CORE + "int"
