"""The stylesheets a page names, read in their place in its cascade (issue 39, class 7):
html_css.Sheet says which to fetch and reads them once fetched; stylesheets.py reads a Link
header and fetches them through the checker, which holds a public page's sheets to public
addresses, as it holds its redirects."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from cudagloss.links.checker import LinkChecker
from cudagloss.links.html_css import STYLESHEETS_MAX, CssFile
from cudagloss.links.html_text import read_html
from cudagloss.links.status import LinkStatus
from cudagloss.links.stylesheets import link_header
from localserver import Ok, running

URL = "https://docs.example.com/guide/index.html"
SHEET = "https://docs.example.com/guide/site.css"


def read(html: str, files: Mapping[str, str | None], header: tuple[tuple[str, str], ...] = ()) -> tuple[str, str, str]:
    """(the text, the text sure to be seen, why hiding is unknown) of html read with files fetched."""
    got = {url: CssFile(css, "" if css is not None else "timeout") for url, css in files.items()}
    found = read_html(f"<body><p>before</p>{html}<p>after</p></body>", URL, got, header)
    sure = found.text if found.sure is None else found.sure
    return " ".join(found.text.split()), " ".join(sure.split()), found.styles_unknown


def test_a_page_names_the_sheets_to_fetch_in_order() -> None:
    html = (
        "<link rel=stylesheet href=site.css><style>@import '/b.css' screen;</style><link rel=stylesheet href=site.css>"
    )
    found = read_html(html, URL, {}, (("/h.css", ""),))
    assert found.stylesheets == ("https://docs.example.com/h.css", SHEET, "https://docs.example.com/b.css")
    assert "h.css was not read" in found.styles_unknown


def test_a_fetched_sheet_is_read_in_its_place_in_the_cascade() -> None:
    hide, show = ".x{display:none}", ".x{display:block}"
    assert read("<link rel=stylesheet href=site.css><p class=x>q</p>", {SHEET: hide}) == ("before after",) * 2 + ("",)
    later_style = f"<link rel=stylesheet href=site.css><style>{hide}</style><p class=x>q</p>"
    assert read(later_style, {SHEET: show})[0] == "before after"
    later_link = f"<style>{hide}</style><link rel=stylesheet href=site.css><p class=x>q</p>"
    assert read(later_link, {SHEET: show}) == ("before q after",) * 2 + ("",)
    assert read("<p class=x>q</p>", {SHEET: hide}, ((SHEET, ""),))[0] == "before after"  # Link header


def test_a_sheet_whose_media_may_apply_may_hide() -> None:
    text, sure, unknown = read(
        "<link rel=stylesheet media='(max-width:40em)' href=site.css><p class=x>q</p>", {SHEET: ".x{display:none}"}
    )
    assert text == "before q after" and "q" not in sure.split() and unknown == ""
    imported = "https://docs.example.com/guide/narrow.css"
    html = "<style>@import url(narrow.css) (max-width:40em);</style><p class=x>q</p>"
    text, sure, unknown = read(html, {imported: ".x{display:none}"})
    assert "q" not in sure.split() and unknown == ""


def test_what_is_not_read_leaves_hiding_unknown() -> None:
    assert "site.css not read: timeout" in read("<link rel=stylesheet href=site.css>", {SHEET: None})[2]
    deep = {SHEET: "@import 'a.css';", "https://docs.example.com/guide/a.css": "@import 'b.css';"}
    assert "b.css is imported more than one level deep" in read("<link rel=stylesheet href=site.css>", deep)[2]
    many = "".join(f"<link rel=stylesheet href=s{i}.css>" for i in range(STYLESHEETS_MAX + 1))
    found = read_html(many, URL)
    assert f"over {STYLESHEETS_MAX} stylesheets" in found.styles_unknown and found.stylesheets == ()


def test_a_sheet_imported_again_and_again_is_read_within_bounds() -> None:
    css = ".y{display:none}" + " " * 300_000  # read again each time it is imported
    assert "KiB, not read" in read("<style>" + "@import 'site.css';" * 1000 + "</style>", {SHEET: css})[2]


def test_a_link_header_names_its_stylesheets() -> None:
    value = (
        '</a.css>; rel="preload stylesheet", <b.css>;rel=stylesheet;media="print, speech", '
        '</i.png>; rel=icon, </c.css>; rel="alternate stylesheet"'
    )
    assert link_header(value, URL) == (
        ("https://docs.example.com/a.css", ""),
        (SHEET.replace("site", "b"), "print, speech"),
    )
    assert link_header("<" * 100_000, URL) == ()


def test_a_public_pages_sheet_may_not_be_local() -> None:
    async def check(url: str) -> tuple[LinkStatus, LinkStatus]:
        async with LinkChecker() as checker:
            own = await checker.check(url, page=True, cap=1024)
            linked = await checker.check(url, page=True, cap=1024, inward=False)
            return own.status, linked.status

    with running(Ok) as server:
        assert asyncio.run(check(server + "/site.css")) == (LinkStatus.OK, LinkStatus.INVALID)
