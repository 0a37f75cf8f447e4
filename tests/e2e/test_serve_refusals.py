"""make serve and make build refuse a hostile checkout before MkDocs starts (issue 39).

A copy of the glossary as a pull request's checkout, beside a folder outside it that holds a
canary: a hook outside the repository (which would run as MkDocs loads it), a folder or a file
committed as a link into the outside folder. The real `cudagloss serve` (what `make serve` runs,
under a timeout: it must exit, never serve) and the real `cudagloss render` then `mkdocs build`
(what `make build` runs); the canary's marker is never in the output nor in a built site.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, copy_checkout
from sitebuild import MKDOCS, build

PROJECT = ("terms", "templates", "measurements", "computed", "docs", "site_hooks", "overrides")
MARK = "CANARY-5be1d0e7-outside"
LIMIT_S = 60.0
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
LINK = "is a symbolic link;"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """The checkout (its mkdocs.yml without the src/cudagloss watch it does not copy), and outside/."""
    root = copy_checkout(tmp_path / "repo", PROJECT)
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8").replace("  - src/cudagloss\n", "")
    (root / "mkdocs.yml").write_text(config, encoding="utf-8")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "canary.md").write_text(f"# {MARK}\n", encoding="utf-8")
    return root


def move_out(repo: Path, name: str) -> None:
    """repo/name moved outside, its files marked, and committed back as a link to it."""
    outside = repo.parent / "outside" / name.replace("/", "-")
    shutil.move(repo / name, outside)
    for file in outside.rglob("*") if outside.is_dir() else [outside]:
        if file.is_file():
            file.write_text(file.read_text(encoding="utf-8") + f"\n{MARK}\n", encoding="utf-8")
    (repo / name).symlink_to(outside)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(repo: Path, *command: str) -> subprocess.CompletedProcess[str]:
    """`make serve`'s command (or another) in repo: it must end by itself, refusing."""
    command = command or (sys.executable, "-m", "cudagloss", "serve", "--port")
    run = [*command, str(_free_port()) if command[-1] == "--port" else f"127.0.0.1:{_free_port()}"]
    try:
        return subprocess.run(run, cwd=repo, capture_output=True, text=True, env=ENV, timeout=LIMIT_S)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{' '.join(run[2:4])} did not exit within {LIMIT_S:g} s: it serves the site; {exc.output!r}")


def make_build(repo: Path) -> str:
    """`make build`: render the tree, then, only if that succeeded, mkdocs build it; the output."""
    render = [sys.executable, "-m", "cudagloss", "render", "--strict", "--out", "build/site-tree", "--site-dir", "site"]
    done = subprocess.run(render, cwd=repo, capture_output=True, text=True, env=ENV, timeout=LIMIT_S)
    out = done.stdout + done.stderr
    if done.returncode == 0:
        built = build(repo / "build/site-tree/mkdocs.yml", repo / "site")
        out += f"{built.stdout}{built.stderr}\nbuild exited {built.returncode}"
    assert done.returncode != 0, f"make build was not refused:\n{out}"
    return out


def refused(out: str, line: str, once: bool = True) -> None:
    """A line saying why (once: one, where render's loader names each term a folder's drawing is
    used by), no traceback, the canary's marker nowhere."""
    assert "Traceback" not in out and MARK not in out, out
    found = sum(line in s for s in out.splitlines())
    assert found == 1 if once else found >= 1, out


def nothing_built(repo: Path) -> None:
    for folder in ("site", "build"):
        leaked = [p for p in (repo / folder).rglob("*") if p.is_file() and MARK in p.read_text(errors="replace")]
        assert not leaked and not (repo / folder / "index.html").exists(), leaked


@pytest.mark.builders
@pytest.mark.parametrize("through", ["outside", "link"])
def test_a_hook_outside_the_repository_is_refused_before_mkdocs_imports_it(repo: Path, through: str) -> None:
    ran = repo.parent / "outside" / "RAN"
    hook = repo.parent / "outside" / "evil.py"
    hook.write_text(f"open({str(ran)!r}, 'w').write('ran'); print({MARK!r})\n", encoding="utf-8")
    named = str(hook)
    if through == "link":  # a path inside the repository, through a committed folder link
        (repo / "hooks-here").symlink_to(repo.parent / "outside")
        named = "hooks-here/evil.py"
    config = repo / "mkdocs.yml"
    config.write_text(config.read_text(encoding="utf-8").replace("site_hooks/glossary.py", named), encoding="utf-8")
    line = {"outside": f"mkdocs.yml: 'hooks': {named!r} is outside the repository", "link": f"hooks-here:1:1: {LINK}"}
    run = serve(repo)
    assert run.returncode != 0, run.stdout + run.stderr
    refused(run.stdout + run.stderr, line[through])
    refused(make_build(repo), line[through])
    assert not ran.exists(), "the hook ran"
    nothing_built(repo)


CASES = {
    "overrides": "overrides:1:1: is a symbolic link; the theme's custom_dir",
    "docs/javascripts/glossary.js": "docs/javascripts/glossary.js:1:1: is a symbolic link; the docs folder",
    "measurements": "measurements:1:1: is a symbolic link;",
    "terms/diagrams": "terms/diagrams:1:1: is a symbolic link;",
}


@pytest.mark.builders
@pytest.mark.parametrize("name", list(CASES))
def test_make_serve_and_build_refuse_a_committed_link_and_exit(repo: Path, name: str) -> None:
    """A folder link at overrides, a file link at docs/javascripts/glossary.js, a link at measurements
    (which made the preview hang) or at terms/diagrams: one line, an exit, never a served site."""
    move_out(repo, name)
    run = serve(repo)
    assert run.returncode != 0, run.stdout + run.stderr
    refused(run.stdout + run.stderr, CASES[name])
    refused(make_build(repo), CASES[name], once=name != "terms/diagrams")
    nothing_built(repo)


@pytest.mark.builders
def test_plain_mkdocs_serve_stops_at_a_committed_measurements_link(repo: Path) -> None:
    """Without cudagloss serve's check (mkdocs serve run by hand), the hooks still stop: the
    preview's build aborts on a link, where other mistakes are shown in the browser."""
    move_out(repo, "measurements")
    run = serve(repo, *MKDOCS, "serve", "--dirty", "--dev-addr")
    out = run.stdout + run.stderr
    assert run.returncode != 0 and MARK not in out and "Traceback" not in out, out
    assert any(
        s.endswith(CASES["measurements"] + " the measurements folder and the folders above it are plain folders")
        for s in out.splitlines()
    ), out
