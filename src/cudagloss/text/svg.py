"""The SVG a page may hold, as one allowlist, and what an author's diagram file does outside it.

A chart (cudagloss.site.chart_svg) and a diagram from diagrams/ are inline SVG in the page, so
they pass the page sanitiser (cudagloss.site.escape.clean_html, ammonia), whose tables are these:
shapes, text and links; nothing that can fetch (image, use, feImage, a url() in any attribute),
run (script, animate, set, on* handlers), style (style elements and attributes, whose CSS can
fetch) or embed HTML (foreignObject). The sanitiser removes anything else silently; the check
stage reads a diagram file with `problems` first, so an author learns at which line and column
the sanitiser would have removed something, and a committed diagram is shown exactly as drawn.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from cudagloss.text.charrefs import bound_charrefs

SVG_TAGS = (
    "svg",
    "g",
    "path",
    "circle",
    "ellipse",
    "rect",
    "line",
    "polyline",
    "polygon",
    "text",
    "tspan",
    "title",
    "desc",
)
_PAINT = {
    "class",
    "fill",
    "stroke",
    "stroke-width",
    "stroke-dasharray",
    "stroke-linecap",
    "stroke-linejoin",
    "opacity",
    "fill-opacity",
    "transform",
}
_TEXT = {"x", "y", "dx", "dy", "text-anchor", "dominant-baseline", "font-size", "font-weight", "font-style"}
SVG_ATTRIBUTES: dict[str, set[str]] = {
    "svg": {"viewBox", "role", "font-size", "font-family", *_PAINT},
    "g": set(_PAINT) | {"font-size", "font-weight", "text-anchor"},
    "path": {"d", *_PAINT},
    "circle": {"cx", "cy", "r", *_PAINT},
    "ellipse": {"cx", "cy", "rx", "ry", *_PAINT},
    "rect": {"x", "y", "width", "height", "rx", "ry", *_PAINT},
    "line": {"x1", "y1", "x2", "y2", *_PAINT},
    "polyline": {"points", *_PAINT},
    "polygon": {"points", *_PAINT},
    "text": _TEXT | _PAINT,
    "tspan": _TEXT | _PAINT,
}
"""Per element; the page also allows `class`, `id` and `title` on every element, and a diagram
file may not use `id` (it could take a heading's anchor)."""

_URL = re.compile(r"url\s*\(|^\s*[a-z][a-z0-9+.-]*\s*:", re.IGNORECASE)
_MEASURED = re.compile(r"""\{\{\s*measured\(\s*"([a-z0-9-]+)"\s*,\s*"([a-z0-9_]+)"\s*\)\s*\}\}""")
MEASURED = _MEASURED
"""`{{ measured("experiment", "result") }}` in a diagram's text: the value is put there at render time."""


def fetches(value: str) -> bool:
    """Whether an attribute's value could name something to fetch or run: url(...), a scheme."""
    return _URL.search(value) is not None


class _Reader(HTMLParser):
    """Every element and attribute outside the allowlist, with its 1-based line and column."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[int, int, str]] = []
        self.depth = 0
        self.roots = 0

    def _at(self, message: str) -> None:
        line, col = self.getpos()
        self.found.append((line, col + 1, message))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.depth == 0:
            self.roots += 1
            if tag != "svg":
                self._at(f"<{tag}> outside the <svg> element")
        if tag not in SVG_TAGS:
            self._at(f"<{tag}> is not allowed in a diagram")
        allowed = SVG_ATTRIBUTES.get(tag, set())
        for name, value in attrs:
            spelt = next((a for a in allowed if a.lower() == name), None)
            if spelt is None:
                self._at(f"<{tag} {name}> is not allowed in a diagram")
            elif value is not None and fetches(value):
                self._at(f"<{tag} {spelt}> names something to fetch or run: {value[:40]!r}")
        self.depth += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        self.depth -= 1

    def handle_endtag(self, tag: str) -> None:
        self.depth = max(0, self.depth - 1)

    def handle_decl(self, decl: str) -> None:
        self._at("a <!DOCTYPE> is not allowed in a diagram (its entities could expand without bound)")

    def unknown_decl(self, data: str) -> None:
        self._at("a <![...]> section is not allowed in a diagram")

    def handle_pi(self, data: str) -> None:
        if not data.startswith("xml ") or self.getpos() != (1, 0):
            self._at("a processing instruction other than the XML declaration is not allowed")

    def handle_data(self, data: str) -> None:
        if self.depth == 0 and data.strip():
            self._at("text outside the <svg> element")


def problems(text: str) -> list[tuple[int, int, str]]:
    """(line, column, message) of everything in a diagram file the page sanitiser would remove,
    and of text in braces that is not a measured(...) label."""
    reader = _Reader()
    reader.feed(bound_charrefs(text))
    reader.close()
    found = reader.found
    if reader.roots != 1:
        found.append((1, 1, "a diagram file holds one <svg> element"))
    for match in re.finditer(r"\{\{|\{%|\{#", text):
        if not _MEASURED.match(text, match.start()):
            line = text.count("\n", 0, match.start()) + 1
            col = match.start() - (text.rfind("\n", 0, match.start()) + 1) + 1
            found.append((line, col, 'only {{ measured("experiment", "result") }} may stand in braces'))
    return sorted(found)
