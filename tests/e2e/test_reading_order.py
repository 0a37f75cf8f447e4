"""A way through the glossary (issue 30, part 5), in a real browser: each term page links the
terms before and after it in the reading order, and the Left and Right arrow keys follow them
unless something on the page has the keyboard."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urljoin

import pytest

from conftest import ROOT
from cudagloss.load.glossary import load_glossary
from cudagloss.model.project import Project

pytestmark = [pytest.mark.browser, pytest.mark.builders]


@pytest.fixture
def page(browser: Any, base: str) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    tab.set_default_timeout(30_000)  # bounds a hang, never a slow machine
    yield tab
    context.close()


def _order() -> list[str]:
    corpus = load_glossary(Project(root=ROOT, terms_dir=ROOT / "terms", measurements_dir=ROOT / "measurements"))
    return [t.slug for t in corpus.reading_order()]


def test_the_arrow_keys_walk_the_reading_order_and_leave_a_focused_field_alone(page: Any, base: str) -> None:
    order = _order()
    first, second, third = order[:3]
    page.goto(urljoin(base, f"terms/{second}/"), wait_until="load")
    links = page.locator("h2#continue-reading + ul a")
    assert links.count() == 2
    page.keyboard.press("ArrowRight")
    page.wait_for_url(re.compile(f"/terms/{third}/$"))
    page.keyboard.press("ArrowLeft")
    page.wait_for_url(re.compile(f"/terms/{second}/$"))
    page.keyboard.press("ArrowLeft")
    page.wait_for_url(re.compile(f"/terms/{first}/$"))
    assert page.locator("h2#continue-reading + ul a").count() == 1  # the first term has no previous


def test_a_focused_field_or_a_modifier_keeps_its_arrow_keys(page: Any, base: str) -> None:
    """The links point at fragments of this page here, so following one is synchronous and
    seen at once: nothing is left to chance or to time."""
    second = _order()[1]
    page.goto(urljoin(base, f"terms/{second}/"), wait_until="load")
    page.evaluate(
        """() => document.querySelectorAll("#continue-reading + ul li").forEach((li) => {
            li.querySelector("a").href = li.textContent.trim().startsWith("Next:") ? "#went-next" : "#went-prev";
        })"""
    )
    page.locator("input[name='query']").focus()
    page.keyboard.press("ArrowRight")  # the search field has the keyboard: the caret moves, the page stays
    assert page.evaluate("location.hash") == ""
    # Material's search answers Escape once it has started (its worker loaded the index): wait for that,
    # as a reader would see it, rather than press Escape into a search still "Initializing" (under load,
    # a CI run timed out there).
    page.wait_for_function(
        """() => { const m = document.querySelector('.md-search-result__meta');
                   return m !== null && !/initializing/i.test(m.textContent); }"""
    )
    page.keyboard.press("Escape")  # Material closes its search and gives the keyboard back to the page
    page.wait_for_function("document.activeElement === document.body")
    page.keyboard.press("Shift+ArrowRight")  # a modifier: a selection, the browser's, not ours
    page.keyboard.press("Alt+ArrowLeft")
    assert page.evaluate("location.hash") == ""
    page.keyboard.press("ArrowRight")
    assert page.evaluate("location.hash") == "#went-next"
    page.keyboard.press("ArrowLeft")
    assert page.evaluate("location.hash") == "#went-prev"


def test_the_last_term_links_back_and_every_term_is_on_the_way(base: str, browser_site: Any) -> None:
    """The links themselves, on every built page: each term's next is the one after it."""
    order = _order()
    for before, after in itertools.pairwise(order):
        html = (browser_site / "terms" / before / "index.html").read_text(encoding="utf-8")
        pager = html.split('id="continue-reading"', 1)[1].split("</ul>", 1)[0]
        assert f'href="../{after}/"' in pager, before
    last = (browser_site / "terms" / order[-1] / "index.html").read_text(encoding="utf-8")
    assert "Next:" not in last.split('id="continue-reading"', 1)[1].split("</ul>", 1)[0]
