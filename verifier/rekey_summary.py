"""The summary key a file would carry had it been made before an edit the summary cannot see.

The summary key hashes each verifier module `summarise()` imports from whole (verifier/recipe.py),
so an edit to a part of such a module that no summary runs moves the key all the same: moving
profile.py's command-line entry out (it imported the registry: an import cycle, issue 40) moves
coalescing's. verifier/rekey.py re-keys a file's summary when, and only when, its key is the one
the modules' older text (at a git revision) gives, and every module-level definition the summary
reaches in each module that changed since (its functions, classes, constants and imports,
followed through one another) is the same statement then and now: the summary computes what it
did.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from cudagloss.model.keys import canonical_source, code_hash
from verifier.recipe import (
    ROOT,
    SUMMARY_ROOTS,
    _constant_definitions,
    _key,
    _module_functions,
    _tree,
    declares_version,
    reach,
    summary_payload,
)

OldText = Callable[[str], "str | None"]
"""A module's text at the older revision, by its path under the repository; None: it had none."""


def _bound(tree: ast.Module) -> dict[str, ast.stmt]:
    """Each module-level name and the statement that binds it (the last one wins)."""
    found: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found[node.name] = node
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found |= {(a.asname or a.name.split(".")[0]): node for a in node.names}
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and not declares_version(node):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found |= {n.id: node for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return found


def _uses(node: ast.stmt) -> set[str]:
    """The names node reads, less a function's own locals (its arguments and the names it
    assigns: `launches(outcome, counters, ...)` does not call the module's counters()). A name a
    comprehension binds is followed all the same: followed too far, nothing is missed."""
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return names
    arguments = node.args
    own = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}
    own |= {a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None}
    stored = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    bound_in_comprehensions = {
        n.id
        for c in ast.walk(node)
        if isinstance(c, ast.comprehension)
        for n in ast.walk(c.target)
        if isinstance(n, ast.Name)
    }
    return names - own - (stored - bound_in_comprehensions)


def _reached(bound: dict[str, ast.stmt], roots: set[str]) -> set[str]:
    todo, seen = list(roots), set()
    while todo:
        name = todo.pop()
        if name in seen or name not in bound:
            continue
        seen.add(name)
        todo += _uses(bound[name])
    return seen


def used_from(module: ModuleType) -> dict[str, set[str] | None]:
    """Each verifier module the summary side imports from -> the names it uses of it (None: the
    module itself is imported, so all of it counts)."""
    tree = _tree(module)
    side = reach(tree, SUMMARY_ROOTS)
    functions, constants = _module_functions(tree), _constant_definitions(tree)
    nodes = [functions[f] for f in side.functions] + [constants[c] for c in side.constants]
    used = {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name)}
    found: dict[str, set[str] | None] = {m: set() for m in side.modules}
    imports = [*tree.body, *(sub for node in nodes for sub in ast.walk(node))]  # not the run side's own
    for node in imports:
        if isinstance(node, ast.ImportFrom) and node.module in found:
            names = found[node.module]
            for alias in node.names:
                if names is not None and (alias.asname or alias.name) in used:
                    names.add(alias.name)
    return {m: (names if names else None) for m, names in found.items()}


def same_for_summary(old: str, new: str, roots: set[str] | None) -> bool:
    """Whether every definition roots reach in the module (all of it where roots is None) is the
    same statement in old and new text."""
    before, after = _bound(ast.parse(old)), _bound(ast.parse(new))
    names = set(before) | set(after) if roots is None else _reached(before, roots) | _reached(after, roots)
    text = {n: canonical_source(s) for n, s in before.items()}
    return all(n in before and n in after and text[n] == canonical_source(after[n]) for n in names)


def old_summary_key(module: ModuleType, old_text: OldText) -> str | None:
    """The summary key module gave with its summary-side modules as old_text has them, or None
    where one of them is new since, or changed in a part the summary reaches."""
    payload = summary_payload(module)
    for dotted, roots in used_from(module).items():
        path = Path(str(importlib.import_module(dotted).__file__))
        shown = path.relative_to(ROOT).as_posix()
        old = old_text(shown)
        if old is None or not same_for_summary(old, path.read_text(encoding="utf-8"), roots):
            return None
        kept = ast.Module(body=[n for n in ast.parse(old).body if not declares_version(n)], type_ignores=[])
        payload["modules"][shown] = code_hash([path], {path: canonical_source(kept)})
    return _key(payload)
