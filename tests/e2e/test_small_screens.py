"""A phone (390 px wide) and a wide screen (1400 px), in both palettes, in Debian's Chromium.

On a phone a term's Measured tables stack each row, its description on a line of its own and
its values side by side under the column headers, so no value is off screen; on a wide screen
they are ordinary tables. Either way they stay tables to assistive technology. The measurement
page's results table is styled as every other table. Screenshots of each page at each width
and palette go to test-artifacts/; axe-core checks the phone-sized pages.

The site, its server and the browser are the session's (tests/browsing.py), as test_browser.py's.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import axe
import pytest
from test_browser import Reader, shot

pytestmark = [pytest.mark.browser, pytest.mark.builders]

PAGES = ("terms/occupancy/", "terms/jit-compilation/", "terms/memory-bandwidth/", "measurements/memory-bandwidth/")
WIDTHS = {"phone": 390, "wide": 1400}
PALETTES = {"light": "default", "dark": "slate"}
"""Material's scheme for each colour scheme the reader's system prefers (mkdocs.yml palette)."""
CHECKED_BY_AXE = ("terms/jit-compilation/", "measurements/memory-bandwidth/")
"""At phone width (the wide pages are test_accessibility.py's): a term with Measured tables
and claims, and a measurement page with its results table."""

MEASURED = """() => {
    // Each Measured table: whether it fits its box, and per row where its cells are.
    const tables = [...document.querySelectorAll("h2#measured ~ * table, h2#measured ~ table")];
    return tables.map(table => ({
        fits: table.scrollWidth <= table.clientWidth + 1,
        rows: [...table.rows].map(row => [...row.cells].map(cell => {
            const box = cell.getBoundingClientRect();
            return {left: box.left, right: box.right, top: box.top, bottom: box.bottom, text: cell.innerText.trim()};
        })),
    }));
}"""


def _table_roles(page: Any) -> Counter[str]:
    """The roles of the table parts in Chromium's accessibility tree, what a screen reader reads."""
    session = page.context.new_cdp_session(page)
    nodes = session.send("Accessibility.getFullAXTree")["nodes"]
    session.detach()
    parts = {"table", "row", "cell", "columnheader", "rowheader"}
    return Counter(n["role"]["value"] for n in nodes if n.get("role", {}).get("value") in parts)


def _check_tables(page: Any, path: str, screen: str) -> None:
    width = WIDTHS[screen]
    tables = page.evaluate(MEASURED)
    assert path.startswith("measurements/") or tables, f"{path}: no Measured table to check"
    for table in tables:
        assert table["fits"], f"{path}: a Measured table scrolls sideways at {width} px"
        for description, *values in table["rows"]:
            where = (path, width, description["text"])
            assert all(c["left"] >= 0 and c["right"] <= width for c in (description, *values)), where
            if screen == "phone":  # the description above, the values side by side below it
                assert all(c["top"] >= description["bottom"] - 1 for c in values), where
                assert len({round(c["top"]) for c in values}) == 1, where
            else:  # an ordinary table: one line of cells
                assert len({round(c["top"]) for c in (description, *values)}) == 1, where


@pytest.mark.parametrize("screen", WIDTHS)
def test_measured_values_are_on_screen_and_tables_stay_tables(browser: Any, base: str, screen: str) -> None:
    """Each palette in a browser of its own that prefers it (Material follows the preference on a
    first visit), not by clicking the toggle: the toggle's tooltip fading out is what axe read,
    at whatever contrast the fade had reached, when the palette was switched in place."""
    width = WIDTHS[screen]
    for palette, scheme in PALETTES.items():
        context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=palette)
        reader = Reader(context.new_page(), base)
        try:
            for path in PAGES:
                page = reader.open(path)
                assert page.evaluate("document.body.dataset.mdColorScheme") == scheme
                _check_tables(page, path, screen)
                if screen == "phone" and path == "terms/jit-compilation/":
                    page.set_viewport_size({"width": WIDTHS["wide"], "height": 900})
                    wide = _table_roles(page)
                    page.set_viewport_size({"width": width, "height": 900})
                    assert _table_roles(page) == wide and wide["table"] >= 1 and wide["columnheader"] >= 2
                # The screen a reader sees at the first table of numbers (a whole page takes seconds).
                page.locator("h2#measured ~ .md-typeset__scrollwrap, .glossary-results").first.evaluate(
                    "el => window.scrollTo(0, el.getBoundingClientRect().top + window.scrollY - 80)"
                )
                page.screenshot(
                    path=shot(f"{path.strip('/').replace('/', '-')}-{width}-{palette}.png"),
                    animations="disabled",
                )
                if screen == "phone" and path in CHECKED_BY_AXE:
                    found = axe.violations(page)
                    assert found == [], f"{path} at {width} px ({palette}):\n" + "\n".join(found)
            assert reader.problems == []
        finally:
            context.close()


def test_the_results_table_is_styled_as_every_other_table(browser: Any, base: str) -> None:
    """Provenance is a Markdown table; results, raw HTML (rows with ids) that Material styles alike."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    reader = Reader(context.new_page(), base)
    page = reader.open("measurements/memory-bandwidth/")
    style = """table => {
        const s = getComputedStyle(table), th = getComputedStyle(table.querySelector("th"));
        return [s.borderTopWidth, s.borderTopStyle, s.fontSize, s.borderRadius, th.paddingTop, th.fontWeight];
    }"""
    provenance = page.locator("h3[id^='provenance'] + * table, h3[id^='provenance'] + table").first
    results = page.locator(".glossary-results table").first
    assert results.evaluate(style) == provenance.evaluate(style)
    assert results.evaluate("t => t.closest('.md-typeset__scrollwrap') !== null")  # scrolls as the others do
    context.close()
    assert reader.problems == []
