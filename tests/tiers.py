"""The suite's slow and special tiers, and what puts a test in one.

Each tier is a pytest marker registered in pyproject.toml; `make test-fast` leaves them out and
`make test` runs everything. Five tiers are found from the code, so none can be forgotten: what a
test reaches counts in its own code, in the helper functions of tests/ it calls, and in every
fixture it uses, at any depth. A test that reaches the machinery of browser, builders, slurm or
netns must carry that marker, written where a reader sees it, or the run stops at collection
with the list of tests and the markers they lack (conftest.py). processes, which about a third of
the suite reaches, is put on at collection. The other tiers (servers, installs, limits) say how
long a test waits or works, which no reading of the code tells: they are set by hand.
"""

from __future__ import annotations

import inspect
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import CodeType, FunctionType
from typing import Any

TESTS = Path(__file__).resolve().parent

MARKED_BY_HAND = ("browser", "builders", "slurm", "netns")
"""Tiers recognised in a test's code that its source must also say."""
PUT_ON = ("processes",)
"""Tiers recognised in a test's code and put on at collection."""

NAMES = {"sync_playwright": "browser"}
"""A name or attribute that, read anywhere in the code, means the tier: Playwright's entry point."""

CONSTANTS = {"unshare": "netns"}
"""A string constant that means the tier: the command that makes a private network namespace."""

FIXTURES = {"browser": "browser", "make_copy": "processes"}
"""A fixture that means the tier by its name: tests/browsing.py's Chromium, conftest.py's make."""


def _machinery() -> dict[int, str]:
    """id() of each object that means a tier: sitebuild's builds and commands, the Slurm node,
    the subprocess module and conftest.py's cudagloss() (the command line in a fresh interpreter)."""
    found: dict[int, str] = {id(subprocess): "processes"}
    if "conftest" in sys.modules:
        found[id(sys.modules["conftest"].cudagloss)] = "processes"
    sitebuild = sys.modules.get("sitebuild")
    for name in ("build", "MKDOCS", "ZENSICAL"):
        if sitebuild is not None and hasattr(sitebuild, name):
            found[id(getattr(sitebuild, name))] = "builders"
    if "slurmnode" in sys.modules:
        found[id(sys.modules["slurmnode"])] = "slurm"
    return found


def _codes(code: CodeType) -> Iterator[CodeType]:
    """code and every function, lambda and comprehension defined inside it."""
    yield code
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from _codes(const)


def _ours(obj: object, roots: tuple[Path, ...]) -> bool:
    """A plain function defined under one of roots: a helper of the tests, worth reading too."""
    if not isinstance(obj, FunctionType):
        return False
    path = Path(obj.__code__.co_filename).resolve()
    return any(path == root or path.is_relative_to(root) for root in roots)


def reached(
    functions: Iterable[Any], machinery: dict[int, str] | None = None, roots: tuple[Path, ...] = (TESTS,)
) -> set[str]:
    """The tiers whose machinery functions reach, following the helpers they call that are
    defined under roots (tests/, and the test's own file)."""
    machinery = _machinery() if machinery is None else machinery
    tiers: set[str] = set()
    seen: set[int] = set()
    todo = [inspect.unwrap(f) for f in functions]
    while todo:
        function = todo.pop()
        if id(function) in seen or not isinstance(function, FunctionType):
            continue
        seen.add(id(function))
        for code in _codes(function.__code__):
            tiers.update(CONSTANTS[c] for c in code.co_consts if isinstance(c, str) and c in CONSTANTS)
            for name in code.co_names:
                tiers.update([NAMES[name]] if name in NAMES else [])
                obj = function.__globals__.get(name)
                if obj is None:
                    continue
                if id(obj) in machinery:
                    tiers.add(machinery[id(obj)])
                elif _ours(obj, roots):
                    todo.append(obj)
    return tiers


def needed(item: Any, machinery: dict[int, str] | None = None) -> set[str]:
    """The tiers a collected test reaches: its own function and every fixture it uses."""
    functions = [getattr(item, "function", None)]
    info = getattr(item, "_fixtureinfo", None)
    tiers = {FIXTURES[name] for name in getattr(item, "fixturenames", ()) if name in FIXTURES}
    if info is not None:
        for name in item.fixturenames:
            functions.extend(d.func for d in info.name2fixturedefs.get(name, ()))
    roots = (TESTS, Path(str(item.path)).resolve()) if hasattr(item, "path") else (TESTS,)
    return tiers | reached([f for f in functions if f is not None], machinery, roots)


def sort(items: Iterable[Any]) -> list[str]:
    """Put the PUT_ON tiers on the tests that reach them; 'test id: @pytest.mark.X' for each
    test that reaches a MARKED_BY_HAND tier its source does not mark it with."""
    machinery = _machinery()
    problems = []
    for item in items:
        tiers = needed(item, machinery)
        for tier in sorted(tiers & set(PUT_ON)):
            item.add_marker(tier)
        missing = sorted(tiers - {m.name for m in item.iter_markers()})
        if missing:
            problems.append(f"{item.nodeid}: " + ", ".join(f"@pytest.mark.{m}" for m in missing))
    return problems
