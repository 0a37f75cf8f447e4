"""Reading CSS text as CSS reads it: the display and visibility a block of declarations sets,
and the simple parts of a selector. Comments and escapes are read as CSS reads them, so
`display:/**/none` and `display:non\\65` are display:none. Used by html_css.py; every regex
matches forward without nested repetition, so any text is read in linear time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cudagloss.links.css_tokens import scan, strip_comments

_ESCAPE = re.compile(r"\\(?:([0-9a-fA-F]{1,6})[\t\n\f\r ]?|(.))", re.S)
SPACE = " \t\n\f\r"
_IDENT = r"-?(?:[_a-zA-Z]|[^\x00-\x7f])[-\w]*"
_COMPOUND_PART = re.compile(rf"\.({_IDENT})|#(-?[-\w]+|[^\x00-\x7f]+)|(\[[^\]]*\])|(::?[-\w]+(?:\([^)]*\))?)")
_TYPE = re.compile(rf"\*|{_IDENT}")
_COMBINATOR = re.compile(r"[\t\n\f\r ]*[>+~][\t\n\f\r ]*|[\t\n\f\r ]+")
_PSEUDO_ELEMENTS = frozenset({"before", "after", "first-line", "first-letter", "marker", "placeholder", "selection"})


def _unescape(text: str) -> str:
    """CSS escapes read (`\\65` is 'e'), so an escaped keyword is the keyword."""
    if "\\" not in text:
        return text

    def one(m: re.Match[str]) -> str:
        if m.group(1) is None:
            return m.group(2)
        code = int(m.group(1), 16)
        return chr(code) if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else "\ufffd"

    return _ESCAPE.sub(one, text)


_SHOWS = (
    "block inline flow-root table flex grid ruby list-item contents inline-block inline-table inline-flex "
    "inline-grid table-row-group table-header-group table-footer-group table-row table-cell table-column-group "
    "table-column table-caption -webkit-box -webkit-inline-box initial unset"
)
_DISPLAY_SHOWS = frozenset(_SHOWS.split())
"""display values a browser surely reads, and that show (one keyword; a pair an outside and an
inside display, read below). Anything else is either dropped by a browser or not judged."""
_OUTSIDE, _INSIDE = frozenset({"block", "inline"}), frozenset({"flow", "flow-root", "table", "flex", "grid"})
_VALID = {
    "visibility": (frozenset({"hidden", "collapse"}), frozenset({"visible", "initial"})),
    "display": (frozenset({"none"}), _DISPLAY_SHOWS),
}
_DOUBT_WORDS = frozenset({"inherit", "unset", "revert", "revert-layer"})
"""CSS-wide keywords that may resolve to a hiding value (unset is initial for display)."""
_SUBSTITUTED = re.compile(r"(?:var|env|attr)\(", re.I)
_ZERO = re.compile(r"\+?(?:0+\.?0*|\.0+)(?:e[-+]?\d+)?(?:%|[a-z]+)?")
_FAINT = {"opacity", "font-size", "content-visibility"}
"""Properties that may hide text (opacity:0, font-size:0, content-visibility:hidden): what
they set is only possibly hidden, and never shown by a later rule."""


def _kind(name: str, value: str) -> str:
    """'hide', 'show', 'doubt' (may hide: var(), inherit...) or '' (dropped, as browsers drop it)."""
    if _SUBSTITUTED.search(value):
        return "doubt"
    if name in _FAINT:
        return "doubt" if _ZERO.fullmatch(value) or value == "hidden" or value in _DOUBT_WORDS else ""
    hides, shows = _VALID[name]
    words = value.split()
    if value in hides:
        return "hide"
    if value in _DOUBT_WORDS and not (name == "display" and value == "unset"):
        return "doubt"
    if len(words) == 1 and words[0] in shows:
        return "show"
    if name == "display" and len(words) == 2 and len(set(words) & _OUTSIDE) == 1 and len(set(words) & _INSIDE) == 1:
        return "show"
    return ""


@dataclass(frozen=True)
class Declared:
    """What one block of declarations sets display and visibility to ('hide', 'show', 'doubt'
    or '' where not set), and which it sets !important; the faint properties it may hide by."""

    values: dict[str, str]
    important: frozenset[str]
    faint: frozenset[str] = frozenset()
    steps: int = 0
    """The steps taken to read it (css_tokens.Scanned.steps)."""

    def hiding(self) -> list[str]:
        """The properties set here to hide."""
        return [p for p, kind in self.values.items() if kind == "hide"]

    def showing(self) -> list[str]:
        """The properties set here to a value a browser surely reads and that does not hide."""
        return [p for p, kind in self.values.items() if kind == "show"]

    def doubtful(self) -> list[str]:
        """The properties set here to what may hide (var(), inherit, opacity:0...)."""
        return [p for p, kind in self.values.items() if kind == "doubt"] + sorted(self.faint)


def declared(block: str) -> Declared:
    """A block's display and visibility, as CSS reads them: strings, then comments, escapes
    read, a value a browser drops dropped, the last declaration wins, an !important one over any other."""
    values = {"display": "", "visibility": ""}
    strong: set[str] = set()
    faint: set[str] = set()
    scanned = scan(block, False)
    for item in scanned.items:
        if item.brace >= 0:
            continue
        name, colon, value = scanned.prelude(item).partition(":")
        name = _unescape(name).strip(SPACE).lower()
        if not colon or (name not in values and name not in _FAINT):
            continue
        value = _unescape(value).strip(SPACE).lower()
        important = "!" in value and value.rpartition("!")[2].strip(SPACE) == "important"
        if important:
            value = value.rpartition("!")[0].strip(SPACE)
        kind = _kind(name, value)
        if name in _FAINT:
            if kind:
                faint.add(name)
            continue
        if not kind or (name in strong and not important):
            continue
        values[name] = kind
        if important:
            strong.add(name)
    return Declared(values, frozenset(strong), frozenset(faint), scanned.steps)


@dataclass(frozen=True)
class Compound:
    """The simple parts of a selector's last compound: a type (None for any), classes, an id."""

    type: str | None
    classes: frozenset[str]
    id: str | None

    def key(self) -> str:
        return f"#{self.id}" if self.id else f".{min(self.classes)}" if self.classes else self.type or ""

    def folded(self) -> Compound:
        """Its classes and id in lower case: matched so, as quirks mode matches them."""
        return Compound(self.type, frozenset(c.lower() for c in self.classes), self.id and self.id.lower())

    def matches(self, name: str, classes: frozenset[str], id_: str | None) -> bool:
        return (
            (self.type is None or self.type == name) and (self.id is None or self.id == id_) and self.classes <= classes
        )

    def specificity(self) -> tuple[int, int, int]:
        return (self.id is not None, len(self.classes), self.type is not None)


def compound(selector: str) -> tuple[Compound, bool] | None:
    """(the simple parts of the selector's last compound, whether the selector is exactly that
    compound), or None for a selector of a pseudo-element (generated text is never read)."""
    selector = selector.strip(SPACE)
    last = _COMBINATOR.split(selector)[-1].lstrip("&") if selector else ""
    exact = last == selector and "\\" not in selector
    type_match = _TYPE.match(last)
    kind = type_match.group().lower() if type_match and type_match.group() != "*" else None
    p = type_match.end() if type_match else 0
    classes: set[str] = set()
    id_ = None
    while p < len(last):
        part = _COMPOUND_PART.match(last, p)
        if part is None:  # something not read here: the parts so far are a superset's
            return Compound(kind, frozenset(classes), id_), False
        cls, ident, _attribute, pseudo = part.groups()
        if cls is not None:
            classes.add(cls)
        elif ident is not None:
            id_ = ident
        elif pseudo is not None and (pseudo.startswith("::") or pseudo[1:].lower() in _PSEUDO_ELEMENTS):
            return None
        else:  # a pseudo-class or an attribute: it may or may not match
            exact = False
        p = part.end()
    return Compound(kind, frozenset(classes), id_), exact


def split_top(text: str) -> list[str]:
    """text split at commas outside brackets and parentheses."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "([":
            depth += 1
        elif c in ")]":
            depth = max(0, depth - 1)
        elif c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


_NEVER_ON_SCREEN = re.compile(
    r"(?:only[\t\n\f\r ]+)?(?:print|speech|aural|braille|embossed|handheld|projection|tty|tv)"
    r"|not[\t\n\f\r ]+(?:all|screen)"
)
_ALWAYS_ON_SCREEN = re.compile(r"|all|screen|only[\t\n\f\r ]+(?:all|screen)|not[\t\n\f\r ]+(?:print|speech)")


def screen_media(media: str) -> bool | None:
    """Whether a media query list (a media attribute, an @import's) applies on a screen: True
    always, None never (print, speech, the media types that match nothing), False maybe (a
    width, an orientation...: judged as @media is)."""
    queries = [q.strip(SPACE).lower() for q in split_top(strip_comments(media[:1024]))]
    if any(_ALWAYS_ON_SCREEN.fullmatch(q) for q in queries):
        return True
    return None if all(_NEVER_ON_SCREEN.fullmatch(q) for q in queries) else False
