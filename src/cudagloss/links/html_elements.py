"""What html_text.py knows of HTML's elements: which hold raw text, which are void, which hide
their content (and whether a start tag's attributes hide it), which separate text, which end tags
the HTML standard implies, what a <meta> refresh or a <script> type says; and what reading a
page found (PageText)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from cudagloss.links.css_text import declared
from cudagloss.links.html_css import Seen, Sheet


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


RAW = _names("script style title textarea xmp iframe noembed noframes noscript plaintext")
"""Elements whose content is text up to their own end tag, as in a browser that runs scripts
(so <noscript> is raw text, as it is there). Only textarea, xmp and plaintext show theirs."""
SHOWN_RAW = _names("textarea xmp plaintext")
VOID = _names("area base br col embed hr img input keygen link meta param source track wbr")
"""Elements with no content and no end tag."""
HIDING = _names("template svg annotation annotation-xml datalist rp script style title")
"""Elements whose content no reader sees: a template's, an SVG's (drawn, not text: its labels
and <title> are not prose), a MathML annotation (the TeX behind a formula), a datalist's, and
script, style and title where a foreign element (in <math>) makes them ordinary elements."""
HEADINGS = _names("h1 h2 h3 h4 h5 h6")
BLOCK = HEADINGS | _names(
    "address article aside audio blockquote body br button canvas caption center dd details dialog dir div "
    "dl dt embed fieldset figcaption figure footer form frameset header hgroup hr html iframe img input "
    "legend li listing main menu meter nav object ol optgroup option p plaintext pre progress search "
    "section select summary table tbody td textarea tfoot th thead tr ul video xmp"
)
"""Elements whose boundaries separate text (block boxes, table cells, replaced elements and
line breaks); every other element (a, em, code, span, sub, custom elements...) is inline, so a
sentence split across them is read whole."""
_P_CLOSERS = BLOCK - _names("br button canvas embed iframe img input meter object progress")
CLOSES: dict[str, frozenset[str]] = {
    **dict.fromkeys(_P_CLOSERS, frozenset({"p"})),
    **dict.fromkeys(HEADINGS, frozenset({"p", *HEADINGS})),
    "li": _names("p li"),
    "dd": _names("p dd dt"),
    "dt": _names("p dd dt"),
    "tr": _names("td th tr"),
    "td": _names("td th"),
    "th": _names("td th"),
    "option": _names("option"),
    "optgroup": _names("option optgroup"),
}
"""The end tags a start tag implies, looked for at the top of the stack only (<p>a<p>b,
<li>a<li>b, <td>a<td>b): the HTML standard looks deeper, which costs the depth per tag."""
BREAKOUT = _names(
    "b big blockquote body br center code dd div dl dt em embed h1 h2 h3 h4 h5 h6 head hr i img li listing "
    "menu meta nobr ol p pre ruby s small span strong strike sub sup table tt u ul var"
)
"""HTML start tags that end an unclosed <svg> or <math> (the HTML standard's foreign content):
a broken inline icon does not hide the rest of the page."""
_SCOPE = _names("applet caption html table td th marquee object template")
_SPECIAL_NAMES = _names(
    "address area article aside base basefont bgsound blockquote body br button center col colgroup dd details "
    "dialog dir div dl dt embed fieldset figcaption figure footer form frame frameset head header hgroup hr "
    "iframe img input keygen li link listing main menu meta nav noembed noframes noscript ol p param plaintext "
    "pre script search section select source style summary tbody textarea tfoot thead title tr track ul wbr xmp"
)
_SPECIAL = HEADINGS | _SCOPE | _SPECIAL_NAMES
_BOUNDS = {
    "scope": _SCOPE,
    "button": _SCOPE | {"button"},
    "list": _SCOPE | {"ol", "ul"},
    "table": _names("html table template"),
    "special": _SPECIAL,
}
_SCOPED_END = HEADINGS | _names(
    "address article aside blockquote button center details dialog dir div dl fieldset figcaption figure footer "
    "header hgroup listing main menu nav ol pre search section summary ul form dd dt applet marquee object template"
)
_TABLE_PARTS = _names("table tbody tfoot thead tr td th caption")
_FORMATTING = _names("a b big code em font i nobr s small strike strong tt u")


class Scopes:
    """Where the open elements are (depths, by name) and where the elements that bound the HTML
    standard's scopes are, so that an end tag a browser ignores (</div> in a table cell or an
    <object>, </span> past a <div>) is ignored here too, at O(1) work per tag."""

    def __init__(self) -> None:
        self.at: dict[str, list[int]] = {}
        self.bounds: dict[str, list[int]] = {kind: [] for kind in _BOUNDS}

    def push(self, name: str, depth: int) -> None:
        self.at.setdefault(name, []).append(depth)
        for kind, names in _BOUNDS.items():
            if name in names:
                self.bounds[kind].append(depth)

    def pop(self, name: str) -> None:
        self.at[name].pop()
        for kind, names in _BOUNDS.items():
            if name in names:
                self.bounds[kind].pop()

    def is_open(self, name: str) -> bool:
        return bool(self.at.get(name))

    def honoured(self, name: str) -> bool:
        """Whether an end tag closes an open element (</body> and </html> never pop anything)."""
        where = self.at.get(name)
        if not where or name in ("body", "html"):
            return False
        kind = (
            "table" if name in _TABLE_PARTS else "button" if name == "p" else "list" if name == "li"
            else "scope" if name in _SCOPED_END else "" if name in _FORMATTING else "special"
        )  # fmt: skip
        bounds = self.bounds.get(kind)
        return not bounds or bounds[-1] <= where[-1]


ROOT_IDS = _names("root app __next __nuxt ___gatsby svelte react-root app-root")
"""The ids of the element a single-page app fills with its scripts."""
_REFRESH = re.compile(
    r"""[\t\n\f\r ]*[0-9.]+[\t\n\f\r ]*[;,]?[\t\n\f\r ]*(?:url[\t\n\f\r ]*=[\t\n\f\r ]*)?(['"]?)(.*)""", re.I | re.S
)
"""A <meta http-equiv=refresh> content, as the HTML standard reads it: the delay, then the URL."""


def seen(name: str, attrs: dict[str, str], sheet: Sheet) -> Seen:
    """Whether the element and all it holds are shown. The hidden attribute hides, except
    hidden=until-found (find-in-page and text fragments reveal it, as they open a closed
    <details>); so does a <dialog> not open, and the page's CSS (html_css.py: an inline style,
    its <style> rules). aria-hidden does not: it hides from screen readers, not from sight
    (KaTeX marks the formula everyone sees aria-hidden). A hidden <html> or <body> is not
    taken at its word: a page hides itself whole only until its scripts have laid it out."""
    if name in HIDING or (name == "dialog" and "open" not in attrs):
        return Seen.HIDDEN
    if name in ("html", "body"):
        return Seen.SHOWN
    hidden = attrs.get("hidden")
    if hidden is not None and hidden.strip().lower() != "until-found":
        return Seen.HIDDEN
    style = attrs.get("style")
    return sheet.seen(name, attrs.get("class"), attrs.get("id"), declared(style) if style is not None else None)


def refresh_target(attrs: dict[str, str]) -> str:
    """Where a <meta> sends its reader on to: the URL of a refresh ('' for none, or for a
    refresh that only reloads the page)."""
    if attrs.get("http-equiv", "").strip().lower() != "refresh":
        return ""
    found = _REFRESH.match(attrs.get("content", ""))
    if found is None:
        return ""
    target = found.group(2)
    if found.group(1) and target.endswith(found.group(1)):
        target = target[:-1]
    return target.strip()


def runs(script_type: str) -> bool:
    """A <script> of this type is a program (not data such as JSON-LD or a template)."""
    kind = script_type.strip().lower()
    return kind in ("", "module") or "javascript" in kind or "ecmascript" in kind


@dataclass(frozen=True)
class PageText:
    """What reading a page found: its visible text, and the signs that scripts write it."""

    text: str
    scripts: int
    """<script> elements that run (inline or not; not JSON-LD or other data)."""
    noscript: str
    """The start of what its <noscript> elements say (markup in them left as it is)."""
    empty_root: bool
    """An app's root element (<div id="root">, <div id="__next">, <app-root>...) with no text."""
    refresh: str = ""
    """Where a <meta http-equiv=refresh> sends the reader on to ('' when it does not)."""
    sure: str | None = None
    """text less what the page's CSS may hide (each such run a MAYBE_MARK); None: text itself."""
    styles_unknown: str = ""
    """Why what the page's CSS hides is not known (a stylesheet not read...), or ''."""
    stylesheets: tuple[str, ...] = ()
    """The stylesheets to fetch before its hiding can be known (html_css.Sheet.missing)."""


MAYBE_MARK = "\uffff"
"""Stands in PageText.sure for text that may be hidden: a noncharacter, never in a quote."""
