"""The plain docs tree (`cudagloss render`) built by both builders: MkDocs + Material and
Zensical must publish the same pages, the same internal links and anchors, the same
measured values, the same JSON-LD and the same root files, and `cudagloss export` must
write the same bytes as both. Zensical's --strict checks links; ours below check them in
both sites, so nothing rests on one builder's validation."""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest

from conftest import ROOT, cudagloss
from cudagloss.site.search_names import NAMES_JSON
from localserver import Quiet, running
from sitebuild import MKDOCS, ZENSICAL

pytestmark = pytest.mark.builders

SITE_URL = "https://glossary.example/"
REPO_URL = "https://github.com/example/cuda-glossary"
ROOT_FILES = ("glossary.json", "llms.txt", "llms-full.txt")


@dataclass
class Page:
    """What a reader reaches in a page's article: links, anchors, measured values; and its JSON-LD."""

    hrefs: set[str] = field(default_factory=set)
    ids: set[str] = field(default_factory=set)
    values: set[tuple[str, str]] = field(default_factory=set)
    json_ld: list[str] = field(default_factory=list)
    edit: str | None = None


class _Reader(HTMLParser):
    def __init__(self, page: Page) -> None:
        super().__init__()
        self.page, self.article, self.in_ld = page, 0, False
        self.link: str | None = None
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "article":
            self.article += 1
        if tag == "script" and a.get("type") == "application/ld+json":
            self.in_ld = True
        if tag == "a" and a.get("rel") == "edit":
            self.page.edit = a.get("href")
        if not self.article:
            return
        if a.get("id") and not str(a["id"]).startswith("__"):  # '__skip' and such belong to the theme
            self.page.ids.add(str(a["id"]))
        if tag == "a" and a.get("href"):
            self.page.hrefs.add(str(a["href"]))
            self.link, self.text = str(a["href"]), []

    def handle_endtag(self, tag: str) -> None:
        if tag == "article":
            self.article -= 1
        if tag == "script":
            self.in_ld = False
        if tag == "a" and self.link is not None:
            if "measurements/" in self.link and "#" in self.link:
                self.page.values.add((self.link, "".join(self.text).strip()))
            self.link = None

    def handle_data(self, data: str) -> None:
        if self.in_ld:
            self.page.json_ld.append(data)
        if self.link is not None:
            self.text.append(data)


def read_site(site: Path) -> dict[str, Page]:
    """Every HTML page of a built site by its URL path, links resolved against that path."""
    pages = {}
    for path in sorted(site.rglob("*.html")):
        url = "/" + path.relative_to(site).as_posix().removesuffix("index.html")
        page = Page()
        _Reader(page).feed(path.read_text(encoding="utf-8"))
        base = "https://site.test" + url
        page.hrefs = {urljoin(base, h) for h in page.hrefs}
        page.values = {(urljoin(base, h), text) for h, text in page.values}
        pages[url] = page
    return pages


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The repository's glossary rendered once, then built by each builder."""
    base = tmp_path_factory.mktemp("builders")
    tree = base / "tree"
    run = cudagloss(ROOT, "render", "--strict", "--out", str(tree), "--site-url", SITE_URL, "--repo-url", REPO_URL)
    assert run.returncode == 0, run.stderr
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    mkdocs = subprocess.run(
        [*MKDOCS, "build", "--strict", "--config-file", str(tree / "mkdocs.yml"), "--site-dir", str(base / "mkdocs")],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert mkdocs.returncode == 0, mkdocs.stderr
    zensical = subprocess.run(
        [*ZENSICAL, "build", "--strict", "--clean"],
        cwd=tree,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert zensical.returncode == 0, zensical.stdout + zensical.stderr
    shutil.move(tree / "site", base / "zensical")
    return {"tree": tree, "mkdocs": base / "mkdocs", "zensical": base / "zensical"}


@pytest.fixture(scope="module")
def built(sites: dict[str, Path]) -> dict[str, dict[str, Page]]:
    return {name: read_site(sites[name]) for name in ("mkdocs", "zensical")}


Sites = dict[str, Path]
Built = dict[str, dict[str, Page]]


def _url(source: str) -> str:
    """Where a builder publishes a page: 'terms/ptx.md' at '/terms/ptx/', 'index.md' at '/'."""
    return "/" + (source.removesuffix("index.md") if source.endswith("index.md") else source.removesuffix(".md") + "/")


def test_both_builders_publish_every_page_of_the_tree(sites: Sites, built: Built) -> None:
    docs = sites["tree"] / "docs"
    expected = {_url(p.relative_to(docs).as_posix()) for p in docs.rglob("*.md")}
    for name, pages in built.items():
        assert expected <= set(pages), (name, sorted(expected - set(pages))[:5])
    assert set(built["mkdocs"]) == set(built["zensical"])
    assert len(expected) > 40  # home, sections, 35 terms, measurements


def test_same_links_anchors_values_and_json_ld_in_both(built: Built) -> None:
    mkdocs, zensical = built["mkdocs"], built["zensical"]
    for url, page in mkdocs.items():
        other = zensical[url]
        assert page.hrefs == other.hrefs, (url, sorted(page.hrefs ^ other.hrefs)[:5])
        assert page.ids == other.ids, (url, sorted(page.ids ^ other.ids)[:5])
        assert page.values == other.values, (url, sorted(page.values ^ other.values)[:5])
        assert page.json_ld == other.json_ld, url
        assert page.edit == other.edit, url
    term = mkdocs["/terms/jit-compilation/"]
    assert len(term.values) >= 5 and all(text for _, text in term.values)
    assert json.loads(term.json_ld[0])["url"] == SITE_URL + "terms/jit-compilation/"
    assert json.loads(mkdocs["/"].json_ld[0])["@type"] == "DefinedTermSet"
    assert term.edit == f"{REPO_URL}/edit/main/terms/jit-compilation.yaml"


def test_every_internal_link_and_anchor_resolves_in_both(sites: Sites, built: Built) -> None:
    for name, pages in built.items():
        broken = []
        for url, page in pages.items():
            for href in page.hrefs:
                parts = urlsplit(href)
                if parts.netloc != "site.test":
                    continue
                if parts.path.endswith("/"):
                    target = pages.get(parts.path)
                    if target is None or (parts.fragment and parts.fragment not in target.ids):
                        broken.append((url, href))
                elif not (sites[name] / parts.path.lstrip("/")).is_file():
                    broken.append((url, href))
        assert not broken, (name, broken[:5])


def test_root_files_are_the_same_bytes_in_both_sites_and_the_export(sites: Sites, tmp_path: Path) -> None:
    run = cudagloss(ROOT, "export", "--out", str(tmp_path), "--site-url", SITE_URL)
    assert run.returncode == 0, run.stderr
    for name in ROOT_FILES:
        published = (sites["mkdocs"] / name).read_bytes()
        assert published == (sites["zensical"] / name).read_bytes(), name
        assert published == (tmp_path / name).read_bytes(), name
    assert (sites["mkdocs"] / NAMES_JSON).read_bytes() == (sites["zensical"] / NAMES_JSON).read_bytes()
    raw = sorted(p.relative_to(sites["mkdocs"]) for p in (sites["mkdocs"] / "measurements").rglob("*.json"))
    assert raw and all((sites["zensical"] / p).read_bytes() == (sites["mkdocs"] / p).read_bytes() for p in raw)


class _Files(Quiet, SimpleHTTPRequestHandler):
    pass


@pytest.mark.browser
def test_zensical_search_is_left_to_itself_by_glossary_js(sites: Sites, browser: Any) -> None:
    """glossary.js is on Zensical's pages too, where search has another interface: it leaves it
    alone (it does not even fetch its names), and Zensical's search answers with no page error."""
    with running(functools.partial(_Files, directory=str(sites["zensical"]))) as url:
        context = browser.new_context()
        try:
            page = context.new_page()
            problems: list[str] = []

            def console(message: Any) -> None:
                # Ours only: the header asks GitHub for the repository's facts, which the closed network refuses.
                if message.type == "error" and message.location.get("url", "").startswith(url):
                    problems.append(message.text)

            page.on("console", console)
            page.on("pageerror", lambda e: problems.append(str(e)))
            page.on("request", lambda r: problems.append(r.url) if NAMES_JSON in r.url else None)
            page.goto(url + "/terms/occupancy/", wait_until="load")
            page.locator(".md-search__button").click()
            page.keyboard.type("occupancy")
            results = page.locator("ol[role='listbox'] a[role='option']")  # inside Zensical's shadow root
            results.first.wait_for()
            # Zensical ranks by its own rules (the measurement page may come first: it reads no boost)
            assert any("/terms/occupancy/" in str(a.get_attribute("href")) for a in results.all())
            assert problems == []
        finally:
            context.close()


_FIGURE = re.compile(r'<figure class="cg-(?:chart|diagram)".*?</figure>', re.DOTALL)


def test_charts_are_the_same_bytes_in_both(sites: Sites) -> None:
    """A chart or diagram is raw HTML the builders pass through: the same SVG, caption and links in
    both. Zensical removes the search marker (data-search-exclude) once it has read it; MkDocs keeps it."""

    def figures(path: Path) -> list[str]:
        return [f.replace(' data-search-exclude=""', "") for f in _FIGURE.findall(path.read_text(encoding="utf-8"))]

    charted = []
    for page in sorted((sites["mkdocs"] / "terms").glob("*/index.html")):
        found = figures(page)
        assert found == figures(sites["zensical"] / page.relative_to(sites["mkdocs"])), page.parent.name
        assert all("data-search-exclude" in f for f in _FIGURE.findall(page.read_text(encoding="utf-8")))
        charted += [page.parent.name] * len(found)
    assert {"occupancy", "memory-latency", "memory-bandwidth", "memory-coalescing"} <= set(charted), charted
    assert {"bank-conflict", "warp-divergence", "pinned-memory", "tensor-core"} <= set(charted), charted
    assert {"streaming-multiprocessor", "thread-block", "jit-compilation"} <= set(charted), charted
