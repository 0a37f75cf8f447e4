"""`mkdocs serve --dirty` (what `make serve` runs) picks up edits without a restart.

A real server on a free port serves a copy of the repository's glossary; the test edits a
term, a template and a measurement file in turn and waits for each change to be served.
A body edit rebuilds only the pages it changes, and the search index still holds every page.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.error import URLError
from urllib.request import urlopen

import pytest

from conftest import ROOT

WAIT_S = 60.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A copy of the glossary under `mkdocs serve`; yields (copy, base URL)."""
    for name in (
        "terms",
        "templates",
        "measurements",
        "computed",
        "verifier",
        "docs",
        "site_hooks",
        "schema",
        "overrides",
    ):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8").replace("  - src/cudagloss\n", "")
    (tmp_path / "mkdocs.yml").write_text(config, encoding="utf-8")
    port = _free_port()
    log = (tmp_path / "serve.log").open("w", encoding="utf-8")
    server = subprocess.Popen(  # what `make serve PORT=...` runs
        [sys.executable, "-m", "cudagloss", "serve", "--port", str(port)],
        cwd=tmp_path,
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    base = f"http://127.0.0.1:{port}/"
    try:
        _wait_for(lambda text: "What is NVRTC?" in text, base + "terms/nvrtc/", server)
        yield tmp_path, base
    finally:
        server.terminate()
        server.wait(timeout=10)
        log.close()


def _get(url: str) -> str:
    try:
        with urlopen(url, timeout=5) as response:
            return str(response.read().decode("utf-8"))
    except (URLError, ConnectionError, TimeoutError):
        return ""


def _wait_for(ready: Callable[[str], bool], url: str, server: subprocess.Popen[str] | None = None) -> None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if server is not None and server.poll() is not None:
            pytest.fail(f"mkdocs serve exited with {server.returncode}; see serve.log")
        if ready(_get(url)):
            return
        time.sleep(0.2)
    pytest.fail(f"{url} did not change within {WAIT_S:g} s")


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _search_index(base: str) -> dict[str, list[str]]:
    """Each page's search entries (their titles), by page location."""
    entries: dict[str, list[str]] = {}
    for doc in json.loads(_get(base + "search/search_index.json"))["docs"]:
        entries.setdefault(doc["location"].partition("#")[0], []).append(doc["title"])
    return entries


@pytest.mark.servers
@pytest.mark.builders
def test_serve_picks_up_edits_to_terms_templates_and_measurements(served: tuple[Path, str]) -> None:
    root, base = served
    page = base + "terms/nvrtc/"
    index_before = _search_index(base)
    _edit(root / "terms" / "nvrtc.yaml", "body: |\n  ", "body: |\n  A body edit. ")
    _wait_for(lambda text: "A body edit." in text, page)
    log = (root / "serve.log").read_text(encoding="utf-8")
    rebuilt = re.findall(r"(\d+) of (\d+) glossary pages changed", log)
    assert rebuilt and int(rebuilt[-1][0]) < int(rebuilt[-1][1]) / 2, log[-2000:]
    _wait_for(lambda text: "A body edit." in text, base + "search/search_index.json")
    assert _search_index(base) == index_before  # every page once, none lost or doubled
    # A definition shows on the home page too: a partial rebuild that includes it.
    _edit(root / "terms" / "nvrtc.yaml", "NVIDIA's runtime compilation library", "NVIDIA's run-time compiler library")
    _wait_for(lambda text: "run-time compiler library" in text, base)
    _wait_for(lambda text: "run-time compiler library" in text, base + "search/search_index.json")
    assert _search_index(base) == index_before
    _wait_for(lambda text: "run-time compiler library" in text, page)
    _edit(root / "templates" / "term.md.j2", "## Related terms", "## Related terms (edited)")
    _wait_for(lambda text: "Related terms (edited)" in text, page)
    # a value whose claims still hold when it grows (the grid's and the block size's are exact)
    measured = root / "measurements" / "ptx-jit" / "h200-3f1ceb1e.json"
    cuinit = next(r for r in json.loads(measured.read_text())["results"] if r["name"] == "cuinit_median")
    _edit(measured, f'"value": {json.dumps(cuinit["value"])},', '"value": 987.0,')
    _wait_for(lambda text: "987 ms" in text, base + "terms/jit-compilation/")


@pytest.mark.servers
@pytest.mark.builders
def test_serve_recovers_from_a_broken_term_with_every_page_and_search_entry(served: tuple[Path, str]) -> None:
    root, base = served
    index_before = _search_index(base)
    term = root / "terms" / "nvrtc.yaml"
    good = term.read_text(encoding="utf-8")
    term.write_text(good.replace("section: ", "section: no-such-section-", 1), encoding="utf-8")
    deadline = time.monotonic() + WAIT_S
    while "no section 'no-such-section-" not in (root / "serve.log").read_text(encoding="utf-8"):
        assert time.monotonic() < deadline, "the broken term was not reported"
        time.sleep(0.2)
    # The browser shows the diagnostics on the page it was on, and on every other (no hang, no stale page).
    _wait_for(lambda text: "The glossary cannot be built" in text, base + "terms/nvrtc/")
    for page in ("terms/nvrtc/", "", "terms/ptx/", "sections/host-software/"):
        shown = _get(base + page)
        assert "terms/nvrtc.yaml:7:10: section: no section 'no-such-section-host-software'" in shown, page
    term.write_text(good.replace("body: |\n  ", "body: |\n  Fixed again. ", 1), encoding="utf-8")
    _wait_for(lambda text: "Fixed again." in text, base + "terms/nvrtc/")
    _wait_for(lambda text: "Fixed again." in text, base + "search/search_index.json")
    assert _search_index(base) == index_before
    assert "What is PTX?" in _get(base + "terms/ptx/")
