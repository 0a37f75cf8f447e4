"""A text-fragment link (model/fragments.py) in a real browser: Debian's Chromium, headless,
through Playwright (tests/browsing.py), opens a long page served on 127.0.0.1 at the quoted
sentence, far below the first screen and split across inline elements."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cudagloss.model.fragments import text_fragment_url
from localserver import serving_folder

pytestmark = [pytest.mark.browser]

FILLER = "<p>Filler paragraph {n}: a warp is thirty-two threads, and this line only takes up room.</p>\n"
TARGET = (
    '<p id="target">Each <em>streaming multiprocessor</em> partitions its <a href="#w">resident warps</a> '
    "among <code>four</code> warp schedulers, each of which issues one instruction per clock.</p>\n"
)
SHORT = "partitions its resident warps among four warp schedulers"
LONG = (
    "Each streaming multiprocessor partitions its resident warps among four warp schedulers, "
    "each of which issues one instruction per clock."
)


@pytest.fixture(scope="module")
def long_page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A page many screens long with TARGET near its end, served on a free port of 127.0.0.1."""
    folder: Path = tmp_path_factory.mktemp("fragment")
    body = "".join(FILLER.format(n=n) for n in range(400)) + TARGET + FILLER.format(n="last")
    (folder / "long.html").write_text(
        f"<!doctype html><html><head><meta charset=utf-8><title>Long</title></head><body>{body}</body></html>",
        encoding="utf-8",
    )
    with serving_folder(folder) as base:
        yield f"{base}/long.html"


IN_VIEW = """() => {
    const box = document.getElementById('target').getBoundingClientRect();
    return window.scrollY > 0 && box.top >= 0 && box.bottom <= window.innerHeight;
}"""


@pytest.mark.parametrize("quote", [SHORT, LONG], ids=["whole", "start-end"])
def test_a_text_fragment_link_scrolls_the_quote_into_view(browser: Any, long_page: str, quote: str) -> None:
    context = browser.new_context(viewport={"width": 1000, "height": 700})
    try:
        page = context.new_page()
        page.set_default_timeout(30_000)  # bounds a hang, never a slow machine
        page.goto(long_page, wait_until="load")
        assert page.evaluate("document.getElementById('target').getBoundingClientRect().top") > 10 * 700
        assert not page.evaluate(IN_VIEW)  # the page alone opens at its top
        page.goto("about:blank")
        url = text_fragment_url(long_page, quote)
        assert (":~:text=" in url) and ("," in url) == (quote == LONG)
        page.goto(url, wait_until="load")
        page.wait_for_function(IN_VIEW)
    finally:
        context.close()
