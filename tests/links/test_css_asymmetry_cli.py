"""`cudagloss links` end to end on a real local server, on pages that hide the quote in ways a
reader of CSS could get wrong (issue 39, class 7; the asymmetry rule in html_css.py): comment
markers in strings, values a browser drops, var(), sheets a browser does not apply, quirks-mode
case, end tags a browser ignores. None is "found" or stamped; a control page's quote is."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("ruamel.yaml")

import yaml

from localserver import Quiet, running
from scaffold import quote_results

QUOTE = "A warp executes one common instruction at a time"
Q = f"<p class=x>{QUOTE}.</p>"
SHOW = b".x{display:block!important}"
PAGES = {
    "/string-comment": '<style>.a{content:"/*"}.x{display:none}/**/</style>' + Q,
    "/inline-strings": f"""<p style="font-family:'/*';display:none;font-family:'*/'">{QUOTE}.</p>""",
    "/dropped-value": f'<p style="display:none;display:bogus">{QUOTE}.</p>',
    "/var": "<style>.x{--h:none;display:var(--h)}</style>" + Q,
    "/import-brace": "<style>@import url('/empty.css?a{b'); .x{display:none}</style>" + Q,
    "/disabled": "<link rel=stylesheet href=/show.css disabled><style>.x{display:none}</style>" + Q,
    "/other-type": "<style>.x{display:none}</style><style type=text/x-not-css>.x{display:block}</style>" + Q,
    "/template": "<style>.x{display:none}</style><template><style>.x{display:block}</style></template>" + Q,
    "/late-import": "<style>.x{display:none}</style><style>.y{color:red} @import url(/show.css);</style>" + Q,
    "/quirks": f"<style>.HIDE{{display:none}}</style><p class=hide>{QUOTE}.</p>",
    "/table-cell": f"<div hidden><table><tr><td></div>{QUOTE}.",
    "/object": f"<div hidden><object></div>{QUOTE}.",
    "/details": f"<details><summary>More</summary>{QUOTE}.</details>",
    "/link-header": "<style>.x{display:none}</style>" + Q,
}
SHOWN = {"/shown": f"<p>{QUOTE}.</p>"}


class Site(Quiet):
    def do_GET(self) -> None:
        path = self.path.partition("?")[0]
        html = {**PAGES, **SHOWN}.get(path)
        css = {"/show.css": SHOW, "/empty.css": b""}.get(path)
        body = css if css is not None else f"<html><body>{html}</body></html>".encode() if html else b""
        kind = "text/css" if css is not None else "text/html; charset=utf-8"
        link = {"Link": "</show.css>; rel=stylesheet"} if path == "/link-header" else {}
        self.reply(200 if html or css is not None else 404, body, kind, link)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with running(Site) as url:
        yield url


def test_no_hidden_quote_is_found_whatever_the_css_says(tmp_path: Path, server: str) -> None:
    quotes = quote_results(tmp_path, server, {**PAGES, **SHOWN}, QUOTE)
    for path in PAGES:
        assert quotes[path]["result"] in ("quote-missing", "quote-unverifiable"), (path, quotes[path])
    assert quotes["/shown"]["result"] == "quote-found", quotes["/shown"]
    stamped = yaml.safe_load((tmp_path / "terms" / "warp.yaml").read_text())["sources"]
    assert [s["url"].removeprefix(server) for s in stamped if "quote_checked_on" in s] == ["/shown"]
