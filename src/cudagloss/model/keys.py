"""When a measurement is current: the keys it goes stale by, and the code hash older files carry.

A file of format 4 carries two keys (verifier/recipe.py): `recipe`, what reached the GPU and
how it was timed, and `summary`, the code that turned raw samples into its results. It is
current while both match the experiment as it is now, whatever moved around them (the runner,
the command line, the registry, the error boundary). A file older than that carries only
`code_hash`, over the experiment's module and the code it runs through, and is current while
that is unchanged. Duck-typed (Keyed), so that the model's types and the verifier share it
without importing each other.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol


class Keyed(Protocol):
    """A measurement, or what the verifier knows of an experiment now: both carry the three keys."""

    @property
    def code_hash(self) -> str: ...
    @property
    def recipe(self) -> str: ...
    @property
    def summary(self) -> str: ...


def made_the_same_way(a: Keyed, b: Keyed) -> bool:
    """Whether a and b stand for one recipe and one summary: by those keys where both carry
    them, else by the code hash (a file older than format 4)."""
    if a.recipe and b.recipe:
        return a.recipe == b.recipe and a.summary == b.summary
    return a.code_hash == b.code_hash


def only_summary_moved(made: Keyed, now: Keyed) -> bool:
    """Whether a file made by the same recipe was summarised by other code than now's: its
    results can be derived again from its raw samples, with no GPU."""
    return bool(made.recipe) and made.recipe == now.recipe and made.summary != now.summary


def _is_docstring(node: object) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _canonical(node: object) -> str:
    """A syntax tree as text that no comment, docstring, layout or Python version changes:
    positions are left out, and so are empty and None fields (3.12 added type_params=[] to
    every def; the GPU node's python3 need not be ours). A string standing alone as a
    statement (a docstring, anywhere) does nothing, and is dropped."""
    if isinstance(node, list):
        return "[" + ",".join(_canonical(n) for n in node if not _is_docstring(n)) + "]"
    if isinstance(node, ast.AST):
        fields = (f"{name}={_canonical(value)}" for name, value in ast.iter_fields(node) if value not in (None, []))
        return f"{type(node).__name__}({','.join(fields)})"
    return repr(node)


def canonical_source(tree: ast.AST) -> bytes:
    """A Python file's syntax tree as code_hash hashes it (read: for a tree already parsed, or
    parsed and then trimmed, as the summary key trims a module's VERSION)."""
    return _canonical(tree).encode()


def code_hash(paths: Iterable[Path], read: dict[Path, bytes] | None = None) -> str:
    """sha256 over the given files, in the order given: each one's name, then a Python
    file's syntax tree (so a comment, docstring or formatting edit keeps the hash and the
    measurements it made stay current) or another file's bytes. read: the files already
    canonicalised, by path (the catalog hashes the shared files once, not once per experiment)."""
    digest = hashlib.sha256()
    for path in paths:
        data = read.get(path) if read is not None else None
        if data is None:
            data = path.read_bytes()
            if path.suffix == ".py":
                data = _canonical(ast.parse(data, filename=str(path))).encode()
            if read is not None:
                read[path] = data
        digest.update(path.name.encode() + b"\0" + data + b"\0")
    return "sha256:" + digest.hexdigest()
