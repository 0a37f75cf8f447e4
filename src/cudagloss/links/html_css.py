"""What a page's own CSS hides: inline styles, and the rules of its <style> elements.

A sentence a stylesheet hides is not on the page for a reader, so it must not be "found" there
(issue 39, class 7). This reads as much CSS as can be judged without a browser and says so
where it cannot: a rule that sets display:none or visibility:hidden (or collapse) for a
selector of one compound (a type, classes, an id: `p`, `.x`, `div.x#y`) hides what it matches,
unless a rule that shows (another display, visibility:visible) wins the cascade (importance,
specificity, order, per property) or might, or its inline style says otherwise. Any other
hiding rule (combinators, pseudo-classes, attributes, in @media and other at-rules, nested)
makes what its last compound might match "possibly hidden". A stylesheet that is not on the
page (<link rel=stylesheet>, @import, an SVG's <style>) or CSS past the limits below leaves
the whole page's hiding unknown. Comments and escapes are read as CSS reads them (css_text.py).

Bounded: at most STYLE_MAX characters of <style> text and RULES_MAX rules are read, each
selector at most SELECTOR_MAX characters; an element's classes past CLASSES_MAX are looked up
but not matched; and judging stops, leaving the page's hiding unknown, after MATCH_BUDGET
selector tests.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from cudagloss.links.css_text import COMMENT, SPACE, Compound, Declared, compound, declared, split_top

STYLE_MAX = 512 * 1024
RULES_MAX = 4096
SELECTOR_MAX = 512
CLASSES_MAX = 32
PER_KEY_MAX = 32
"""Selectors kept under one class, id or type: past it, that key makes an element possibly hidden."""
MATCH_BUDGET = 2_000_000
NEST_MAX = 8

_CONDITIONAL = frozenset(
    {"media", "supports", "layer", "container", "document", "-moz-document", "scope", "starting-style"}
)
"""At-rules whose rules may or may not apply: what they hide is only possibly hidden."""


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

    def external(self, why: str) -> None:
        self.unknown = self.unknown or why

    def add_style(self, css: str, conditional: bool) -> None:
        """The text of one <style> element (conditional: its media may not apply)."""
        if self.read + len(css) > STYLE_MAX:
            self.external(f"its stylesheets are over {STYLE_MAX // 1024} KiB, so what they hide was not read")
            return
        self.read += len(css)
        self._rules(COMMENT.sub(" ", css), conditional, 0)

    def _rules(self, css: str, conditional: bool, depth: int) -> None:
        i, n = 0, len(css)
        while i < n and not self.unknown:
            brace, semi = css.find("{", i), css.find(";", i)
            if semi >= 0 and (brace < 0 or semi < brace):  # a statement: @import, @charset, stray text
                if css[i:semi].strip(SPACE).lower().startswith("@import"):
                    self.external("it imports a stylesheet (@import) that was not read")
                i = semi + 1
                continue
            if brace < 0:
                return
            end = _block_end(css, brace + 1)
            self._rule(css[i:brace].strip(SPACE), css[brace + 1 : end - 1], conditional, depth)
            i = end

    def _rule(self, prelude: str, body: str, conditional: bool, depth: int) -> None:
        self.rules += 1
        if self.rules > RULES_MAX or depth > NEST_MAX:
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
