"""Reading CSS text as CSS reads it: the display and visibility a block of declarations sets,
and the simple parts of a selector. Comments and escapes are read as CSS reads them, so
`display:/**/none` and `display:non\\65` are display:none. Used by html_css.py; every regex
matches forward without nested repetition, so any text is read in linear time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

COMMENT = re.compile(r"/\*.*?(?:\*/|$)", re.S)
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


@dataclass(frozen=True)
class Declared:
    """display and visibility as one block of declarations sets them ('' where not), lower case."""

    values: dict[str, str]
    important: frozenset[str]

    def hiding(self) -> list[str]:
        """The properties set here to hide."""
        v = self.values
        return [
            p
            for p, yes in (
                ("display", v["display"] == "none"),
                ("visibility", v["visibility"] in ("hidden", "collapse")),
            )
            if yes
        ]

    def showing(self) -> list[str]:
        """The properties set here to something that does not hide."""
        v = self.values
        return [
            p
            for p, yes in (("display", v["display"] not in ("", "none")), ("visibility", v["visibility"] == "visible"))
            if yes
        ]


def declared(block: str) -> Declared:
    """A block's display and visibility, as CSS reads them: comments out, escapes read, the
    last declaration wins, an !important one over any other."""
    values = {"display": "", "visibility": ""}
    strong: set[str] = set()
    for declaration in COMMENT.sub("", block).split(";"):
        name, colon, value = declaration.partition(":")
        name = _unescape(name).strip(SPACE).lower()
        if not colon or name not in values:
            continue
        value = _unescape(value).strip(SPACE).lower()
        important = "!" in value and value.rpartition("!")[2].strip(SPACE) == "important"
        if important:
            value = value.rpartition("!")[0].strip(SPACE)
        if name in strong and not important:
            continue
        values[name] = value
        if important:
            strong.add(name)
    return Declared(values, frozenset(strong))


@dataclass(frozen=True)
class Compound:
    """The simple parts of a selector's last compound: a type (None for any), classes, an id."""

    type: str | None
    classes: frozenset[str]
    id: str | None

    def key(self) -> str:
        return f"#{self.id}" if self.id else f".{min(self.classes)}" if self.classes else self.type or ""

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
    queries = [q.strip(SPACE).lower() for q in split_top(COMMENT.sub(" ", media[:1024]))]
    if any(_ALWAYS_ON_SCREEN.fullmatch(q) for q in queries):
        return True
    return None if all(_NEVER_ON_SCREEN.fullmatch(q) for q in queries) else False
