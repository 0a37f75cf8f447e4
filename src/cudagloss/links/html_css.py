"""What a page's own CSS hides: inline styles, its <style> elements and its stylesheets.

A sentence a stylesheet hides is not on the page for a reader, so it must not be "found" there
(issue 39, class 7). This reads as much CSS as can be judged without a browser and says so
where it cannot: a rule that sets display:none or visibility:hidden (or collapse) for a
selector of one compound (a type, classes, an id: `p`, `.x`, `div.x#y`) hides what it matches,
unless a rule that shows (another display, visibility:visible) wins the cascade (importance,
specificity, order, per property) or might, or its inline style says otherwise. Any other
hiding rule (combinators, pseudo-classes, attributes, in @media and other at-rules, nested)
makes what its last compound might match "possibly hidden". Stylesheets the page names
(<link rel=stylesheet>, its Link header, @import) are read in their place in the cascade once
fetched (links/stylesheets.py: Sheet.missing says which to fetch, and the page is read again);
one whose media never applies on a screen (print) is not read, one whose media may apply is
read as @media is. A sheet that could not be fetched, an SVG's <style>, an @import more than
one level deep, or CSS past the limits below leaves the whole page's hiding unknown. Comments
and escapes are read as CSS reads them (css_text.py).

Bounded: at most STYLE_MAX characters of <style> text, STYLESHEETS_MAX sheets of at most
STYLE_MAX each, and RULES_MAX rules for each, are read, each selector at most SELECTOR_MAX
characters; an element's classes past CLASSES_MAX are looked up but not matched; and judging
stops, leaving the page's hiding unknown, after MATCH_BUDGET selector tests.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urljoin

from cudagloss.errors import shown
from cudagloss.links.css_text import COMMENT, SPACE, Compound, Declared, compound, declared, screen_media, split_top

STYLE_MAX = 512 * 1024
RULES_MAX = 4096
SELECTOR_MAX = 512
CLASSES_MAX = 32
PER_KEY_MAX = 32
"""Selectors kept under one class, id or type: past it, that key makes an element possibly hidden."""
MATCH_BUDGET = 2_000_000
NEST_MAX = 8
STYLESHEETS_MAX = 8
"""Stylesheets read for one page (linked, named in its Link header, imported): past it, unknown."""
IMPORT_DEPTH = 2
"""A page's own sheets (<link>, Link header, @import in a <style>) are level 1, what they
@import level 2; an @import in a level-2 sheet leaves the page's hiding unknown."""
_IMPORT = re.compile(r"""@import[\t\n\f\r ]*(?:url\(([^)]*)\)|"([^"]*)"|'([^']*)')(.*)""", re.I | re.S)


@dataclass(frozen=True)
class CssFile:
    """A stylesheet fetched for a page (links/stylesheets.py): its text, or why it was not read."""

    text: str | None
    why: str = ""


_CONDITIONAL = frozenset(
    {"media", "supports", "layer", "container", "document", "-moz-document", "scope", "starting-style"}
)
"""At-rules whose rules may or may not apply: what they hide is only possibly hidden."""


def _join(base: str, href: str) -> str:
    """href resolved against base (as it is, where urljoin refuses it: the fetch says why)."""
    try:
        return urljoin(base, href.strip(SPACE))
    except ValueError:
        return href


class Seen(enum.Enum):
    SHOWN = 0
    MAYBE = 1
    HIDDEN = 2


def _block_end(css: str, i: int) -> int:
    """The index just past the '}' that closes the block opened just before i (or the end)."""
    depth, n = 1, len(css)
    while i < n:
        c = css[i]
        if c in "\"'":
            close = css.find(c, i + 1)
            i = n if close < 0 else close + 1
            continue
        depth += (c == "{") - (c == "}")
        i += 1
        if depth == 0:
            return i
    return n


def _flat(body: str) -> tuple[str, list[tuple[str, str]]]:
    """A block's own declarations, and its nested rules as (prelude, block) (CSS nesting)."""
    own, nested, i = [], [], 0
    while (brace := body.find("{", i)) >= 0:
        start = max(body.rfind(";", i, brace), body.rfind("}", i, brace), i - 1) + 1
        end = _block_end(body, brace + 1)
        own.append(body[i:start])
        nested.append((body[start:brace], body[brace + 1 : end - 1]))
        i = end
    own.append(body[i:])
    return ";".join(own), nested


@dataclass(frozen=True)
class _Rule:
    parts: Compound
    prop: str
    exact: bool
    """The selector is its compound and applies unconditionally: its cascade can be judged."""
    rank: tuple[bool, tuple[int, int, int], int]
    """Importance, specificity, order: the greater wins."""


@dataclass
class Sheet:
    """The page's own CSS as far as it is read: the rules that hide and those that show, by key
    (Compound.key), and why the page's hiding is unknown ('' where it is known)."""

    hide: dict[str, list[_Rule]] = field(default_factory=dict)
    show: dict[str, list[_Rule]] = field(default_factory=dict)
    crowded: set[str] = field(default_factory=set)
    """Keys with more than PER_KEY_MAX hiding rules: an element with one is possibly hidden."""
    unknown: str = ""
    read: int = 0
    rules: int = 0
    budget: int = MATCH_BUDGET
    url: str = ""
    """The page's URL, then its <base href>: what a <link>'s href is resolved against."""
    files: Mapping[str, CssFile] = field(default_factory=dict)
    """The stylesheets fetched for the page so far, by URL."""
    missing: list[str] = field(default_factory=list)
    """Stylesheets the page needs that are not in files: to fetch, then read the page again."""
    linked: set[str] = field(default_factory=set)
    sheets_read: int = 0
    based: bool = False
    _at: tuple[str, int] = ("", 0)
    """The URL and level (IMPORT_DEPTH) of the sheet being read: where its @import leads."""

    def external(self, why: str) -> None:
        self.unknown = self.unknown or why

    def why_unknown(self) -> str:
        """Why the page's hiding is not known, stylesheets still to fetch included ('' if known)."""
        if self.unknown or not self.missing:
            return self.unknown
        return f"stylesheet {shown(self.missing[0], 100)} was not read"

    def add_style(self, css: str, conditional: bool) -> None:
        """The text of one <style> element (conditional: its media may not apply)."""
        if self.read + len(css) > STYLE_MAX:
            self.external(f"its stylesheets are over {STYLE_MAX // 1024} KiB, so what they hide was not read")
            return
        self.read += len(css)
        self._at = (self.url, 0)
        self._rules(COMMENT.sub(" ", css), conditional, 0)

    def link(self, href: str, media: str, base: str = "", level: int = 1, conditional: bool = False) -> None:
        """A stylesheet the page or a sheet names (<link>, Link header, @import), read in its
        place in the cascade if fetched; media that never applies on a screen: not read at all."""
        applies = screen_media(media)
        if applies is None or self.unknown:
            return
        url = _join(base or self.url, href).partition("#")[0]
        if level > IMPORT_DEPTH:
            return self.external(f"stylesheet {shown(url, 100)} is imported more than one level deep, not read")
        self.linked.add(url)
        if len(self.linked) > STYLESHEETS_MAX:
            return self.external(f"it has over {STYLESHEETS_MAX} stylesheets, so what they hide was not read")
        got = self.files.get(url)
        if got is None:
            if url not in self.missing:
                self.missing.append(url)
            return
        if got.text is None:
            return self.external(f"stylesheet {shown(url, 100)} not read: {got.why}")
        self.sheets_read += len(got.text)  # (a sheet imported again and again is read each time)
        if self.sheets_read > STYLE_MAX * STYLESHEETS_MAX:
            return self.external(f"its stylesheets are over {STYLE_MAX * STYLESHEETS_MAX // 1024} KiB, not read")
        at, self._at = self._at, (url, level)
        self._rules(COMMENT.sub(" ", got.text), conditional or not applies, 0)
        self._at = at

    def element(self, name: str, attrs: dict[str, str]) -> None:
        """A <link> (a stylesheet, unless an alternate one) or a <base> (the first sets the URL)."""
        rel = attrs.get("rel", "").lower().split()
        if name == "link" and "stylesheet" in rel and "alternate" not in rel and "href" in attrs:
            self.link(attrs["href"], attrs.get("media", ""))
        elif name == "base" and "href" in attrs and not self.based:
            self.based, self.url = True, _join(self.url, attrs["href"])

    def _import(self, statement: str, conditional: bool) -> None:
        found = _IMPORT.match(statement)
        if found is None:
            return self.external("it imports a stylesheet (@import) that was not read")
        href = next(v for v in found.group(1, 2, 3) if v is not None).strip(SPACE).strip("\"'")
        rest = found.group(4).strip(SPACE)
        layered = re.match(r"(?i)(?:layer|supports)\b", rest) is not None  # its place in the cascade: not judged
        self.link(href, "" if layered else rest, self._at[0], self._at[1] + 1, conditional or layered)

    def _rules(self, css: str, conditional: bool, depth: int) -> None:
        i, n = 0, len(css)
        while i < n and not self.unknown:
            brace, semi = css.find("{", i), css.find(";", i)
            if semi >= 0 and (brace < 0 or semi < brace):  # a statement: @import, @charset, stray text
                if css[i:semi].strip(SPACE).lower().startswith("@import"):
                    self._import(css[i:semi].strip(SPACE), conditional)
                i = semi + 1
                continue
            if brace < 0:
                return
            end = _block_end(css, brace + 1)
            self._rule(css[i:brace].strip(SPACE), css[brace + 1 : end - 1], conditional, depth)
            i = end

    def _rule(self, prelude: str, body: str, conditional: bool, depth: int) -> None:
        self.rules += 1
        if self.rules > RULES_MAX * (1 + len(self.linked)) or depth > NEST_MAX:
            self.external(f"its stylesheets have over {RULES_MAX} rules, so what they hide was not read")
            return
        if prelude.startswith("@"):
            if (prelude[1:].split(None, 1) or [""])[0].lower() in _CONDITIONAL:
                self._rules(body, True, depth + 1)
            return  # @font-face, @keyframes, @page...: nothing hidden
        own, nested = _flat(body)
        for inner, inner_body in nested:  # rules within this one's: judged as possibly applying
            self._rule(inner.strip(SPACE), inner_body, True, depth + 1)
        block = declared(own)
        hiding, showing = block.hiding(), block.showing()
        for selector in split_top(prelude) if hiding or showing else ():
            read = compound(selector) if len(selector) <= SELECTOR_MAX else (Compound(None, frozenset(), None), False)
            if read is None:
                continue
            parts, exact = read
            for prop, table in [(p, self.hide) for p in hiding] + [(p, self.show) for p in showing]:
                rule = _Rule(
                    parts, prop, exact and not conditional, (prop in block.important, parts.specificity(), self.rules)
                )
                kept = table.setdefault(parts.key(), [])
                if len(kept) < PER_KEY_MAX:
                    kept.append(rule)
                elif table is self.hide:
                    self.crowded.add(parts.key())

    def seen(self, name: str, class_attr: str | None, id_: str | None, inline: Declared | None) -> Seen:
        """How an element is shown, as far as this sheet and its inline style tell."""
        if inline is not None and inline.hiding():
            return Seen.HIDDEN
        if not self.hide:
            return Seen.SHOWN
        if self.budget < 0:
            return Seen.MAYBE
        names = class_attr.split() if class_attr else []
        classes = frozenset(names[:CLASSES_MAX])
        keys = list(dict.fromkeys(["", name, *(f".{c}" for c in names), *([f"#{id_}"] if id_ else [])]))
        maybe = any(key in self.crowded for key in keys) or any(f".{c}" in self.hide for c in names[CLASSES_MAX:])
        for hide in self._matching(self.hide, keys, name, classes, id_):
            if not hide.exact:
                maybe = True
                continue
            if inline is not None and hide.prop in inline.showing() and not hide.rank[0]:
                continue  # an inline style beats any rule that is not !important
            shows = [s for s in self._matching(self.show, keys, name, classes, id_) if s.prop == hide.prop]
            if any(s.exact and s.rank > hide.rank for s in shows):
                continue  # a stronger rule shows it
            if any(not s.exact and (s.rank[0] or not hide.rank[0]) for s in shows):
                maybe = True  # a rule that might match, or might not apply, may show it
                continue
            return Seen.HIDDEN
        return Seen.MAYBE if maybe or self.budget < 0 else Seen.SHOWN

    def _matching(
        self, table: dict[str, list[_Rule]], keys: list[str], name: str, classes: frozenset[str], id_: str | None
    ) -> list[_Rule]:
        found: list[_Rule] = []
        for key in keys:
            for rule in table.get(key, ()):
                self.budget -= 1
                if self.budget < 0:
                    self.external("it has too many styled elements to judge what its stylesheets hide")
                    return found
                if rule.parts.matches(name, classes, id_):
                    found.append(rule)
        return found
