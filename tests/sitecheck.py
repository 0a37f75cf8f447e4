"""Reading a built site: pages, their links, and what the primary navigation holds."""

from __future__ import annotations

import posixpath
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit


class PageLinks(HTMLParser):
    """Collects every href, every element id, and the hrefs inside Material's primary nav."""

    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.ids: set[str] = set()
        self.nav_hrefs: list[str] = []
        self._nav_depth = 0  # >0 while inside the primary <nav>

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(str(a["id"]))
        if tag == "nav":
            if self._nav_depth:
                self._nav_depth += 1
            elif "md-nav--primary" in (a.get("class") or ""):
                self._nav_depth = 1
        href = a.get("href")
        if tag == "a" and href is not None:
            self.hrefs.append(href)
            if self._nav_depth:
                self.nav_hrefs.append(href)

    def handle_endtag(self, tag: str) -> None:
        if tag == "nav" and self._nav_depth:
            self._nav_depth -= 1


def parse(path: Path) -> PageLinks:
    parser = PageLinks()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def internal_target(site: Path, page: Path, href: str) -> tuple[Path, str] | None:
    """The file and fragment an internal href points at, or None for external links."""
    parts = urlsplit(href)
    if parts.scheme or parts.netloc or href.startswith(("mailto:", "javascript:")):
        return None
    if not parts.path:
        return page, parts.fragment
    rel = posixpath.normpath(posixpath.join(page.parent.relative_to(site).as_posix(), parts.path))
    target = site / rel
    if parts.path.endswith("/") or target.is_dir():
        target = target / "index.html"
    return target, parts.fragment


def broken_links(site: Path) -> list[str]:
    """'page -> href' for each internal link whose file or anchor does not exist."""
    problems = []
    cache: dict[Path, PageLinks] = {}

    def parsed(path: Path) -> PageLinks:  # each page parsed once (setdefault would parse it on every call)
        if path not in cache:
            cache[path] = parse(path)
        return cache[path]

    for page in sorted(site.rglob("*.html")):
        if page.name == "404.html":  # served at any depth, so its links are absolute by design
            continue
        links = parsed(page)
        for href in links.hrefs:
            found = internal_target(site, page, href)
            if found is None:
                continue
            target, fragment = found
            if not target.exists():
                problems.append(f"{page.relative_to(site)} -> {href}")
            elif fragment and target.suffix == ".html":
                ids = parsed(target).ids
                if fragment not in ids:
                    problems.append(f"{page.relative_to(site)} -> {href} (no anchor)")
    return problems
