"""`cudagloss links` with quotes and an archive, end to end on real local servers: a quote
found (split across inline elements, in entities), one missing (content drift: reported apart,
never stamped, the run still passes), one on a page that needs JavaScript (unverifiable);
archived copies asked of a fake availability API on 127.0.0.1 once and stamped; and the pages
`render` writes from the stamps and the report: text-fragment links, Robust Links attributes,
the archived copy linked once a page has been broken two runs in a row."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

pytest.importorskip("ruamel.yaml")

import yaml

from conftest import ROOT, cudagloss
from localserver import Quiet, running
from scaffold import good_glossary

TODAY = dt.date.today().isoformat()
"""The day the link checker stamps, set again as each test starts (conftest's stamp_day)."""
pytestmark = pytest.mark.usefixtures("stamp_day")


FOUND = "A warp executes one common instruction at a time"
MISSING = "Every warp has sixty-four threads on every GPU"
SCRIPTED = "Text that only a script would show"
PAGES = {
    "/found": b"<html><head><title>Guide</title><script>var x='nothing';</script></head><body>"
    + b"<p>Intro.</p>" * 50
    + b"<p>A <em>warp</em> executes one <a href='#c'>common&nbsp;instruction</a> at a time.</p></body></html>",
    "/missing": b"<html><body>"
    + b"<p>A warp has thirty-two threads; the page was rewritten since we quoted it.</p>" * 5
    + b"<script>document.write('Every warp has sixty-four threads on every GPU')</script></body></html>",
    "/app": b"<html><body><div id='root'></div><script src='/app.js'></script>"
    + b"<noscript>You need to enable JavaScript to run this app.</noscript></body></html>",
}
ARCHIVE_ASKED: list[str] = []
LOCK = threading.Lock()


class Site(Quiet):
    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        if parts.path == "/wayback/available":
            asked = parse_qs(parts.query)["url"][0]
            with LOCK:
                ARCHIVE_ASKED.append(asked)
            closest = {"available": True, "status": "200", "url": f"http://web.archive.org/web/20261101000000/{asked}"}
            body = json.dumps({"url": asked, "archived_snapshots": {"closest": closest}}).encode()
            kind = "application/json"
        elif parts.path in PAGES:
            body, kind = PAGES[parts.path], "text/html; charset=utf-8"
        else:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.reply(200, body, kind)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with running(Site) as url:
        yield url


def sources(server: str) -> str:
    return f"""sources:
  - title: The guide   # quoted
    url: {server}/found
    quote: "{FOUND}"
  - title: A page that says otherwise now
    url: {server}/missing
    quote: "{MISSING}"
  - title: An app
    url: {server}/app
    quote: "{SCRIPTED}"
  - title: A page gone
    url: {server}/gone
    archived_url: "https://web.archive.org/web/20250101000000/{server}/gone"
    archived_on: 2025-01-01
    failed_checks: 1
"""


@pytest.fixture
def glossary(tmp_path: Path, server: str) -> Path:
    return good_glossary(tmp_path, sources(server))


def links(root: Path, server: str, *args: str) -> tuple[int, str, str]:
    run = cudagloss(root, "links", "terms", "--archive-api", f"{server}/wayback/available", *args)
    return run.returncode, run.stdout, run.stderr


def warp_sources(root: Path) -> list[dict[str, object]]:
    data = yaml.safe_load((root / "terms" / "warp.yaml").read_text())
    return list(data["sources"])


def test_three_outcomes_stamped_reported_and_rendered(glossary: Path, server: str) -> None:
    ARCHIVE_ASKED.clear()
    before = (glossary / "terms" / "warp.yaml").read_text().splitlines()
    code, out, err = links(glossary, server, "--report", "links.json")
    assert code == 1, err  # /gone answers 404: the one real breakage
    found, missing, app, gone = warp_sources(glossary)
    # found: stamped; missing and unverifiable: the URL is stamped, the quote never
    assert str(found["quote_checked_on"]) == TODAY and str(found["checked_on"]) == TODAY
    assert "quote_checked_on" not in missing and str(missing["checked_on"]) == TODAY
    assert "quote_checked_on" not in app
    assert gone["failed_checks"] == 2 and "checked_on" not in gone
    # content drift is reported apart from breakage, each at its place
    line = before.index(f"    url: {server}/missing") + 1
    assert f"terms/warp.yaml:{line}: [quote-missing] {server}/missing '{MISSING}'" in out
    assert f"[quote-unverifiable] {server}/app" in out and "JavaScript" in out
    assert "[quote-" not in out.split("quotes not found")[0]  # not among the broken links
    # archived copies: asked once each for the URLs found reachable, stamped as https
    assert sorted(ARCHIVE_ASKED) == sorted(f"{server}{p}" for p in ("/found", "/missing", "/app"))
    assert found["archived_url"] == f"https://web.archive.org/web/20261101000000/{server}/found"
    assert str(found["archived_on"]) == "2026-11-01"
    report = json.loads((glossary / "links.json").read_text())
    by_url = {r["url"]: r for r in report["results"]}
    assert by_url[f"{server}/missing"]["quotes"] == [
        {"quote": MISSING, "result": "quote-missing", "detail": by_url[f"{server}/missing"]["quotes"][0]["detail"]}
    ]
    assert by_url[f"{server}/gone"]["failed_checks"] == 2
    assert report["quote_counts"] == {"quote-found": 1, "quote-missing": 1, "quote-unverifiable": 1}

    shutil.copytree(ROOT / "templates", glossary / "templates")  # a folder mkdocs.yml names is in the repository
    (glossary / "mkdocs.yml").write_text("site_name: T\n", encoding="utf-8")
    built = cudagloss(glossary, "render", "--out", "tree", "--link-report", "links.json")
    assert built.returncode == 0, built.stderr
    page = (glossary / "tree" / "docs" / "terms" / "warp.md").read_text(encoding="utf-8")
    assert f'href="{server}/found#:~:text=A%20warp%20executes%20one,instruction%20at%20a%20time"' in page
    assert f'data-originalurl="{server}/found"' in page and 'data-versiondate="2026-11-01"' in page
    assert f"quote checked {TODAY}" in page and f"quote not found on the page on {TODAY}" in page
    assert f"“{FOUND}”" in page
    gone_copy = f"https://web.archive.org/web/20250101000000/{server}/gone"
    assert f'<a href="{gone_copy}"' in page and f'<a href="{server}/gone">the page itself</a>' in page

    ARCHIVE_ASKED.clear()
    links(glossary, server, "--force")
    assert ARCHIVE_ASKED == []  # a source that has a copy is never asked about again


def test_no_archive_asks_nothing(glossary: Path, server: str) -> None:
    ARCHIVE_ASKED.clear()
    links(glossary, server, "--no-archive")
    assert ARCHIVE_ASKED == [] and "archived_url" not in warp_sources(glossary)[0]


def test_an_archive_api_that_is_not_a_public_address_is_refused(glossary: Path) -> None:
    for bad in ("ftp://archive.example/x", "https://archive.example/x?url=1", "http://10.0.0.1/wayback"):
        run = cudagloss(glossary, "links", "terms", "--archive-api", bad)
        assert run.returncode == 2 and "--archive-api" in run.stderr and "Traceback" not in run.stderr
