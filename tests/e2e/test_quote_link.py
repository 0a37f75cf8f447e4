"""A quoted source's link in the built site takes the reader to the sentence: a term page built
with `mkdocs build --strict`, its source a long page on another local server (Python's
http.server) with the quoted sentence screens below the top, split across inline elements;
Chromium clicks the link on the term page and the source page scrolls to the sentence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from localserver import serving_folder
from scaffold import good_glossary
from sitebuild import build, fixture_config

pytestmark = [pytest.mark.browser, pytest.mark.builders]

QUOTE = "A warp executes one common instruction at a time, so full efficiency is realized"
PAGE = (
    "<!doctype html><html><head><title>Guide</title></head><body>"
    + "<p>Filler paragraph that is not the sentence we cite.</p>\n" * 400
    + '<p id="target">A <em>warp</em> executes one <a href="#x">common instruction</a> at a time, '
    + "so full efficiency is realized when all threads agree.</p>\n"
    + "<p>More filler after the sentence.</p>\n" * 50
    + "</body></html>"
)


def test_the_source_link_scrolls_to_the_quote(tmp_path: Path, browser: Any) -> None:
    pages = tmp_path / "source"
    pages.mkdir()
    (pages / "guide.html").write_text(PAGE, encoding="utf-8")
    with serving_folder(pages) as source:
        quoted = f'sources:\n  - title: The guide\n    url: {source}/guide.html\n    quote: "{QUOTE}"\n'
        terms = good_glossary(tmp_path, quoted) / "terms"
        run = build(fixture_config(tmp_path, terms), tmp_path / "site")
        assert run.returncode == 0, run.stderr
        with serving_folder(tmp_path / "site") as site:
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            try:
                page = context.new_page()
                page.set_default_timeout(30_000)  # bounds a hang, never a slow machine
                page.goto(f"{site}/terms/warp/", wait_until="load")
                link = page.locator(f'a[href^="{source}/guide.html#:~:text="]')
                assert link.count() == 1
                assert link.get_attribute("rel") is not None  # the sanitiser's noopener noreferrer kept
                link.click()
                page.wait_for_url(f"{source}/guide.html*")
                # the browser scrolls to the sentence: wait for it, not for a fixed time
                page.wait_for_function(
                    """() => {
                        const r = document.getElementById('target').getBoundingClientRect();
                        return window.scrollY > 2000 && r.top >= 0 && r.bottom <= window.innerHeight;
                    }"""
                )
            finally:
                context.close()
