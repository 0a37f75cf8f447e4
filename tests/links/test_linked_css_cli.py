"""`cudagloss links` reads the stylesheets a quoted page links (issue 39, class 7), end to end
on a real local server: a <link rel=stylesheet>, an @import (one level deep and in a <style>),
a Link header, in cascade order with the page's <style>s. A quote a linked sheet hides is not
found; one it leaves alone is found and stamped, as is one hidden only by a print sheet; a
sheet that cannot be read (404, timeout, not CSS, a private address or a redirect there)
leaves the quote unverifiable, saying why. Each sheet is fetched once a run."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("ruamel.yaml")

import yaml

from conftest import cudagloss
from localserver import Quiet, running
from scaffold import good_glossary

QUOTE = "A warp executes one common instruction at a time"
INTRO = "<p>" + "This guide describes the programming model in some detail. " * 10 + "</p>"
PRIVATE = "http://10.255.255.1/site.css"
"""An intranet address the tests' CUDAGLOSS_LOCAL_SOURCES (127.0.0.1/32) does not allow."""
SHEETS = {
    "/hide.css": ".note{color:red}\n.x { display: none }",
    "/sub/hide.css": ".x{visibility:hidden}",
    "/other.css": ".y{display:none}",
    "/show.css": ".x{display:block}",
    "/a.css": '@import "b.css";\n.y{display:none}',
    "/b.css": ".x{display:none}",
    "/deep1.css": "@import url(deep2.css);",
    "/deep2.css": "@import url(deep3.css);",
    "/deep3.css": ".y{display:none}",
}
P = f"<p class=x>{QUOTE}.</p>"
HIDDEN = {
    "/linked": f"<link rel=stylesheet href=/hide.css>{P}",
    "/linked-again": f"<link rel=stylesheet href='hide.css'>{P}",  # the same sheet: fetched once
    "/base": f"<base href=/sub/><link rel=stylesheet href=hide.css>{P}",
    "/imported": f"<link rel=stylesheet href=/a.css>{P}",
    "/style-import": f"<style>@import url(/hide.css);</style>{P}",
    "/header": P,  # Link: </hide.css>; rel=stylesheet
    "/style-wins": f"<link rel=stylesheet href=/show.css><style>.x{{display:none}}</style>{P}",
}
FOUND = {
    "/other": f"<link rel=stylesheet href=/other.css>{P}",
    "/print": f"<link rel=stylesheet media=print href=/hide.css>{P}",
    "/link-wins": f"<style>.x{{display:none}}</style><link rel=stylesheet href=/show.css>{P}",
}
UNREAD = {
    "/missing": (f"<link rel=stylesheet href=/gone.css>{P}", "/gone.css not read: broken (HTTP 404)"),
    "/slow": (f"<link rel=stylesheet href=/slow.css>{P}", "/slow.css not read: timeout"),
    "/not-css": (f"<link rel=stylesheet href=/page.css>{P}", "served as text/html, not text/css"),
    "/deep": (f"<link rel=stylesheet href=/deep1.css>{P}", "/deep3.css is imported more than one level deep"),
    "/private": (f"<link rel=stylesheet href={PRIVATE}>{P}", f"{PRIVATE} not read: invalid"),
    "/to-private": (f"<link rel=stylesheet href=/moved.css>{P}", "/moved.css not read: invalid"),
    "/scheme": (f"<link rel=stylesheet href='ftp://127.0.0.1/x.css'>{P}", "x.css not read: invalid"),
}
PAGES = {**HIDDEN, **FOUND, **{path: html for path, (html, _) in UNREAD.items()}}
asked: Counter[str] = Counter()
hang = threading.Event()


class Site(Quiet):
    def do_GET(self) -> None:
        asked[self.path] += 1
        if self.path == "/slow.css":
            hang.wait(60)  # never answers within the run's --timeout
            return
        if self.path == "/moved.css":
            self.send_response(302)
            self.send_header("Location", PRIVATE)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        html, css = PAGES.get(self.path), SHEETS.get(self.path)
        body = (css or "").encode()
        kind = "text/css" if css else "text/html; charset=utf-8"
        if html is not None or self.path == "/page.css":
            body = f"<html><head><title>Guide</title></head><body>{INTRO}{html}</body></html>".encode()
            kind = "text/html; charset=utf-8"
        link = {"Link": '</favicon.ico>; rel=icon, </hide.css>; rel="stylesheet"'} if self.path == "/header" else {}
        self.reply(200 if body else 404, body, kind, link)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with running(Site) as url:
        yield url
        hang.set()


def test_linked_stylesheets_are_read_as_the_pages_own(tmp_path: Path, server: str) -> None:
    sources = "sources:\n" + "".join(
        f'  - title: Page {path}\n    url: {server}{path}\n    quote: "{QUOTE}"\n' for path in PAGES
    )
    root = good_glossary(tmp_path, sources)
    run = cudagloss(root, "links", "terms", "--no-archive", "--timeout", "5", "--report", "links.json")
    assert "Traceback" not in run.stderr, run.stderr
    report = json.loads((root / "links.json").read_text())
    quotes = {r["url"].removeprefix(server): r["quotes"][0] for r in report["results"]}
    for path in HIDDEN:
        assert quotes[path]["result"] == "quote-missing", (path, quotes[path])
    for path in FOUND:
        assert quotes[path]["result"] == "quote-found", (path, quotes[path])
    for path, (_, why) in UNREAD.items():
        assert quotes[path]["result"] == "quote-unverifiable", (path, quotes[path])
        assert why in quotes[path]["detail"], (path, quotes[path])
    stamped = yaml.safe_load((root / "terms" / "warp.yaml").read_text())["sources"]
    assert sorted(s["url"].removeprefix(server) for s in stamped if "quote_checked_on" in s) == sorted(FOUND)
    assert asked["/hide.css"] == 1 and asked["/show.css"] == 1, asked  # once a run, whoever links it
    assert asked["/sub/hide.css"] == 1 and asked["/b.css"] == 1 and asked["/deep2.css"] == 1, asked
    assert asked["/deep3.css"] == 0 and asked["/favicon.ico"] == 0, asked
