"""The house's layout, guarded: what the GPU node imports, the layers, module sizes.

A move that breaks one of these rules passes every behaviour test, so the rules are tested
here, from the source and in fresh interpreters, in about a second.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "cudagloss"

GPU_NODE_THIRD_PARTY = frozenset({"numpy", "cuda"})
"""Everything the verifier may import on a GPU node besides the standard library and the
repository's own code: the node's python3 has cuda-bindings and numpy (README); nvidia-ml-py is
read when it is there, imported only inside the function that reads the clocks.
(Choosing the experiments the terms cite also reads term YAML with PyYAML; --all does not.)"""

VERIFIER_IMPORTS = (
    "verifier.registry",
    "verifier.runner",
    "verifier.__main__",
    "verifier.worker",
    "verifier.spawn",
    *sorted(f"verifier.experiments.{p.stem}" for p in (ROOT / "verifier" / "experiments").glob("[!_]*.py")),
    "verifier.kernels.saxpy",
    "verifier.provenance",
    "verifier.gpu",
    "verifier.settle",
    "verifier.cachedir",
    "verifier.profile_cli",
    "cudagloss",
    "cudagloss.boundary",
    "cudagloss.model.measurement",
    "cudagloss.model.measurements",
    "cudagloss.model.term",
)
"""What a GPU node imports (every verifier module imports cuda-python lazily, so all are here)."""

SITE_ONLY = (
    "jinja2",
    "markupsafe",
    "markdown_it",
    "yaml",
    "mkdocs",
    "nh3",
    "confusable_homoglyphs",
    "idna",
    "certifi",
    "ruamel",
)
"""Installed here for the site and the link checker; the refusal must really be in force for them."""

_GUARDED_CHILD = """
import importlib, sys

ALLOWED = {allowed!r} | {{"cudagloss", "verifier"}} | set(sys.stdlib_module_names)


class Refuse:
    \"\"\"A meta-path finder: any third-party package the GPU node does not have cannot be imported.\"\"\"

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] not in ALLOWED:
            raise ImportError(f"{{name}} is not on a GPU node", name=name)
        return None


sys.meta_path.insert(0, Refuse())
for module in {modules!r}:
    importlib.import_module(module)
for name in {site_only!r}:
    try:
        importlib.import_module(name)
    except ImportError:
        continue
    raise SystemExit(f"the guard let {{name}} through")
"""


def _fresh_python(code: str) -> subprocess.CompletedProcess[str]:
    """code run by a new interpreter from the repository root, as `python3 -m verifier` is."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(["src", "."])}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=60
    )


def _guarded(allowed: frozenset[str], modules: tuple[str, ...], then: str = "") -> subprocess.CompletedProcess[str]:
    """modules imported, then the code `then` run, by a fresh interpreter that refuses every
    third-party package but allowed."""
    refused = tuple(name for name in SITE_ONLY if name not in allowed)
    return _fresh_python(_GUARDED_CHILD.format(allowed=set(allowed), modules=modules, site_only=refused) + then)


def test_the_gpu_node_needs_only_cuda_python_and_numpy() -> None:
    done = _guarded(GPU_NODE_THIRD_PARTY, VERIFIER_IMPORTS)
    assert done.returncode == 0, done.stderr[-3000:]


def test_choosing_the_cited_experiments_and_judging_claims_needs_pyyaml_and_nothing_more() -> None:
    """As README says: the default `make verify` reads the terms' citations and claims with PyYAML."""
    then = "from pathlib import Path\nfrom verifier.runner import cited_experiments\n"
    then += "from verifier.claims import readable_terms\n"
    then += "print(cited_experiments(Path('terms')), sum(len(t.claims) for t in readable_terms(Path('terms'))[0]))"
    done = _guarded(GPU_NODE_THIRD_PARTY | {"yaml"}, ("verifier.runner", "verifier.claims"), then)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("['"), done.stdout  # experiment ids, not why the terms cannot be read
    assert int(done.stdout.split()[-1]) > 0, done.stdout  # the repository's terms make claims


def test_a_term_written_in_two_scripts_still_loads_on_a_gpu_node(tmp_path: Path) -> None:
    """A body with 'Cᵀ = BᵀAᵀ' or '5 μs' made the node's python3 (no confusable-homoglyphs) stop
    reading the terms on 2026-12-05; there the look-alike check is skipped (make check makes it)."""
    shutil.copytree(ROOT / "tests" / "fixtures" / "good", tmp_path / "terms")
    lane = tmp_path / "terms" / "lane.yaml"
    lane.write_text(lane.read_text(encoding="utf-8").replace("body: |\n", "body: |\n  Cᵀ = BᵀAᵀ in 5μs, PТX.\n", 1))
    assert "PТX" in lane.read_text(encoding="utf-8")
    then = "from pathlib import Path\nfrom verifier.claims import readable_terms\n"
    then += f"terms, unreadable = readable_terms(Path({str(tmp_path / 'terms')!r}))\nprint(len(terms), unreadable)"
    done = _guarded(GPU_NODE_THIRD_PARTY | {"yaml"}, ("verifier.claims",), then)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == [str(len(list((tmp_path / "terms").glob("[!_]*.yaml")))), "0"]
    checked = subprocess.run(
        [sys.executable, "-m", "cudagloss", "check", str(tmp_path / "terms")],
        cwd=tmp_path, capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert checked.returncode != 0 and "Cyrillic letter that looks like a Latin one" in checked.stderr, checked.stderr


def test_importing_the_package_loads_no_third_party_module() -> None:
    """The public surface is lazy: `import cudagloss` loads neither Jinja2, MkDocs nor PyYAML."""
    code = textwrap.dedent(
        """
        import sys
        before = set(sys.modules)
        import cudagloss
        ours = {"cudagloss", *sys.stdlib_module_names}
        print(sorted(m for m in set(sys.modules) - before if m.partition(".")[0] not in ours))
        """
    )
    done = _fresh_python(code)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "[]", f"import cudagloss loaded {done.stdout.strip()}"


LAYERS = {
    "errors": 0,
    "files": 1,
    "text": 1,
    "boundary": 2,  # the error boundary: errors and files (WriteFailed), for the CLI, the verifier and the adapter
    "model": 2,
    "check": 3,
    "load": 4,
    "site": 5,
    "merge": 5,
    "links": 6,
    "commands": 7,
    "mkdocs": 8,
    "__main__": 8,  # `python -m cudagloss`, the entry point above the command line it runs
}
"""Each package's layer: a module imports only from lower layers or from its own package.
errors.py, which imports nothing of ours, is below files/ and text/ (text/ reports with it)."""

UPWARD_EXCEPTIONS: frozenset[tuple[str, str]] = frozenset()
"""Imports that break the layering knowingly, as (importer, imported) modules, each with why."""


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph() -> dict[str, set[str]]:
    """Each module under src/cudagloss and the cudagloss modules it imports, at any depth of
    its code (function-level imports too). cudagloss/__init__.py, the lazy public surface that
    imports on first use, is left out."""
    modules = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        if name == "cudagloss":
            continue
        targets = graph.setdefault(name, set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.ImportFrom):
                assert node.level == 0, f"{name} line {node.lineno}: a relative import (the house imports absolutely)"
                if node.module is not None and node.module.partition(".")[0] == "cudagloss":
                    for alias in node.names:  # `from cudagloss.links import stamp` imports a module
                        sub = f"{node.module}.{alias.name}"
                        targets.add(sub if sub in modules else node.module)
            elif isinstance(node, ast.Import):
                targets.update(a.name for a in node.names if a.name.partition(".")[0] == "cudagloss")
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle, as the modules around it, or None."""
    done: set[str] = set()
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        if module in path:
            return [*path[path.index(module) :], module]
        if module in done:
            return None
        path.append(module)
        for target in sorted(graph.get(module, ())):
            found = visit(target)
            if found:
                return found
        path.pop()
        done.add(module)
        return None

    return next((c for c in map(visit, sorted(graph)) if c), None)


def _package(module: str) -> str:
    return module.split(".")[1] if "." in module else module


def test_no_import_cycle() -> None:
    cycle = _cycle(_import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_imports_only_go_down_the_layers() -> None:
    unplaced = sorted({_package(m) for m in _import_graph()} - set(LAYERS) - {"cudagloss"})
    assert not unplaced, f"give these a layer in LAYERS: {unplaced}"
    upward = [
        f"{importer} imports {imported}"
        for importer, targets in sorted(_import_graph().items())
        for imported in sorted(targets)
        if imported != "cudagloss"  # __version__ and the lazy names: the package's own surface
        and _package(importer) != _package(imported)
        and LAYERS[_package(importer)] <= LAYERS[_package(imported)]
        and (importer, imported) not in UPWARD_EXCEPTIONS
    ]
    assert not upward, "imports that do not go down the layers:\n" + "\n".join(upward)


MAX_LINES = 320
"""About 300 lines a module, with a little slack."""


def test_no_module_is_long() -> None:
    files = [*PACKAGE.rglob("*.py"), *(ROOT / "site_hooks").rglob("*.py"), *(ROOT / "verifier").rglob("*.py")]
    sizes = {p.relative_to(ROOT).as_posix(): len(p.read_text(encoding="utf-8").splitlines()) for p in files}
    long = sorted(f"{path} ({lines} lines)" for path, lines in sizes.items() if lines > MAX_LINES)
    assert not long, f"modules over {MAX_LINES} lines: " + ", ".join(long)


MEMORY_TYPES = frozenset({"Memo", "Pinned", "BuildMemory", "MemoryBytecodeCache", "RenderState"})
MEMORY_OWNERS = {"cudagloss.site.state": set(), "cudagloss.mkdocs.adapter": {"RenderState"}}
"""Where render-stage memory may be made outside a function: the state's fields (in field
factories, which are functions) and the preview's one RenderState per process."""


def test_the_render_stage_keeps_its_memory_in_one_owner() -> None:
    """No module of ours holds a memo of its own at module level: each belongs to site.state.RenderState."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
            made = value.func.id if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) else ""
            if made in MEMORY_TYPES and made not in MEMORY_OWNERS.get(module, set()):
                found.append(f"{module}:{node.lineno}: {made}()")
    assert not found, "render memory outside cudagloss.site.state:\n" + "\n".join(found)


_PLANTED = """
import subprocess

import pytest
from sitebuild import build


def _helper(path):
    return build(path / "mkdocs.yml", path / "site")


@pytest.fixture
def built(tmp_path):
    return _helper(tmp_path)


def test_builds_through_a_fixture(built):
    pass


def test_builds_through_a_helper(tmp_path):
    _helper(tmp_path)


@pytest.mark.builders
def test_marked(tmp_path):
    _helper(tmp_path)


def test_starts_a_program():
    subprocess.run(["true"], check=True)


def test_in_process():
    assert True
"""


def _collect(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """pytest collecting folder/test_planted.py under the suite's conftest.py and configuration."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), str(ROOT)])}
    command = [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(folder)]
    command += ["-p", "conftest", "-p", "no:cacheprovider", "--collect-only", *args, str(folder)]
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, check=False, timeout=120)


def test_a_test_that_reaches_a_tier_without_its_marker_stops_the_run(tmp_path: Path) -> None:
    """tests/tiers.py as conftest.py runs it at collection: a site build reached through a fixture or
    a helper, unmarked, names the test and its marker; a child process puts on `processes`."""
    (tmp_path / "test_planted.py").write_text(_PLANTED, encoding="utf-8")
    refused = _collect(tmp_path)
    assert refused.returncode == 4, refused.stdout + refused.stderr  # pytest's usage error: nothing ran
    listed = refused.stderr.split("without its marker", 1)[-1]
    assert "test_builds_through_a_fixture: @pytest.mark.builders" in listed
    assert "test_builds_through_a_helper: @pytest.mark.builders" in listed
    assert "test_marked" not in listed and "test_starts_a_program" not in listed
    planted = _PLANTED.replace("def test_builds_through", "@pytest.mark.builders\ndef test_builds_through")
    (tmp_path / "test_planted.py").write_text(planted, encoding="utf-8")
    fast = _collect(tmp_path, "-m", "not (builders or processes)")
    assert fast.returncode == 0, fast.stdout + fast.stderr
    assert [line for line in fast.stdout.splitlines() if "::" in line] == ["test_planted.py::test_in_process"]
    started = _collect(tmp_path, "-m", "processes")
    assert "test_planted.py::test_starts_a_program" in started.stdout and "test_in_process" not in started.stdout
