"""The built site in a real browser: Debian's Chromium, headless, driven by Playwright.

The site is built from the repository's terms with `mkdocs build --strict`, served on
127.0.0.1 by a real HTTP server, and read the way a reader reads it: the home page, the
search box, a term page's links and tooltips, both palettes, a phone-sized screen, and
every page's console and requests. Screenshots go to test-artifacts/ (or $TEST_ARTIFACTS).

The site, its server and the browser are one per session (tests/browsing.py): without
Debian's Chromium these tests skip, except under CI, where they fail.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest

from browsing import screenshot_path
from conftest import ROOT
from cudagloss.model.project import Project
from sitebuild import REPO_TERMS

pytestmark = [pytest.mark.browser, pytest.mark.builders]

ARTIFACTS = Path(os.environ.get("TEST_ARTIFACTS", ROOT / "test-artifacts"))


def shot(name: str) -> str:
    """A screenshot's path in ARTIFACTS, refused (one line) through a committed link."""
    return screenshot_path(ARTIFACTS, name)


class Reader:
    """One browser page that remembers every console error, page error and failed request."""

    def __init__(self, page: Any, base: str) -> None:
        self.page, self.base = page, base
        self.problems: list[str] = []
        page.set_default_timeout(30_000)  # bounds a hang, never a slow machine
        page.on("console", self._console)
        page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        page.on("requestfailed", self._failed)
        page.on("response", self._response)

    def _console(self, message: Any) -> None:
        if message.type == "error":
            self.problems.append(f"console: {message.text}")

    def _response(self, response: Any) -> None:
        if response.status >= 400:
            self.problems.append(f"HTTP {response.status}: {response.url}")

    def _failed(self, request: Any) -> None:
        # ERR_ABORTED is the browser cancelling a load because we navigated on, not a missing asset.
        if request.failure != "net::ERR_ABORTED":
            self.problems.append(f"request failed: {request.url} ({request.failure})")

    def open(self, path: str) -> Any:
        self.page.goto(urljoin(self.base, path), wait_until="load")
        return self.page


@pytest.fixture
def reader(browser: Any, base: str) -> Iterator[Reader]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    yield Reader(context.new_page(), base)
    context.close()


def _terms_in_order() -> list[tuple[str, str, str]]:
    """(slug, name, definition) of the repository's terms, as the model loads them."""
    from cudagloss.load.glossary import load_glossary

    corpus = load_glossary(Project(root=ROOT, terms_dir=ROOT / "terms", measurements_dir=ROOT / "measurements"))
    return [(t.slug, t.term.name, t.term.definition) for t in corpus.alphabetical()]


def _text(html_text: str) -> str:
    return " ".join(re.sub(r"[`*]", "", html_text).split())


def test_home_lists_every_term_a_to_z_with_its_definition_and_the_sections(reader: Reader) -> None:
    page = reader.open("")
    entries = page.locator("article li:has(> a[href^='terms/'])")
    shown = [(e.locator("a").first.get_attribute("href"), _text(e.inner_text())) for e in entries.all()]
    expected = _terms_in_order()
    assert [href for href, _ in shown] == [f"terms/{slug}/" for slug, _, _ in expected]
    for (_, text), (_, name, definition) in zip(shown, expected, strict=True):
        assert text.startswith(_text(name)) and _text(definition)[:60] in text
    sections = page.locator("article a[href^='sections/']").all_inner_texts()
    assert sections == [
        "The GPU and its limits",
        "Threads, blocks and launches",
        "Memory",
        "Throughput and occupancy",
        "Instruction sets and targets",
        "Compilation and loading",
        "Host software and tools",
        "Errors",
        "Profilers and libraries",
    ]
    assert reader.problems == []


def _search(page: Any, query: str) -> list[str]:
    """The result links Material's search shows for a query put into the search box.

    The query goes in whole (one input event, so one question to the search worker and one
    answer): typed letter by letter, each prefix's answer arrives in turn, and no wait of any
    length tells the last one from a slow one."""
    box = page.locator("input[data-md-component='search-query']")
    box.click()
    box.fill(query)
    page.locator(".md-search-result__item > a").first.wait_for(state="visible")
    read = "[...document.querySelectorAll('.md-search-result__item > a')].map(a => a.getAttribute('href'))"
    return [urlsplit(href).path for href in page.evaluate(read)]


@pytest.mark.parametrize(
    ("query", "slug"),
    [
        ("PTX", "ptx"),  # a name
        ("fatbin", "fat-binary"),  # an alias
        ("native GPU code", "sass"),  # a many-word alias whose words other pages use often
        ("just-in-time", "jit-compilation"),  # a hyphenated alias, in part (issue 16)
        ("CTA", "thread-block"),  # an abbreviation
        ("no kernel image is available for execution on the device", "no-kernel-image"),  # the error string
        ("cudaErrorNoKernelImageForDevice", "no-kernel-image"),  # an API name on the page
    ],
)
def test_search_ranks_a_term_first_for_its_name_alias_abbreviation_and_error_string(
    reader: Reader, query: str, slug: str
) -> None:
    page = reader.open("")
    found = _search(page, query)
    assert found and found[0].rstrip("/").rsplit("/", 1)[-1] == slug, f"{query!r}: top results {found[:3]}"
    assert reader.problems == []


def test_a_term_page_reads_definition_first_then_numbers_links_sources_and_byline(reader: Reader) -> None:
    page = reader.open("terms/jit-compilation/")
    article = page.locator("article")
    assert article.locator("h1").inner_text().startswith("What is CUDA JIT compilation?")
    first = article.locator("h1 ~ p").first.inner_text()
    assert first.startswith("The CUDA driver translating PTX into SASS")
    # Headings in reading order.
    headings = [h.strip("¶ \n") for h in article.locator("h2").all_inner_texts()]
    assert headings == ["Measured", "Related terms", "Where you meet this", "Sources", "Continue reading", "Byline"]
    # Sources carry their checked-on date or say they are not checked yet, and a quoted one its quote.
    sources = article.locator("h2#sources + ul > li").all_inner_texts()
    checked = r"\((checked \d{4}-\d{2}-\d{2}|not yet checked)(; quote (checked \d{4}-\d{2}-\d{2}|not yet checked))?\)"
    assert sources and all(re.search(checked + r"(: “[^”]+”)?$", s) for s in sources)
    assert any(s.endswith("”") for s in sources)  # jit-compilation quotes its sources
    link = article.locator("h2#sources + ul > li a[href*=':~:text=']").first
    assert link.get_attribute("href").startswith("https://")  # linked at its quote
    byline = article.locator("h2#byline ~ p").first.inner_text()
    for label in ("Written by:", "Reviewed by:", "Written on:", "Last checked on:", "The numbers came from"):
        assert label in byline
    assert "\n" not in byline.strip()  # one compact line, as the seed's byline
    assert reader.problems == []


def test_a_measured_number_reaches_its_provenance_in_one_click(reader: Reader) -> None:
    page = reader.open("terms/jit-compilation/")
    value = page.locator("article p a[href*='measurements/ptx-jit/#']").first
    title = value.get_attribute("title") or ""
    # one number inline from the one card that measured it, its provenance and runs in the hover, its row one click away
    node = urlsplit(value.get_attribute("href") or "").fragment.rsplit("-", 1)[0]  # the card whose row holds it
    found = re.search(rf"NVIDIA [^;]*\(card {re.escape(node)}\), measured \d{{4}}-\d{{2}}-\d{{2}}", title)
    assert found is not None and node, (node, title)
    shown = value.inner_text()
    value.click()
    page.wait_for_url(re.compile(rf"/measurements/ptx-jit/#{re.escape(node)}-"))
    anchor = urlsplit(page.url).fragment
    row = page.locator(f"[id='{anchor}']")
    assert row.is_visible()
    assert shown in row.inner_text()
    provenance = page.locator("article").inner_text()
    for label in ("GPU", "Compute capability", "Driver", "NVRTC", "cuda-bindings", "Git commit", "Repeats"):
        assert label in provenance
    assert reader.problems == []


def test_related_terms_and_backlinks_navigate(reader: Reader) -> None:
    page = reader.open("terms/sass/")
    related = page.locator("h2#related-terms + ul > li")
    own = related.filter(has_not_text="(its page mentions SASS)").first
    own.locator("a").click()
    page.wait_for_url(re.compile(r"/terms/ptx/$"))
    assert page.locator("article h1").inner_text().startswith("What is PTX?")
    page = reader.open("terms/sass/")
    back = page.locator("h2#related-terms + ul > li").filter(has_text="(its page mentions SASS)").first
    target = back.locator("a")
    href = str(target.get_attribute("href"))
    target.click()
    page.wait_for_url(re.compile("/terms/" + re.escape(href.removeprefix("../")) + "$"))
    # The page that links here does link to SASS.
    assert page.locator("article a[href$='sass/']").count() > 0
    assert reader.problems == []


def test_hovering_an_auto_linked_term_shows_its_definition(reader: Reader) -> None:
    page = reader.open("terms/jit-compilation/")
    link = page.locator("article p a[href='../sass/']").first
    link.hover()
    tooltip = page.locator(".md-tooltip2--active")
    tooltip.wait_for(state="visible")
    assert tooltip.inner_text().startswith("The native machine code of an NVIDIA GPU generation")
    page.keyboard.press("Escape")  # dismissed without moving the pointer (WCAG 1.4.13)
    tooltip.wait_for(state="hidden")
    page.locator("article p a[href='../ptx/']").first.hover()  # and shown again on the next hover
    page.locator(".md-tooltip2--active").wait_for(state="visible")
    assert reader.problems == []


def _background(page: Any) -> str:
    return str(page.evaluate("getComputedStyle(document.body).backgroundColor"))


def test_light_and_dark_palettes_both_render(reader: Reader) -> None:
    page = reader.open("")
    assert page.evaluate("document.body.dataset.mdColorScheme") == "default"
    light = _background(page)
    page.screenshot(path=shot("home-light.png"), full_page=True)
    page = reader.open("terms/jit-compilation/")
    page.screenshot(path=shot("jit-compilation-light.png"), full_page=True)
    page.locator("label[title='Switch to dark mode']").click()
    page.wait_for_function("document.body.dataset.mdColorScheme === 'slate'")
    dark = _background(page)
    assert light != dark
    page.screenshot(path=shot("jit-compilation-dark.png"), full_page=True)
    page = reader.open("")  # the choice is remembered from page to page
    assert page.evaluate("document.body.dataset.mdColorScheme") == "slate"
    page.screenshot(path=shot("home-dark.png"), full_page=True)
    assert reader.problems == []


def _site_pages(site: Path) -> list[str]:
    return sorted(p.parent.relative_to(site).as_posix() + "/" for p in site.rglob("index.html"))


def test_a_phone_sized_screen_has_no_horizontal_scroll(browser: Any, base: str, browser_site: Path) -> None:
    context = browser.new_context(viewport={"width": 360, "height": 740}, device_scale_factor=2, is_mobile=True)
    reader = Reader(context.new_page(), base)
    wide = []
    for path in _site_pages(browser_site):
        page = reader.open("" if path == "./" else path)
        width = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        if width[0] > width[1]:
            wide.append(f"{path}: {width[0]}px wide in {width[1]}px")
    page = reader.open("terms/jit-compilation/")
    page.screenshot(path=shot("jit-compilation-phone.png"), full_page=True)
    context.close()
    assert wide == [], "\n".join(wide)
    assert reader.problems == []


def test_no_page_has_a_console_error_a_broken_internal_link_or_a_missing_asset(
    reader: Reader, browser_site: Path
) -> None:
    pages = _site_pages(browser_site)
    assert len(pages) >= len(REPO_TERMS) + 5
    broken: list[str] = []
    for path in pages:
        page = reader.open("" if path == "./" else path)
        # getAttribute, not a.href: an SVG link's href is an SVGAnimatedString (charts' points are links)
        hrefs = page.evaluate(
            "[...document.querySelectorAll('a[href]')].map(a => new URL(a.getAttribute('href'), document.baseURI).href)"
        )
        for href in hrefs:
            parts = urlsplit(href)
            if not href.startswith(reader.base):
                continue
            local = browser_site / parts.path.lstrip("/")
            if not (local.is_file() or (local / "index.html").is_file()):
                broken.append(f"{path}: {href}")
            elif parts.fragment and (local / "index.html").is_file():
                html_text = (local / "index.html").read_text(encoding="utf-8")
                if f'id="{parts.fragment}"' not in html_text:
                    broken.append(f"{path}: {href} (no such anchor)")
    assert broken == []
    assert reader.problems == []
