"""One experiment contract (issue 40): what an experiment module must hold, checked once.

An experiment is a module (verifier/experiments/<name>.py) whose names the registry, the runner
and the recipe read: ID, PURPOSE, run(device, repeats, workdir), summarise, and optionally
METHOD, USES, HOST_WIDE and profile. `Experiment.from_module` reads them once, refuses a module
that lacks one or holds the wrong kind, and names the module and what is wrong, so that a slip
fails at import of the registry, not halfway through a GPU run.

The registry builds the contracts (registry.CONTRACTS); the modules stay as they were, but for
`summarise = None` where run() reports alone: their recipe and summary keys (verifier/recipe.py)
are computed from the module exactly as before (`Experiment.keys`), so no measurement goes
stale by the contract.

The contract also holds at run time: `run_checked` records every source NVRTC compiles while
run() works, in this process and in the fresh ones it spawns (verifier/compiled.py), and fails
the run by a gate where one is not a source the experiment declares, so that the kernels a
recipe key hashes cannot drift from those that reached the GPU.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from cudagloss.model.measurement import KernelSource
from verifier import compiled
from verifier.anatomy import kernels, spawned_step
from verifier.experiment import ROOT, Outcome
from verifier.recipe import anatomy, recipe_key, summary_key

ID = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
"""An experiment id: the folder measurements/<id>/ and the citation terms write."""
RUN_PARAMETERS = ("device", "repeats")
"""run()'s first two parameters by name; the third, the scratch folder, is named as each module likes."""
VERIFIER = ROOT / "verifier"
GATE = "every kernel compiled is one the experiment declares"


class ContractError(TypeError):
    """A module that is not an experiment as the registry needs it: what is wrong, by module."""


def _fail(module: ModuleType, problem: str) -> ContractError:
    return ContractError(f"experiment module {module.__name__} ({module.__file__}): {problem}")


def _is_method(value: Any) -> bool:
    """A METHOD: a version (int from 1), or how each result is measured ({'pinned': 'gpu-queued'})."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _optional_callable(module: ModuleType, name: str) -> Callable[..., Any] | None:
    value = getattr(module, name, None)
    if value is not None and not callable(value):
        raise _fail(module, f"{name} is {type(value).__name__}, not a function")
    return value


@dataclass(frozen=True)
class Experiment:
    """An experiment as the verifier uses it: who it is, what it runs, what it summarises with."""

    id: str
    purpose: str
    method: int | dict[str, str]
    """METHOD, part of the recipe key: the measuring method's version (1 where undeclared), or
    how each kind of result is measured (host_transfer's {'pinned': 'gpu-queued', ...})."""
    run: Callable[..., Outcome]
    """run(device, repeats, workdir): compiles, launches, times, and returns summarise(raw, ...)."""
    summarise: Callable[..., Outcome] | None
    """The pure half, raw samples to results; None for an experiment whose run() reports directly."""
    module: ModuleType
    uses: tuple[str, ...] = ()
    host_wide: bool = False
    """Measures a host's cards together (HOST_WIDE): devices.py runs it once per host."""
    profile: Callable[..., Any] | None = None

    @classmethod
    def from_module(cls, module: ModuleType) -> Experiment:
        """The module's contract; ContractError naming the module and what it lacks."""
        names = vars(module)
        missing = [n for n in ("ID", "PURPOSE", "run") if n not in names]
        if missing:
            raise _fail(module, f"no {', '.join(missing)} (an experiment defines ID, PURPOSE and run)")
        ident, purpose, method = names["ID"], names["PURPOSE"], names.get("METHOD", 1)
        if not (isinstance(ident, str) and ID.fullmatch(ident)):
            raise _fail(module, f"ID {ident!r} is not an id of lower-case words joined by '-'")
        if not (isinstance(purpose, str) and purpose.strip()):
            raise _fail(module, "PURPOSE is not a sentence of text")
        if not _is_method(method):
            raise _fail(module, f"METHOD {method!r} is neither a whole number from 1 nor a mapping of words to words")
        run = names["run"]
        if not inspect.isfunction(run):
            raise _fail(module, "run is not a function")
        params = list(inspect.signature(run).parameters.values())
        if len(params) != 3 or tuple(p.name for p in params[:2]) != RUN_PARAMETERS:
            raise _fail(module, f"run{inspect.signature(run)} does not take (device, repeats, workdir)")
        if "summarise" not in names:
            raise _fail(module, "no summarise (set summarise = None where run() reports without one)")
        uses = names.get("USES", ())
        if not (isinstance(uses, tuple) and all(isinstance(u, str) and (VERIFIER / u).is_file() for u in uses)):
            raise _fail(module, f"USES {uses!r} is not a tuple of files under verifier/")
        return cls(
            ident,
            purpose,
            method,
            run,
            _optional_callable(module, "summarise"),
            module,
            uses,
            bool(names.get("HOST_WIDE", False)),
            _optional_callable(module, "profile"),
        )

    def kernels(self) -> tuple[KernelSource, ...]:
        """The kernel sources the experiment compiles, as its recipe hashes them and its page shows
        them (anatomy.kernels): pure, read from the imported module, no GPU."""
        return kernels(self.module, ROOT)

    def keys(self) -> tuple[str, str]:
        """(recipe key, summary key), computed from the module as they always were."""
        return recipe_key(self.module), summary_key(self.module)

    def declared(self) -> frozenset[str]:
        """The sha256 of every source run() may compile: its kernels, and those of the verifier
        modules it runs through (gpu.py's hold, which the recipe names by that module)."""
        found = [*self.kernels()]
        for name in procedure_modules(self.module):
            procedure = importlib.import_module(name)
            if not hasattr(procedure, "__path__"):  # a package's names are its loaded submodules: not its kernels
                found += kernels(procedure, ROOT)
        return frozenset(compiled.digest(k.source) for k in found)

    def gate_compiled(self, outcome: Outcome, digests: list[str]) -> bool:
        """Add the contract's gate to outcome: every digest compiled is one declared."""
        undeclared = sorted(set(digests) - self.declared())
        detail = (
            f"{len(set(digests))} sources compiled, all declared"
            if not undeclared
            else f"{len(undeclared)} compiled but not declared (sha256 {', '.join(d[:12] for d in undeclared)}): "
            "a kernel source must be an upper-case constant of the experiment or of a verifier.kernels module"
        )
        return outcome.gate(GATE, not undeclared, detail)


def run_checked(module: ModuleType, device: Any, repeats: int, workdir: Path) -> Outcome:
    """run() of module's experiment, its compiles recorded and checked (the runner's one call);
    what run() raises goes to the caller unchanged."""
    experiment = Experiment.from_module(module)
    with compiled.recording() as digests:
        outcome = experiment.run(device, repeats, workdir)
    if isinstance(outcome, Outcome):
        experiment.gate_compiled(outcome, digests)
    return outcome


def _spawns(tree: ast.AST) -> list[tuple[str, str]]:
    return [s for sub in ast.walk(tree) if isinstance(sub, ast.Call) and (s := spawned_step(sub))]


def _imports(tree: ast.AST) -> set[str]:
    """The verifier modules tree imports anywhere (a method may import on its own)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "verifier":
            found.add(node.module)  # and `from verifier.kernels import saxpy` names a module too:
            found |= {f"{node.module}.{a.name}" for a in node.names if _is_file(f"{node.module}.{a.name}")}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("verifier.")}
    return found


def _is_file(dotted: str) -> bool:
    return (ROOT / f"{dotted.replace('.', '/')}.py").is_file()


def procedure_modules(module: ModuleType) -> list[str]:
    """The verifier modules whose kernels run() may compile, sorted: those it reaches as the
    recipe follows it (recipe.reach), and each module it spawns a step of with what that module
    imports (the child runs it whole, classes too), transitively through their spawns. Not every
    import of every module: profile.py imports the registry, which imports every experiment."""
    parts = anatomy(module)
    found = set(parts.run.modules)
    body = ast.parse(Path(str(module.__file__)).read_text(encoding="utf-8")).body
    todo = [s for n in body if isinstance(n, ast.FunctionDef) and n.name in parts.run.functions for s in _spawns(n)]
    seen: set[str] = set()
    while todo:
        name = todo.pop()[0]
        if name in seen:
            continue
        seen.add(name)
        child = ast.parse((ROOT / f"verifier/{name.replace('.', '/')}.py").read_text(encoding="utf-8"))
        found |= {f"verifier.{name}", *_imports(child)}
        todo += _spawns(child)
    return sorted(found)
