"""What of an experiment reaches the GPU (its recipe) and what only turns raw samples into
results (its summary), read from the code without running it.

A measurement should go stale when what reaches the GPU or how it is timed changes, not when
plumbing around it moves (issue 40). This module is the analysis that key rests on, split the
way the experiments already are: `run()` compiles, launches and times, then hands a raw dict
to `summarise()`, which is pure. Starting from those two functions it follows, through the
module's own functions, which upper-case constants and which verifier modules each side
reaches, and which kernel sources the experiment compiles (anatomy.kernels). Nothing is run;
the module must be importable (the registry imports it anyway) so that a constant's value is
the value the GPU saw, however it was computed.

A constant both sides use (a size the kernel is launched at and the summary divides by) is
part of the recipe. Procedure modules (verifier modules `run()` reaches: timing, the wait
kernel, clock reading) are named, with their `VERSION` where they declare one; a module with
none is named with `VERSION = None`, so that the key says what it does not know.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from cudagloss.model.keys import canonical_source, code_hash
from verifier.anatomy import kernels, spawned_step

ROOT = Path(__file__).resolve().parent.parent

CONSTANT = re.compile(r"[A-Z][A-Z0-9_]*")
WORDS = frozenset({"ID", "PURPOSE", "USES"})
"""Constants that name or describe the experiment: words, never part of what reaches the GPU."""
WORD_SUFFIXES = ("SOURCE",)
"""Constants named *SOURCE are kernel text (keyed as kernels) or citations (words)."""
RUN_ROOTS, SUMMARY_ROOTS = ("run",), ("summarise",)


@dataclass(frozen=True)
class Side:
    """What one side (the GPU run, or the summary) reaches: module functions, constants, and
    verifier modules (dotted names) it imports from."""

    functions: frozenset[str] = frozenset()
    constants: frozenset[str] = frozenset()
    modules: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Anatomy:
    """An experiment split into its recipe side and its summary side."""

    experiment: str
    run: Side
    summary: Side
    kernels: tuple[tuple[str, str, str], ...]
    """(where, language, sha256 of the source) of every kernel the experiment compiles."""
    constants: dict[str, Any] = field(default_factory=dict)
    """Every recipe constant's value, canonical(), by name."""


def _module_functions(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    return {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _constant_definitions(tree: ast.Module) -> dict[str, ast.AST]:
    """Module-level upper-case names and the statement that assigns each (the last one wins)."""
    found: dict[str, ast.AST] = {}
    for node in tree.body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        for target in targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name) and CONSTANT.fullmatch(name.id):
                    found[name.id] = node
    return found


def _imports(tree: ast.AST) -> dict[str, str]:
    """Local name -> the verifier module it comes from, for `from verifier.x import y` and
    `import verifier.x` anywhere in tree (a function may import on its own)."""
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("verifier"):
            for alias in node.names:  # `from verifier import cachedir` names a module
                found[alias.asname or alias.name] = (
                    f"verifier.{alias.name}" if node.module == "verifier" else node.module
                )
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("verifier"):
                    found[alias.asname or alias.name.split(".")[0]] = alias.name
    return found


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _spawns(node: ast.AST) -> list[tuple[str, str]]:
    """(module, step) of every spawn("module", "step", ...) in node: a child process runs
    verifier.<module>.step_<step> (verifier/spawn.py)."""
    return [found for sub in ast.walk(node) if isinstance(sub, ast.Call) if (found := spawned_step(sub)) is not None]


def reach(tree: ast.Module, roots: tuple[str, ...], stop: tuple[str, ...] = ()) -> Side:
    """The module functions, constants and verifier modules reachable from roots, following
    every name a reached function writes (a call, or a function passed as a callback) and every
    constant a reached constant is computed from; never into the functions named in stop (the
    run side stops at summarise, which it calls last). A module a reached function spawns a
    child process of (spawn("peer_pair", ...)) is reached too."""
    functions, definitions, imported = _module_functions(tree), _constant_definitions(tree), _imports(tree)
    todo, seen_functions, seen_constants, modules = [r for r in roots if r in functions], set(), set(), set()
    while todo:
        name = todo.pop()
        if name in seen_functions:
            continue
        seen_functions.add(name)
        node = functions[name]
        used = _names(node)
        modules |= {imported[n] for n in used if n in imported}
        modules |= set(_imports(node).values())
        todo += [n for n in used if n in functions and n not in stop]
        modules |= {f"verifier.{module}" for module, _step in _spawns(node)}
        seen_constants |= {n for n in used if n in definitions}
    pending = list(seen_constants)
    while pending:  # a constant computed from others reaches them too
        for other in _names(definitions[pending.pop()]):
            if other in definitions and other not in seen_constants:
                seen_constants.add(other)
                pending.append(other)
            elif other in imported:
                modules.add(imported[other])
    return Side(frozenset(seen_functions), frozenset(seen_constants), frozenset(modules))


def _is_word(name: str) -> bool:
    return name in WORDS or name.endswith(WORD_SUFFIXES)


def _stamp(path: Path) -> tuple[str, int, int]:
    """What a cached read is keyed by: the file, and its size and change time (an edit between
    two catalogs of one process, the live preview's, is read again)."""
    st = os.stat(path)
    return str(path), st.st_mtime_ns, st.st_size


@functools.lru_cache(maxsize=256)
def _parsed(stamp: tuple[str, int, int]) -> ast.Module:
    return ast.parse(Path(stamp[0]).read_text(encoding="utf-8"))


def declares_version(node: ast.stmt) -> bool:
    """Whether node is a module's `VERSION = ...` (or `VERSION: int = ...`)."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
    return any(isinstance(t, ast.Name) and t.id == "VERSION" for t in targets)


@functools.lru_cache(maxsize=256)
def _hashed(stamp: tuple[str, int, int]) -> str:
    """A summary-side module's code hash, less its VERSION: that belongs to the recipe key (a
    summary never reads it), so declaring or bumping it does not move the summary key."""
    path = Path(stamp[0])
    kept = ast.Module(body=[n for n in _parsed(stamp).body if not declares_version(n)], type_ignores=[])
    return code_hash([path], {path: canonical_source(kept)})


def _tree(module: ModuleType) -> ast.Module:
    """The module's syntax tree, parsed once for both keys (and once per catalog, not per experiment)."""
    return _parsed(_stamp(Path(str(module.__file__))))


def anatomy(module: ModuleType) -> Anatomy:
    """The experiment's recipe and summary sides (see the module's docstring)."""
    tree = _tree(module)
    run, summary = reach(tree, RUN_ROOTS, SUMMARY_ROOTS), reach(tree, SUMMARY_ROOTS)
    found = tuple((k.where, k.language, hashlib.sha256(k.source.encode()).hexdigest()) for k in kernels(module, ROOT))
    values = vars(module)
    constants = {n: canonical(values[n]) for n in sorted(run.constants) if n in values and not _is_word(n)}
    return Anatomy(str(module.ID), run, summary, found, constants)


def canonical(value: Any) -> Any:
    """value as JSON that is the same in every interpreter: sets sorted (their order moves with
    hash randomisation), mappings by key, tuples as lists, anything else by repr()."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (set, frozenset)):
        return sorted((canonical(v) for v in value), key=repr)
    if isinstance(value, dict):
        return [[canonical(k), canonical(v)] for k, v in sorted(value.items(), key=lambda kv: repr(canonical(kv[0])))]
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    return repr(value)


def _version(dotted: str) -> Any:
    """A procedure module's declared VERSION, or None where it declares none."""

    return getattr(importlib.import_module(dotted), "VERSION", None)


def recipe_payload(module: ModuleType) -> dict[str, Any]:
    """What the recipe key hashes: kernels, the run side's constants, the experiment's declared
    METHOD (1 where it declares none) and each procedure module's VERSION."""
    parts = anatomy(module)
    procedures = sorted(m for m in parts.run.modules if not m.startswith("verifier.kernels"))
    return {
        "kernels": [list(k) for k in parts.kernels],
        "constants": parts.constants,
        "method": getattr(module, "METHOD", 1),
        "procedures": {m: canonical(_version(m)) for m in procedures},
    }


def recipe_key(module: ModuleType) -> str:
    """sha256 over recipe_payload as canonical JSON."""
    return _key(recipe_payload(module))


def summary_payload(module: ModuleType) -> dict[str, Any]:
    """What the summary key hashes: the syntax tree of summarise and every module function it
    reaches (comments and docstrings apart), the constants it reads, and the code of each verifier
    module it imports from (whole but for its VERSION, the recipe's: a summary helper is pure code, and small)."""
    tree = _tree(module)
    side = reach(tree, SUMMARY_ROOTS)
    functions = _module_functions(tree)
    values = vars(module)

    files = sorted({Path(str(importlib.import_module(m).__file__)) for m in side.modules})
    return {
        "functions": {n: ast.dump(_without_docstring(functions[n])) for n in sorted(side.functions)},
        "constants": {n: canonical(values[n]) for n in sorted(side.constants) if n in values and not _is_word(n)},
        "modules": {f.relative_to(ROOT).as_posix(): _hashed(_stamp(f)) for f in files},
    }


def _without_docstring(node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
    body = (
        node.body[1:]
        if node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
        else node.body
    )
    return ast.Module(body=body, type_ignores=[])


def _key(payload: dict[str, Any]) -> str:
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=repr)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def summary_key(module: ModuleType) -> str:
    """sha256 over summary_payload as canonical JSON."""
    return _key(summary_payload(module))
