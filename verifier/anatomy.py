"""What an experiment compiles and which CUDA API calls it makes: the code behind its numbers.

The measurement page shows a reader the kernels an experiment compiles (CUDA C++ or PTX, as
NVRTC gets them) and the driver and NVRTC functions that produced its values, read from the
code itself so the page cannot drift from it. Kernels: every upper-case string constant with a
`__global__` or an `.entry` in it, in the experiment's module and in the verifier.kernels
modules it imports. Calls: the `cu*`/`cuda*`/`nvrtc*`/`nvml*` names its module writes (`drv.cuMemcpyDtoDAsync`,
`check("cuMemGetInfo", ...)`), and those of each helper it calls in verifier/gpu.py and
verifier/cuda.py (`gpu.time_graph(...)` is cuGraphInstantiate, cuGraphLaunch, cuEventRecord
and the rest), followed through the helpers that call each other. Standard library only, and
nothing is imported or run: the GPU node imports this with the registry.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from types import ModuleType

from cudagloss.model.measurement import KernelSource

HERE = Path(__file__).resolve().parent
HELPERS = ("gpu.py", "cuda.py")
"""The verifier's own wrappers of the driver API whose calls an experiment's calls stand for
(with the modules it names in USES and the verifier.kernels modules it imports)."""
API = re.compile(r"(?:cuda|cu|nvrtc|nvFatbin|nvml)[A-Z][A-Za-z0-9_]*")
REPORTING = frozenset(
    {"cuGetErrorName", "cuGetErrorString", "nvrtcGetErrorString", "nvrtcResult", "nvFatbinError"}
    | {"cudaGetErrorName", "cudaGetErrorString", "cudaError_t", "cudaSuccess", "nvmlReturn_t"}
)
"""Names that only word an error (or are a type): not calls that produced a value."""


def _kernel_modules(module: ModuleType) -> list[ModuleType]:
    return [
        value
        for value in vars(module).values()
        if isinstance(value, ModuleType) and value.__name__.startswith("verifier.kernels.")
    ]


def kernels(module: ModuleType, root: Path) -> tuple[KernelSource, ...]:
    """The kernel sources of the experiment's module and of the verifier.kernels modules it uses."""
    found: dict[str, KernelSource] = {}
    for mod in [module, *_kernel_modules(module)]:
        where = Path(str(mod.__file__)).resolve().relative_to(root).as_posix()
        for name, value in vars(mod).items():
            if not (name.isupper() and isinstance(value, str)):
                continue
            if value in {k.source for k in found.values()}:
                continue
            if "__global__" in value:
                found[f"{where}:{name}"] = KernelSource(f"{where}:{name}", "cuda", value)
            elif ".entry" in value:
                found[f"{where}:{name}"] = KernelSource(f"{where}:{name}", "ptx", value)
    return tuple(found.values())


def _names(node: ast.AST) -> set[str]:
    """The API functions written in node: attributes (drv.cuX) and whole string constants ("cuX"),
    except a name asked about (hasattr(runtime, "cudaX")), which is not a call."""
    asked = {
        id(arg)
        for sub in ast.walk(node)
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id == "hasattr"
        for arg in sub.args[1:]
    }
    out = set()
    for sub in ast.walk(node):
        if id(sub) in asked:
            continue
        text = sub.attr if isinstance(sub, ast.Attribute) else sub.value if isinstance(sub, ast.Constant) else None
        if isinstance(text, str) and API.fullmatch(text):
            out.add(text)
    return out


def _called(node: ast.AST) -> set[str]:
    """The helper names node calls: f(...), x.f(...), and the entry a child process runs,
    spawn("module", "entry", ...) (verifier/spawn.py)."""
    out = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            func = sub.func
            out.add(func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else "")
            if (step := spawned_step(sub)) is not None:
                out.add(f"step_{step[1]}")
    return out - {""}


def spawned_step(call: ast.Call) -> tuple[str, str] | None:
    """(module, step) of spawn("module", "step", ...): the child runs verifier.<module>.step_<step>."""
    if not (isinstance(call.func, ast.Name) and call.func.id == "spawn" and len(call.args) > 1):
        return None
    names = [a.value for a in call.args[:2] if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    return (names[0], names[1]) if len(names) == 2 else None


class Helpers:
    """The helper functions of the verifier's files, each file read once per catalog: by name,
    (its API names, the helpers it calls). Matched by name alone, so a call of another
    library's function of the same name counts too: the list can be longer than the truth,
    never shorter."""

    def __init__(self) -> None:
        self._files: dict[Path, dict[str, tuple[set[str], set[str]]]] = {}

    def of(self, path: Path) -> dict[str, tuple[set[str], set[str]]]:
        if path not in self._files:
            table: dict[str, tuple[set[str], set[str]]] = {}
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.FunctionDef) and not node.name.startswith("__"):
                    api, calls = table.setdefault(node.name, (set(), set()))
                    api |= _names(node)
                    calls |= _called(node)
            self._files[path] = table
        return self._files[path]

    def api_calls(self, module: ModuleType) -> tuple[str, ...]:
        """The driver and NVRTC functions behind the experiment, sorted: its own, and its helpers'."""
        tree = ast.parse(Path(str(module.__file__)).read_text(encoding="utf-8"))
        spawned = [
            f"{step[0]}.py" for sub in ast.walk(tree) if isinstance(sub, ast.Call) if (step := spawned_step(sub))
        ]
        files = [HERE / name for name in dict.fromkeys((*HELPERS, *getattr(module, "USES", ()), *spawned))]
        files = [f for f in files if f.is_file()] + [Path(str(m.__file__)) for m in _kernel_modules(module)]
        helpers: dict[str, tuple[set[str], set[str]]] = {}
        for path in files:
            for name, (api, calls) in self.of(path).items():
                mine = helpers.setdefault(name, (set(), set()))
                mine[0].update(api)
                mine[1].update(calls)
        found = _names(tree)
        todo, seen = list(_called(tree) & helpers.keys()), set()
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            api, calls = helpers[name]
            found |= api
            todo += [c for c in calls if c in helpers]
        return tuple(sorted(found - REPORTING))
