"""What a page's own CSS hides: inline styles, its <style> elements and its stylesheets.

ASYMMETRY, the rule all of this follows: a rule that hides counts whenever it might apply; a
rule or construct that would show text (override a hiding rule) counts only where a browser
surely applies it; whatever cannot be modelled with certainty leaves the text it touches
"possibly hidden" (a quote there is unverifiable, never found). So a sheet a browser may not
apply (a Link header's, which only Firefox applies; a disabled <link>; a <style> of another
type or in a <template>; an @import after a rule or in a block) is read for what it hides
only; a value a browser drops (display:bogus) is dropped; var(), env(), attr() and the CSS-wide
keywords that may resolve to a hiding value, opacity:0, font-size:0, content-visibility:hidden
possibly hide; class and id selectors hide whatever their case (quirks mode), show only as written.

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
one level deep, or CSS past the limits below leaves the whole page's hiding unknown. Strings,
comments and escapes are read as CSS reads them (css_tokens.py, css_text.py).

Bounded: at most STYLE_MAX characters of <style> text, STYLESHEETS_MAX sheets of at most
STYLE_MAX each, and RULES_MAX rules for each, are read, each selector at most SELECTOR_MAX
characters; an element's classes past CLASSES_MAX are looked up but not matched; and judging
stops, leaving the page's hiding unknown, after MATCH_BUDGET selector tests or WORK_MAX steps
of reading its CSS (css_tokens.Scanned.steps: at most one a character, for each nesting level).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urljoin

from cudagloss.errors import shown
from cudagloss.links.css_text import SPACE, Compound, Declared, compound, declared, screen_media, split_top
from cudagloss.links.css_tokens import scan

STYLE_MAX = 512 * 1024
RULES_MAX = 4096
SELECTOR_MAX = 512
CLASSES_MAX = 32
PER_KEY_MAX = 32
"""Selectors kept under one class, id or type: past it, that key makes an element possibly hidden."""
MATCH_BUDGET = 2_000_000
WORK_MAX = 2_000_000
"""Steps (css_tokens.Scanned.steps) spent reading one page's CSS: past it, its hiding is unknown.
A real 270 KiB sheet takes about a hundred thousand; 2 MB of brackets takes one for each."""
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


def typed(attrs: dict[str, str]) -> bool:
    """Whether an element's type is one a browser may not apply as CSS (set, and not text/css)."""
    kind = attrs.get("type")
    return kind is not None and kind.lower() not in ("", "text/css")


class Seen(enum.Enum):
    SHOWN = 0
    MAYBE = 1
    HIDDEN = 2


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
    work: int = 0
    _hide_only: bool = False
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

    def add_style(self, css: str, conditional: bool, hide_only: bool = False) -> None:
        """The text of one <style> element (conditional: its media may not apply; hide_only:
        a browser may not apply it, so only what it hides counts)."""
        if self.read + len(css) > STYLE_MAX:
            self.external(f"its stylesheets are over {STYLE_MAX // 1024} KiB, so what they hide was not read")
            return
        self.read += len(css)
        self._at, self._hide_only = (self.url, 0), hide_only
        self._rules(css, conditional, 0)
        self._hide_only = False

    def link(
        self, href: str, media: str, base: str = "", level: int = 1, conditional: bool = False, hide_only: bool = False
    ) -> None:
        """A stylesheet the page or a sheet names (<link>, Link header, @import), read in its
        place in the cascade if fetched; media that never applies on a screen: not read at all;
        hide_only: one a browser may not apply (Link header, disabled, a late @import)."""
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
        at, only, self._at = self._at, self._hide_only, (url, level)
        self._hide_only = only or hide_only
        self._rules(got.text, conditional or not applies, 0)
        self._at, self._hide_only = at, only

    def element(self, name: str, attrs: dict[str, str], inert: bool = False) -> None:
        """A <link> (a stylesheet, unless an alternate one) or a <base> (the first sets the URL);
        inert: in a <template>, so not applied (only what it hides counts)."""
        rel = attrs.get("rel", "").lower().split()
        if name == "link" and "stylesheet" in rel and "alternate" not in rel and "href" in attrs:
            self.link(attrs["href"], attrs.get("media", ""), hide_only=inert or "disabled" in attrs or typed(attrs))
        elif name == "base" and "href" in attrs and not self.based:
            self.based, self.url = True, _join(self.url, attrs["href"])

    def _import(self, statement: str, conditional: bool, late: bool) -> None:
        found = _IMPORT.match(statement)
        if found is None:
            return self.external("it imports a stylesheet (@import) that was not read")
        href = next(v for v in found.group(1, 2, 3) if v is not None).strip(SPACE).strip("\"'")
        rest = found.group(4).strip(SPACE)
        layered = re.match(r"(?i)(?:layer|supports)\b", rest) is not None  # its place in the cascade: not judged
        at, level = self._at
        self.link(href, "" if layered else rest, at, level + 1, conditional or layered, late)

    def _scan(self, css: str, top: bool) -> list[tuple[str, str, bool]]:
        """css's statements and blocks, as (prelude, body, is a block), its work counted."""
        scanned = scan(css, top, max(0, WORK_MAX - self.work) + 1)
        self.work += scanned.steps
        if self.work > WORK_MAX:
            self.external("its stylesheets take too long to read, so what they hide was not judged")
            return []
        return [(scanned.prelude(t).strip(SPACE), scanned.body(t), t.brace >= 0) for t in scanned.items]

    def _rules(self, css: str, conditional: bool, depth: int) -> None:
        late = depth > 0  # an @import after a rule, or in a block, is not applied by browsers
        for prelude, body, block in self._scan(css, depth == 0):
            if self.unknown:
                return
            if not block:
                if prelude.lower().startswith("@import"):
                    self._import(prelude, conditional, late)
                late = late or not prelude.lower().startswith(("@import", "@charset", "@layer"))
                continue
            late = late or not prelude.lower().startswith("@layer")
            self._rule(prelude, body, conditional, depth)

    def _rule(self, prelude: str, body: str, conditional: bool, depth: int) -> None:
        self.rules += 1
        if self.rules > RULES_MAX * (1 + len(self.linked)) or depth > NEST_MAX:
            self.external(f"its stylesheets have over {RULES_MAX} rules, so what they hide was not read")
            return
        if prelude.startswith("@"):
            if (prelude[1:].split(None, 1) or [""])[0].lower() in _CONDITIONAL:
                self._rules(body, True, depth + 1)
            return  # @font-face, @keyframes, @page...: nothing hidden
        own = []
        for inner, inner_body, nested in self._scan(body, False):
            if nested:  # rules within this one's: judged as possibly applying
                self._rule(inner, inner_body, True, depth + 1)
            else:
                own.append(inner)
        block = declared(";".join(own))
        self.work += block.steps
        hiding, doubtful = block.hiding(), block.doubtful()
        showing = [] if self._hide_only else block.showing()
        for selector in split_top(prelude) if hiding or doubtful or showing else ():
            read = compound(selector) if len(selector) <= SELECTOR_MAX else (Compound(None, frozenset(), None), False)
            if read is None:
                continue
            parts, exact = read
            sure = [(p, self.hide, True) for p in hiding] + [(p, self.hide, False) for p in doubtful]
            for prop, table, certain in sure + [(p, self.show, True) for p in showing]:
                rank = (prop in block.important, parts.specificity(), self.rules)
                # hiding matched in any case (quirks mode), showing only as written
                judged = parts.folded() if table is self.hide else parts
                rule = _Rule(judged, prop, certain and exact and not conditional, rank)
                kept = table.setdefault(judged.key(), [])
                if len(kept) < PER_KEY_MAX:
                    kept.append(rule)
                elif table is self.hide:
                    self.crowded.add(parts.key())

    def seen(self, name: str, class_attr: str | None, id_: str | None, inline: Declared | None) -> Seen:
        """How an element is shown, as far as this sheet and its inline style tell."""
        if inline is not None and inline.hiding():
            return Seen.HIDDEN
        judged = self._seen(name, class_attr, id_, inline)
        return Seen.MAYBE if judged is Seen.SHOWN and inline is not None and inline.doubtful() else judged

    def _seen(self, name: str, class_attr: str | None, id_: str | None, inline: Declared | None) -> Seen:
        if not self.hide:
            return Seen.SHOWN
        if self.budget < 0:
            return Seen.MAYBE
        names = class_attr.split() if class_attr else []
        classes = frozenset(names[:CLASSES_MAX])
        keys = list(dict.fromkeys(["", name, *(f".{c}" for c in names), *([f"#{id_}"] if id_ else [])]))
        low = [k.lower() for k in keys]
        maybe = any(key in self.crowded for key in low) or any(
            f".{c.lower()}" in self.hide for c in names[CLASSES_MAX:]
        )
        folded = frozenset(c.lower() for c in classes)
        for hide in self._matching(self.hide, low, name, folded, id_ and id_.lower()):
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
