"""The one boundary between untrusted strings and what a reader sees.

Every string on a page comes from somewhere an attacker can write to: term YAML (pull
requests), `_sections.yaml`, measurement JSON, git history. Two rules cover all of them:

- **Plain text** (names, titles, labels, GPU names, units, byline names...) enters the
  generated Markdown through :func:`text`, which makes it inert both as Markdown (every
  character Markdown could act on is backslash-escaped) and as HTML (`& < > "` become
  entities), with line breaks folded to spaces. The result is ordinary readable Markdown,
  so the same rule serves the pages and the exported `glossary.md` / `llms.txt`.
- **Author Markdown** (bodies, definitions, notes) is rendered, and the page's HTML then
  passes :func:`clean_html`, an allowlist sanitiser (nh3, the Rust `ammonia` library):
  known tags and attributes only, URLs only http, https, mailto or relative, no script,
  style, event handler or comment survives, whatever the Markdown produced.

URLs that templates put in attributes go through :func:`url`, identifiers through
:func:`ident`; what the theme prints outside the page body (the `<title>`, navigation) is
HTML-escaped by the hooks and by `overrides/main.html`.
"""

from __future__ import annotations

import functools
import html
import json
import re
from typing import Any

from markupsafe import Markup

from cudagloss.model.urls import SAFE_SCHEMES, url_problem
from cudagloss.text.svg import SVG_ATTRIBUTES, SVG_TAGS, fetches

# Characters Markdown acts on wherever they are (backslash escapes, valid in CommonMark and
# Python-Markdown with its tables extension), and HTML's specials as entities.
_ALWAYS = str.maketrans(
    {**{c: "\\" + c for c in "\\`*[]|#"}, "~": "&#126;", "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}
)
# '_' between two letters or digits never starts emphasis; elsewhere it may.
_UNDERSCORE = re.compile(r"(?<![^\W_])_|_(?![^\W_])")
# What starts a block at the beginning of a line: list items, setext underlines,
# admonitions ('!!!'), details ('???'), ordered lists ('1.').
_LEADING = re.compile(r"^( ?)(?:([-+.!])|([=?:])|(\d+)([.)])(?=\s|$))")
_ENTITY_OF = {"=": "&#61;", "?": "&#63;", ":": "&#58;", ")": "&#41;"}
_SPACES = re.compile(r"\s+")
_PLAIN = re.compile(r"(?:[^\\`*\[\]|~#&<>\"_\s]| (?! ))*")
"""Text with nothing to escape: no special character and no run of white space."""
_IDENT = re.compile(r"[A-Za-z0-9_.:-]+")


def text(value: object) -> Markup:
    """Plain text as Markdown that shows exactly that text and nothing else, on one line,
    wherever a template puts it (even at the start of a line). Only what Markdown could act
    on is escaped, so the exported Markdown stays readable ('sm_90', '2026-12-03')."""
    return _text(str(value))


@functools.lru_cache(maxsize=1 << 16)
def _text(raw: str) -> Markup:
    """Memoised: a page prints the same names, dates and labels many times."""
    if _PLAIN.fullmatch(raw) and not _LEADING.match(raw):
        return Markup(raw)
    raw = _SPACES.sub(" ", raw)  # not stripped: templates print separators such as ", "
    # ']:' would start a reference definition at the beginning of a line, escaped or not.
    escaped = _UNDERSCORE.sub(r"\\_", raw.translate(_ALWAYS)).replace("]:", "]&#58;")
    return Markup(_LEADING.sub(_leading, escaped, count=1))


def link_title(value: object) -> Markup:
    """Plain text for a Markdown link's quoted title (a tooltip): as :func:`text`, with the
    parentheses, and a quote at either end, as entities: Python-Markdown's title parser
    takes those for the end of the link or for the title's own quotes."""
    title = str(text(str(value).strip())).replace("(", "&#40;").replace(")", "&#41;")
    if title.startswith("'"):
        title = "&#39;" + title[1:]
    if title.endswith("'"):
        title = title[:-1] + "&#39;"
    return Markup(title)


def _leading(match: re.Match[str]) -> str:
    space, mark, entity, digits, after = match.groups()
    if mark:
        return space + "\\" + mark
    if entity:
        return space + _ENTITY_OF[entity]
    return space + digits + ("\\." if after == "." else _ENTITY_OF[")"])


def html_text(value: object) -> Markup:
    """Plain text for a raw HTML block, where Markdown is not parsed: HTML escaping only."""
    return Markup(html.escape(_SPACES.sub(" ", str(value)).strip(), quote=True))


def code(value: object) -> Markup:
    """Plain text as a Markdown code span (shown literally), fenced with more backticks than it has."""
    raw = _SPACES.sub(" ", str(value)).strip()
    longest = max((len(run) for run in re.findall(r"`+", raw)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if raw.startswith("`") or raw.endswith("`") else ""
    return Markup(f"{ticks}{pad}{raw}{pad}{ticks}")


def code_block(value: object, language: str, indent: int = 0) -> Markup:
    """Text as a fenced code block, shown literally and highlighted as language ('text' unless
    it is a plain lexer name), fenced with more backticks than any run in it, every line
    indented by indent spaces (to sit inside an admonition or a details block)."""
    raw = str(value).replace("\r\n", "\n").replace("\r", "\n").strip("\n")
    longest = max((len(run) for run in re.findall(r"`+", raw)), default=0)
    fence = "`" * max(3, longest + 1)
    lexer = language if re.fullmatch(r"[a-z][a-z0-9+-]{0,30}", language) else "text"
    pad = " " * indent
    body = "\n".join(pad + line if line.strip() else "" for line in raw.split("\n"))
    return Markup(f"{pad}{fence}{lexer}\n{body}\n{pad}{fence}")


def url(value: str) -> Markup | None:
    """An absolute http(s) URL for an href attribute, or None when it is not one a reader may
    follow: the predicate validation and the link checker use (model.urls.url_problem)."""
    return Markup(html.escape(value, quote=True)) if url_problem(value) is None else None


def ident(value: str) -> Markup:
    """An id or anchor we computed (slugs, result anchors): only characters an id needs."""
    if not _IDENT.fullmatch(value):
        raise ValueError(f"not an identifier: {value!r}")
    return Markup(value)


_INERT = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def inert_json(text: str) -> str:
    """JSON text with <, >, & and the Unicode line separators as \\u escapes: they occur only
    inside its strings (JSON's syntax has none), so the data is unchanged, and neither a
    <script> element nor a browser sniffing the file for HTML finds markup in it."""
    for char, escaped in _INERT.items():
        text = text.replace(char, escaped)
    return text


def json_ld(data: dict[str, Any]) -> str:
    """JSON-LD for a <script> element that no string in it can close early or turn into
    markup (overrides/main.html writes it between the script tags)."""
    return inert_json(json.dumps(data, ensure_ascii=False))


# What the page templates, Python-Markdown (tables, admonitions, toc, details, highlight)
# and Material's markup use, and inline SVG (cudagloss.text.svg: charts and diagrams); anything
# else is dropped with its attributes.
# No <img>: an image would be fetched from another site by every reader's browser.
_TAGS = frozenset(
    [
        *SVG_TAGS,
        "a",
        "abbr",
        "b",
        "blockquote",
        "br",
        "caption",
        "code",
        "col",
        "colgroup",
        "dd",
        "del",
        "details",
        "div",
        "dl",
        "dt",
        "em",
        "figcaption",
        "figure",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "hr",
        "i",
        "ins",
        "kbd",
        "li",
        "mark",
        "ol",
        "p",
        "pre",
        "s",
        "samp",
        "small",
        "span",
        "strong",
        "sub",
        "summary",
        "sup",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "tr",
        "u",
        "ul",
    ]
)
ROBUST_LINKS = ("data-originalurl", "data-versionurl", "data-versiondate")
"""Robust Links (robustlinks.mementoweb.org): a link's original URL, an archived copy and its
date, so a reader's tools can find the page as it was when we cited it."""
_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


_ATTRIBUTES = {
    "*": {"class", "id", "title"},
    "a": {"href", *ROBUST_LINKS},
    "ol": {"start"},
    "td": {"colspan", "rowspan", "style"},
    "th": {"colspan", "rowspan", "style"},
    "details": {"open"},
    "figure": {"data-search-exclude"},  # a chart or diagram: its labels and ticks are not words to search
    **SVG_ATTRIBUTES,
}


_THEME_NAME = re.compile(r"^(?:_|md-|data-md)")
"""Ids and classes the theme's scripts and styles own: Material reads its configuration
from the first element with id '__config' and styles 'md-button' as its own controls, so
page content must never carry them (a heading '## __config' gets that id from toc)."""


def _attribute(element: str, attribute: str, value: str) -> str | None:
    if attribute in ROBUST_LINKS:  # an address a reader may follow, or a date; nothing else
        ok = _DAY.fullmatch(value) if attribute == "data-versiondate" else url_problem(value) is None
        return value if element == "a" and ok else None
    if attribute not in ("href", "title", "style") and fetches(value):  # SVG paint such as fill="url(https://...)"
        return None
    if attribute == "id":
        return None if _THEME_NAME.match(value) else value
    if attribute == "class":
        kept = [c for c in value.split() if not _THEME_NAME.match(c)]
        return " ".join(kept) or None
    return value


def clean_html(fragment: str) -> str:
    """A page's HTML body through the allowlist: the last word on what a reader's browser runs."""
    import nh3  # the site's dependency only: the verifier imports this package without it

    return nh3.clean(
        fragment,
        tags=set(_TAGS),
        attributes={k: set(v) for k, v in _ATTRIBUTES.items()},
        url_schemes=set(SAFE_SCHEMES),
        filter_style_properties={"text-align"},
        link_rel="noopener noreferrer",
        attribute_filter=_attribute,
    )
