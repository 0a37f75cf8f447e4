"""WCAG 2 A and AA on the built site, in Debian's Chromium: axe-core on every page type in
both palettes, and what axe cannot see: a definition shown on hover is shown on keyboard
focus too and reached by one tap on a touch screen, and a results table keeps its ids whole
and scrolls from the keyboard; a chart is read at a phone's width in both palettes, every
point reachable from the keyboard, and screenshots of it go to test-artifacts/.

The site, its server and the browser are the session's (tests/browsing.py), as test_browser.py's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import axe
import pytest
from test_browser import Reader

pytestmark = [pytest.mark.browser, pytest.mark.builders]

PAGES = {
    "home": "",
    "section": "sections/memory/",
    "term": "terms/ptx/",
    "chart": "terms/memory-bandwidth/",
    "diagram": "terms/thread-block/",
    "measurement": "measurements/jit-cache/",
    "measurements": "measurements/",
}
"""One page of each type; the term and measurement pages hold the most of what can fail."""
PALETTES = {"light": "default", "dark": "slate"}
"""Material's scheme for each colour scheme the reader's system prefers (mkdocs.yml palette)."""
# What the term page must hold for its check to cover the rules that failed before: links in
# text (first mentions, measured values), code spans inside links, claims, and backlinks.
TERM_HOLDS = {
    "a link in a paragraph": "article p a[href^='../']",
    "a measured value": "article a[href*='measurements/']",
    "a code span in a link": "article a code",
    "claims": "article h3#claims-checked-against-these-numbers",
    "a related term that mentions it": "h2#related-terms + ul > li:has-text('its page mentions')",
}


@contextmanager
def _visit(chromium: Any, url: str, **options: Any) -> Iterator[Reader]:
    """A Reader in a browser context of its own (screen size, colour scheme, touch)."""
    context = chromium.new_context(**{"viewport": {"width": 1280, "height": 900}, **options})
    try:
        yield Reader(context.new_page(), url)
    finally:
        context.close()


def _tab_to(page: Any, target: Any) -> None:
    """Focus target the way a keyboard does: from the focusable element before it, press Tab."""
    page.evaluate(
        """el => {
            const all = [...document.querySelectorAll('a[href], button, input, [tabindex]')]
                .filter(e => e.tabIndex >= 0 && e.offsetParent);
            all[all.indexOf(el) - 1].focus();
        }""",
        target.element_handle(),
    )
    page.keyboard.press("Tab")
    assert page.evaluate("el => document.activeElement === el", target.element_handle())


@pytest.mark.parametrize("palette", PALETTES)
@pytest.mark.parametrize("kind", PAGES)
def test_axe_finds_no_wcag_a_or_aa_violation(browser: Any, base: str, kind: str, palette: str) -> None:
    with _visit(browser, base, color_scheme=palette) as reader:
        page = reader.open(PAGES[kind])
        assert page.evaluate("document.body.dataset.mdColorScheme") == PALETTES[palette]
        if kind == "term":
            missing = [what for what, css in TERM_HOLDS.items() if page.locator(css).count() == 0]
            assert missing == [], f"{PAGES[kind]} no longer holds {missing}: choose another term page"
        found = axe.violations(page)
        assert found == [], f"{PAGES[kind]} ({palette}):\n" + "\n".join(found)
        assert reader.problems == []


def test_a_definition_shown_on_hover_is_shown_on_keyboard_focus(browser: Any, base: str) -> None:
    with _visit(browser, base) as reader:
        page = reader.open("terms/jit-compilation/")
        link = page.locator("article p a[href='../sass/']").first
        definition = " ".join(str(link.get_attribute("title")).split())
        assert definition.startswith("The native machine code of an NVIDIA GPU generation")
        _tab_to(page, link)
        tooltip = page.locator(".md-tooltip2--active")
        tooltip.wait_for(state="visible")
        assert " ".join(tooltip.inner_text().split()) == definition
        # A screen reader announces it with the link: the shown tooltip is the link's description.
        described = "el => document.getElementById(el.getAttribute('aria-describedby')).innerText"
        assert " ".join(page.evaluate(described, link.element_handle()).split()) == definition
        assert reader.problems == []


def test_on_a_touch_screen_one_tap_reaches_the_definition(browser: Any, base: str) -> None:
    """A touch screen has no hover: the definition a link shows on hover opens its page, first."""
    with _visit(browser, base, viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True) as reader:
        page = reader.open("terms/jit-compilation/")
        link = page.locator("article p a[href='../sass/']").first
        definition = " ".join(str(link.get_attribute("title")).split())
        link.tap()
        page.wait_for_url(re.compile(r"/terms/sass/$"))
        assert " ".join(page.locator("article h1 + p").inner_text().split()) == definition
        assert reader.problems == []


def test_a_results_table_keeps_ids_whole_and_scrolls_from_the_keyboard(browser: Any, base: str) -> None:
    """On a phone-sized screen (or a page zoomed to 400%) the results table scrolls sideways:
    a result's id and dates stay on one line, and a keyboard reaches what is off screen."""
    with _visit(browser, base, viewport={"width": 360, "height": 740}) as reader:
        page = reader.open("measurements/jit-cache/")
        scroller = page.locator(".glossary-results .md-typeset__scrollwrap").first  # Material's, as every table's
        assert scroller.evaluate("el => el.scrollWidth > el.clientWidth")
        wrapped = page.evaluate(
            """[...document.querySelectorAll('.glossary-results tbody tr')].flatMap(tr =>
                [0, 4, 5].map(i => tr.cells[i]).filter(td => {
                    const range = document.createRange();
                    range.selectNodeContents(td);
                    const tops = [...range.getClientRects()].map(r => r.top);
                    return Math.max(...tops) - Math.min(...tops) > 4;
                }).map(td => td.textContent))"""
        )
        assert wrapped == []
        _tab_to(page, scroller.locator("a").first)
        for _ in range(3):
            page.keyboard.press("ArrowRight")
        page.wait_for_function("el => el.scrollLeft > 0", arg=scroller.element_handle())
        assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
        assert reader.problems == []


CHARTED = ("memory-latency", "memory-bandwidth", "pinned-memory", "occupancy")


@pytest.mark.parametrize("palette", PALETTES)
def test_a_chart_reads_at_a_phones_width_in_both_palettes(browser: Any, base: str, palette: str) -> None:
    """At 390 px the chart fits the column, its smallest text is drawn at 9 px or more, the series
    take the palette's colours, and each point is a link the keyboard reaches."""
    from test_browser import shot

    colours = set()
    with _visit(browser, base, color_scheme=palette, viewport={"width": 390, "height": 844}) as reader:
        for slug in CHARTED:
            page = reader.open(f"terms/{slug}/")
            figure = page.locator("figure.cg-chart").first
            figure.scroll_into_view_if_needed()
            box = figure.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, (slug, box)
            smallest = page.evaluate(
                "f => Math.min(...[...f.querySelectorAll('svg text')].map(t => t.getBoundingClientRect().height))",
                figure.element_handle(),
            )
            assert smallest >= 9, (slug, smallest)
            colours.add(
                page.evaluate("f => getComputedStyle(f.querySelector('.cg-series')).fill", figure.element_handle())
            )
            point = figure.locator(".cg-series a").first.element_handle()
            page.evaluate(  # focus what comes before the first point, then Tab as a keyboard does
                """el => {
                    const all = [...document.querySelectorAll('a[href], button, input, [tabindex]')]
                        .filter(e => e.tabIndex >= 0 && e.getClientRects().length);
                    all[all.indexOf(el) - 1].focus();
                }""",
                point,
            )
            page.keyboard.press("Tab")
            assert page.evaluate("el => document.activeElement === el", point), slug
            figure.screenshot(path=shot(f"chart-{slug}-{palette}-390.png"))
        assert reader.problems == []
    expected = {"light": "rgb(0, 105, 173)", "dark": "rgb(99, 183, 240)"}[palette]
    assert colours == {expected}


DIAGRAMS = ("memory-latency", "streaming-multiprocessor", "warp-divergence", "thread-block", "jit-compilation")


@pytest.mark.parametrize("palette", PALETTES)
def test_diagrams_follow_the_palette_and_read_at_a_phones_width(browser: Any, base: str, palette: str) -> None:
    """Each diagram fits the column at 390 px with no text under 8.5 px; one drawn in two files
    shows the file of the palette; one file follows the palette through its classes."""
    from test_browser import shot

    with _visit(browser, base, color_scheme=palette, viewport={"width": 390, "height": 844}) as reader:
        for slug in DIAGRAMS:
            page = reader.open(f"terms/{slug}/")
            figure = page.locator("figure.cg-diagram").first
            figure.scroll_into_view_if_needed()
            box = figure.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, (slug, box)
            visible = figure.locator("svg:visible")
            assert visible.count() == 1, slug
            smallest = page.evaluate(
                "s => Math.min(...[...s.querySelectorAll('text')].map(t => t.getBoundingClientRect().height))",
                visible.element_handle(),
            )
            assert smallest >= 8.5, (slug, smallest)
            figure.screenshot(path=shot(f"diagram-{slug}-{palette}-390.png"))
            if slug == "thread-block":
                shown = figure.locator(".cg-diagram-dark" if palette == "dark" else ".cg-diagram-light")
                assert shown.is_visible(), palette
            if slug == "memory-latency":
                fill = page.evaluate(
                    "s => getComputedStyle(s.querySelector('.cg-d-a1')).fill", visible.element_handle()
                )
                assert fill == {"light": "rgb(219, 233, 247)", "dark": "rgb(29, 53, 80)"}[palette]
        assert reader.problems == []
