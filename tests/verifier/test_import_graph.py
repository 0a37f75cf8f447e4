"""No import cycle in the verifier package (issue 40): the graph is read from every module's
syntax tree, each `import` and `from ... import` anywhere in it (a function's own import too,
which runs as surely, only later), so a cycle cannot hide behind a lazy import."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path, package: str = "verifier") -> dict[str, set[str]]:
    """Each module of package under root -> the modules of that package it imports."""
    files = {module_name(p, root): p for p in sorted((root / package).rglob("*.py"))}
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                base = node.module
                if node.level:  # relative: from the module's own package upwards
                    here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                    base = ".".join([*here[: len(here) - node.level + 1], node.module])
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in files else base for alias in node.names]
            graph[name] |= {t for t in targets if t in files and t != name}
    return graph


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle in graph (its modules, the first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the path being walked, 2: done
    path: list[str] = []

    def walk(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := walk(nxt)) is not None:
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := walk(start)) is not None:
            return found
    return None


def test_the_verifier_has_no_import_cycle() -> None:
    graph = import_graph(ROOT)
    assert "verifier.profile" in graph["verifier.experiments.coalescing"]  # the graph is read at all
    assert cycle(graph) is None, " -> ".join(cycle(graph) or [])


def test_a_cycle_is_found(tmp_path: Path) -> None:
    package = tmp_path / "verifier"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from verifier.sub import b\n")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "b.py").write_text("def late():\n    from verifier import a\n")
    (package / "c.py").write_text("import verifier.a\n")
    assert cycle(import_graph(tmp_path)) == ["verifier.a", "verifier.sub.b", "verifier.a"]
    (package / "sub" / "b.py").write_text("def late():\n    return 1\n")
    assert cycle(import_graph(tmp_path)) is None
