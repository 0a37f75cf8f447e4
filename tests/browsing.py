"""The repository's site built once per session (as published, and for the browser), served on
127.0.0.1, and headless Chromium for the tests that read them (loaded by conftest.py as a plugin,
so each fixture here has one instance per scope however many modules use it).

Chromium must be the system one (/usr/bin/chromium, or $CHROMIUM): Playwright's own browser
download does not work here. Without it the browser tests skip, except under CI, where they fail.
"""

from __future__ import annotations

import functools
import os
import shutil
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT
from cudagloss.errors import UsageError
from cudagloss.files.inside import refuse_links
from sitebuild import build

CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
# What the machine's closed network needs: no background connections, no sandbox as root.
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="session")
def repo_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository's glossary as `mkdocs build --strict` publishes it (with an edit address),
    built once: the tests only read it."""
    site = tmp_path_factory.mktemp("repo") / "site"
    run = build(ROOT / "mkdocs.yml", site, GLOSSARY_REPO_URL="https://github.com/example/glossary")
    assert run.returncode == 0, run.stderr
    assert "WARNING" not in run.stderr
    return site


@pytest.fixture(scope="session")
def browser_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository's glossary built with `mkdocs build --strict` and no repository address, for
    the browser: with one, Material's header asks GitHub's API for the repository's facts, which
    the closed network refuses (a failed request in every page's log)."""
    site = tmp_path_factory.mktemp("browser") / "site"
    run = build(ROOT / "mkdocs.yml", site)
    assert run.returncode == 0, run.stderr
    return site


@pytest.fixture(scope="session")
def base(browser_site: Path) -> Iterator[str]:
    """browser_site served by a real HTTP server on a free port of 127.0.0.1; its base URL."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(browser_site)))
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium, headless, driven by Playwright: one per module, because Playwright's
    sync API keeps an event loop running while it is open (asyncio.run() in a later test would fail)."""
    if not Path(CHROMIUM).exists():
        reason = f"no Chromium at {CHROMIUM} (apt-get install chromium)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield chromium
        chromium.close()


def screenshot_path(folder: Path, name: str, root: Path = ROOT) -> str:
    """Where a screenshot named name goes in folder (created), never through a committed link at
    the file or a folder above it from root down (refuse_links, the rule every write follows): a
    test-artifacts link would have the browser overwrite a file anywhere. One line, no traceback."""
    try:
        refuse_links(folder / name, root)
    except UsageError as exc:
        pytest.fail(str(exc), pytrace=False)
    folder.mkdir(parents=True, exist_ok=True)
    return str(folder / name)
