"""`cudagloss links` on quoted pages that hide the quote from their reader (issue 39, class 7),
end to end on a real local server: by a class, an id or an element in the page's own <style>,
by an inline style with CSS comments or escapes; a quote there is never "found" nor stamped.
Where the checker cannot judge (a linked stylesheet it cannot read, a descendant selector, @media) it is
"unverifiable"; a quote the page's CSS shows is found, as before."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("ruamel.yaml")

import yaml

from localserver import Quiet, running
from scaffold import quote_results

QUOTE = "A warp executes one common instruction at a time"
INTRO = "<p>" + "This guide describes the programming model in some detail. " * 10 + "</p>"
HIDDEN = {
    "/by-class": f"<style>.x{{display:none}}</style><p class=x>{QUOTE}.</p>",
    "/by-class-after": f"<p class='note x'>{QUOTE}.</p><style>.x {{ display : none }}</style>",
    "/by-id": f"<style>#q{{visibility:hidden}}</style><div id=q><p>{QUOTE}.</p></div>",
    "/by-element": f"<style>aside{{display:none}}</style><aside>{QUOTE}.</aside>",
    "/by-escape": f"<style>.x{{display:non\\65}}</style><p class=x>{QUOTE}.</p>",
    "/inline-comment": f'<p style="display:/**/none">{QUOTE}.</p>',
    "/inline-comment-after": f'<p style="visibility:hidden/*x*/">{QUOTE}.</p>',
}
UNJUDGED = {
    "/linked-sheet": f"<link rel=stylesheet href=/site.css><p>{QUOTE}.</p>",
    "/descendant": f"<style>main .x{{display:none}}</style><main><p class=x>{QUOTE}.</p></main>",
    "/media": f"<style>@media screen{{.x{{display:none}}}}</style><p class=x>{QUOTE}.</p>",
}
SHOWN = {
    "/shown": f"<style>.x{{display:none}}.x.open{{display:block}}</style><p class='x open'>{QUOTE}.</p>",
}
PAGES = {**HIDDEN, **UNJUDGED, **SHOWN}


class Site(Quiet):
    def do_GET(self) -> None:
        html = PAGES.get(self.path)
        body = f"<html><head><title>Guide</title></head><body>{INTRO}{html}</body></html>".encode() if html else b""
        self.reply(200 if html else 404, body, "text/html; charset=utf-8")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with running(Site) as url:
        yield url


def test_a_quote_the_page_hides_is_never_found(tmp_path: Path, server: str) -> None:
    quotes = quote_results(tmp_path, server, PAGES, QUOTE)
    for path in HIDDEN:
        assert quotes[path]["result"] == "quote-missing", (path, quotes[path])
    for path in UNJUDGED:
        assert quotes[path]["result"] == "quote-unverifiable", (path, quotes[path])
    assert "site.css not read: broken (HTTP 404)" in quotes["/linked-sheet"]["detail"]  # (test_linked_css_cli)
    assert "CSS may hide" in quotes["/descendant"]["detail"] and "CSS may hide" in quotes["/media"]["detail"]
    assert quotes["/shown"]["result"] == "quote-found", quotes["/shown"]
    stamped = yaml.safe_load((tmp_path / "terms" / "warp.yaml").read_text())["sources"]
    with_quote = [s["url"].removeprefix(server) for s in stamped if "quote_checked_on" in s]
    assert with_quote == ["/shown"], with_quote
