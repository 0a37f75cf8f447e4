"""A glossary written by an attacker, built for real and read in a real browser.

Every field a term, the sections file or a measurement file can hold gets a payload that
would run script, load a page or inject markup if any stage trusted it. The site must
build (`mkdocs build --strict`), show each payload as text, and in Debian's Chromium no
script may run: no dialog, no `window.__pwned`, on every page and in search results. The
built HTML is also read statically: no event handler, no javascript:/data: URL, no script
but the theme's own and our JSON-LD.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler
from pathlib import Path
from typing import Any

import markdown
import pytest
import yaml

from conftest import ROOT
from cudagloss.text.markdown import link_scheme
from localserver import Quiet, running
from sitebuild import build, fixture_config

pytestmark = pytest.mark.builders

PWN = "window.__pwned=1"
MODELINE = "# yaml-language-server: $schema=../schema/term.schema.json\n"
# Payloads for plain-text fields: each would be live if it reached HTML, Markdown or the
# <title> unescaped.
TEXT = [
    f"<script>{PWN}</script>",
    f'<img src=x onerror="{PWN}">',
    f"[click](javascript:{PWN})",
    f"</title><script>{PWN}</script>",
    f'"><svg onload="{PWN}">',
    f"<a href='javascript:{PWN}'>a</a>",
    f"&lt;script&gt;{PWN}&lt;/script&gt;",
    f'![i](x "onerror={PWN}")',
    f"[x]: javascript:{PWN}",
    f"`` ` `` <iframe src=javascript:{PWN}>",
    # quotes, backslashes and an emoji: the names index (JSON) and the script that reads it
    f'back\\slash \\" \\u003c "quoted" \'single\' \U0001f600 </script><script>{PWN}</script>\\',
]
# Payloads for Markdown fields (body, definition, notes) that validation lets through
# (script URLs and images it refuses, tests/check/test_author_text.py): raw HTML is shown as
# text, so these must stay inert too.
MARKDOWN = [
    f"Raw <script>{PWN}</script> and <img src=x onerror={PWN}> and <svg/onload={PWN}>.",
    f'An <a href="https://attacker.invalid/">anchor</a> and <details open ontoggle={PWN}>x</details>.',
    "Autolinks <https://example.com/a> and <iframe src=https://attacker.invalid/></iframe>.",
    f"Entities &#60;script&#62;{PWN}&#60;/script&#62; and `<script>{PWN}</script>` in code.",
    f"<style>*{{background:url(https://attacker.invalid/x)}}</style> <!-- <script>{PWN}</script> -->",
    f"Link text [<img src=x onerror={PWN}>] and [<a href=https://attacker.invalid/>x</a>](https://example.com/).",
]


def _term(i: int, text: str) -> dict[str, Any]:
    markdown_text = MARKDOWN[i % len(MARKDOWN)]
    return {
        "name": f"Hostile {i} {text}",
        "title": f"What is {text}?",
        "definition": f"A hostile definition {markdown_text} ends here.",
        "section": "attack",
        "aliases": [f"alias {i} {text}"],
        "error_strings": [f"error {text}"],
        "body": f"Body of {i}. {markdown_text}\n\n{MARKDOWN[(i + 1) % len(MARKDOWN)]}\n\n"
        + ('Measured: {{ measured("warp-size", "warp_size") }}.\n' if i == 0 else "")
        # Material reads its configuration from the first '#__config' on the page.
        + ('\n## __config\n\nText.\n\n```\n<div id="__config">{}</div>\n' if i == 1 else ""),
        "related": [f"hostile-{(i + 1) % len(TEXT)}"],
        "where_you_meet_this": [
            {"label": f"label {text}", "link": "https://example.com/a?b=1&c=2", "note": markdown_text},
            {"label": f"plain {text}"},
        ],
        "sources": [{"title": f"source {text}", "url": "https://example.com/source"}],
        "measurements": [{"experiment": "warp-size", "note": f"note {markdown_text}"}] if i == 0 else [],
        "byline": {"written_by": f"Author {text}", "reviewed_by": f"Reviewer {text}"},
    }


def _measurement(node: str, text: str) -> dict[str, Any]:
    good = json.loads((ROOT / "tests/fixtures/good-measurements/warp-size/fixture-a.json").read_text(encoding="utf-8"))
    good["provenance"]["node"] = node
    good["provenance"]["gpu_name"] = f"GPU {text}"
    good["provenance"]["driver_version"] = f"driver {text}"
    good["purpose"] = f"Purpose {text}"
    for gate in good["gates"]:
        gate["detail"] = f"detail {text}"
    for result in good["results"]:
        result["description"] = f"description {text}"
    return dict(good)


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("hostile")
    terms, measurements = tmp / "terms", tmp / "measurements" / "warp-size"
    terms.mkdir()
    measurements.mkdir(parents=True)
    sections = {"sections": [{"slug": "attack", "title": f"Attack {TEXT[3]}", "description": f"Described {TEXT[1]}"}]}
    (terms / "_sections.yaml").write_text(yaml.safe_dump(sections), encoding="utf-8")
    for i, text in enumerate(TEXT):
        text_yaml = MODELINE + yaml.safe_dump(_term(i, text), sort_keys=False, allow_unicode=True)
        (terms / f"hostile-{i}.yaml").write_text(text_yaml, encoding="utf-8")
    for node, text in (("node-a", TEXT[0]), ("node-b", TEXT[3])):
        (measurements / f"{node}.json").write_text(json.dumps(_measurement(node, text), indent=2), encoding="utf-8")
    run = build(fixture_config(tmp, terms, tmp / "measurements"), tmp / "site")
    assert run.returncode == 0, run.stderr
    return tmp / "site"


class _Scan(HTMLParser):
    """What a browser would act on in one page: scripts, handlers, URLs, the title."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.title = ""
        self._in: str | None = None
        self._script_type = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if (
            a.get("id", "").startswith("__")
            and tag != "script"
            and not a.get("id", "").startswith(("__drawer", "__search", "__palette", "__toc", "__code"))
        ):
            self.problems.append(f"<{tag} id={a['id']!r}>: an id the theme's scripts look up")
        for name, value in a.items():
            if name.startswith("on"):
                self.problems.append(f"<{tag} {name}=...>")
            if name in ("href", "src", "action", "formaction", "xlink:href", "data", "poster") and link_scheme(
                value
            ) not in ("", "http", "https", "mailto"):
                self.problems.append(f"<{tag} {name}={value!r}>")
        if tag in ("iframe", "object", "embed", "base", "frame", "applet"):
            self.problems.append(f"<{tag}>")
        if tag == "meta" and a.get("http-equiv", "").lower() == "refresh":
            self.problems.append("<meta refresh>")
        if tag == "script":
            self._script_type = a.get("type", "")
            src = a.get("src", "")
            if src and not src.split("?")[0].endswith(".js"):
                self.problems.append(f"<script src={src!r}>")
            if not src and self._script_type not in ("application/ld+json", "application/json"):
                self._in = "inline-script"
            else:
                self._in = "script"
        elif tag in ("title", "style"):
            self._in = tag

    def handle_endtag(self, tag: str) -> None:
        self._in = None

    def handle_data(self, data: str) -> None:
        if self._in == "title":
            self.title += data
        elif self._in == "inline-script" and PWN.split("=")[0] in data:
            self.problems.append(f"inline script holds the payload: {data[:80]!r}")
        elif self._in == "script" and self._script_type == "application/ld+json":
            json.loads(data)  # a JSON-LD block must stay exactly one JSON value
        elif self._in == "style" and "attacker.invalid" in data:
            self.problems.append("author CSS reached a <style>")


def test_hostile_site_builds_and_no_page_holds_anything_live(hostile_site: Path) -> None:
    pages = sorted(hostile_site.rglob("*.html"))
    assert len(pages) >= len(TEXT) + 3
    for page in pages:
        scan = _Scan()
        scan.feed(page.read_text(encoding="utf-8"))
        assert scan.problems == [], (page, scan.problems)
    # Titles show the payload as text: the browser's title is the author's string.
    scan = _Scan()
    scan.feed((hostile_site / "terms/hostile-3/index.html").read_text(encoding="utf-8"))
    assert scan.title.startswith(f"What is {TEXT[3]}? - ")
    # The exports carry the same text, escaped as Markdown.
    for name in ("llms-full.txt", "llms.txt"):
        # Code spans show their text literally (an escaped backtick opens none); outside them
        # nothing may be markup.
        exported = re.sub(r"(?<![\\`])(`+)(?!`).+?(?<!`)\1(?!`)", "", (hostile_site / name).read_text(encoding="utf-8"))
        assert "<script" not in exported and "<img" not in exported and "<svg" not in exported, name
        # A Markdown renderer would make '](javascript:' a link unless its ']' is escaped.
        assert not re.search(r"(?<!\\)\]\(\s*<?javascript:", exported), name
        # Rendered as a reader's Markdown viewer would (Python-Markdown, raw HTML kept), the
        # export holds nothing live either.
        scan = _Scan()
        scan.feed(markdown.markdown((hostile_site / name).read_text(encoding="utf-8"), extensions=["tables"]))
        assert [p for p in scan.problems if "inline script" not in p] == [], (name, scan.problems)
        assert "<script" not in markdown.markdown(exported), name


def test_search_index_holds_text_not_markup(hostile_site: Path) -> None:
    index = json.loads((hostile_site / "search/search_index.json").read_text(encoding="utf-8"))
    for doc in index["docs"]:
        # tags: a term's names, which Material's search results print as HTML
        for field, text in [
            ("title", doc["title"]),
            ("text", doc["text"]),
            *(("tags", t) for t in doc.get("tags", [])),
        ]:
            scan = _Scan()
            scan.feed(text)
            assert scan.problems == [], (doc["location"], field, scan.problems)
            assert "<script" not in text and "<img" not in text and "<svg" not in text


class _Files(Quiet, SimpleHTTPRequestHandler):
    pass


@pytest.fixture(scope="module")
def hostile_base(hostile_site: Path) -> Iterator[str]:
    with running(functools.partial(_Files, directory=str(hostile_site))) as url:
        yield f"{url}/"


@pytest.mark.browser
def test_no_script_runs_in_chromium_on_any_page_or_in_search(
    hostile_site: Path, hostile_base: str, browser: Any
) -> None:
    paths = [
        "",
        *sorted(
            p.parent.relative_to(hostile_site).as_posix() + "/"
            for p in hostile_site.rglob("index.html")
            if p.parent != hostile_site and p.parent.name != "search"
        ),
    ]
    context = browser.new_context()
    try:
        # Anything leaving 127.0.0.1 is an injected load (an image, a frame, a style).
        outside: list[str] = []

        def route(request: Any) -> None:
            if request.request.url.startswith(hostile_base):
                request.continue_()
            else:
                outside.append(request.request.url)
                request.abort()

        context.route("**/*", route)
        page = context.new_page()
        dialogs: list[str] = []

        def dialog(d: Any) -> None:
            dialogs.append(d.message)
            d.dismiss()

        page.on("dialog", dialog)
        for path in paths:
            page.goto(hostile_base + path, wait_until="load")
            assert page.evaluate("window.__pwned") is None, path
            # Material's configuration is still its own script (content cannot shadow it).
            assert page.evaluate("document.querySelector('#__config').tagName") == "SCRIPT", path
            assert page.title().startswith(
                ("What is", "Attack", "Hostile", "CUDA", "Experiment", "Measurements", "Measure your GPU")
            ), (
                path,
                page.title(),
            )
        page.goto(hostile_base, wait_until="load")
        page.locator("input.md-search__input").click()
        page.keyboard.type("hostile")
        page.locator(".md-search-result__item").first.wait_for()
        page.locator(".md-search-result__item").first.hover()
        assert page.evaluate("window.__pwned") is None
        page.goto(hostile_base, wait_until="load")
        page.locator("article a[href^='terms/']").first.hover()  # tooltips render the definition
        page.locator(".md-tooltip2--active").wait_for(state="visible")  # rendered: whatever it ran has run
        assert page.evaluate("window.__pwned") is None
        assert dialogs == []
        assert [u for u in outside if "attacker" in u or u.startswith(("javascript", "data"))] == []
    finally:
        context.close()


def test_names_index_holds_the_names_as_data(hostile_site: Path) -> None:
    """glossary.js's names (javascripts/glossary-names.json): each payload as the string written,
    and no '<', '>' or '&' in the file for a browser sniffing it to take for markup."""
    raw = (hostile_site / "javascripts/glossary-names.json").read_text(encoding="utf-8")
    assert not {"<", ">", "&", "\u2028"} & set(raw)
    names = {t["url"]: t["names"] for t in json.loads(raw)["terms"]}
    assert names == {f"terms/hostile-{i}/": [f"Hostile {i} {text}", f"alias {i} {text}"] for i, text in enumerate(TEXT)}


@pytest.mark.browser
def test_search_shows_a_hostile_name_as_text(hostile_base: str, browser: Any) -> None:
    """A name typed exactly, and one letter wrong: the term first, and no script run. Material's
    own result for the page is then taken away, as when it is not among those Material shows:
    glossary.js adds one of its own, with the name as the text it is."""
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(hostile_base, wait_until="load")
        page.locator("input.md-search__input").click()
        for i in (0, 4, len(TEXT) - 1):
            name = f"Hostile {i} {TEXT[i]}"
            for query in (name, name.replace("Hostile", "Hostle", 1)):
                page.evaluate(
                    """query => {
                        const box = document.querySelector("input.md-search__input");
                        box.value = query;
                        box.dispatchEvent(new KeyboardEvent("keyup", {bubbles: true}));
                    }""",
                    query,
                )
                marked = "q => document.querySelector('.md-search-result__list').dataset.glossaryQuery === q"
                page.wait_for_function(marked, arg=query)
                first = page.locator(".md-search-result__list > li").first
                assert first.locator("a").first.evaluate("a => new URL(a.href).pathname") == f"/terms/hostile-{i}/"
                page.evaluate("document.querySelectorAll('.md-search-result__list > li').forEach(li => li.remove())")
                page.locator(".md-search-result__list > li.glossary-pick").wait_for()
                assert first.locator("h1").evaluate("h => h.textContent") == name
                assert page.evaluate("window.__pwned") is None
    finally:
        context.close()
