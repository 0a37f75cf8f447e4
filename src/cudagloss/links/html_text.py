"""The text an HTML page shows a reader, read in one linear pass: a tokenizer after the HTML
standard's (tags, attributes, comments, raw-text elements) and a tree of open elements kept
with O(1) work per tag.

Why not a library: on this project's Python (3.11.7) the standard library's html.parser is
quadratic or worse on hostile input (60 KB of '<a ' takes seconds, four times that takes
seventeen times as long); a conforming HTML5 tree builder (Lexbor, html5ever) checks element
scopes by walking the stack of open elements, so a page of nested <div>s costs the square of
its depth. A page is hostile input, so this reads it with bounded work per character: every
regex here matches forward without nested repetition, an end tag pops only an element it knows
is open (a count per name), and an implied end tag (<p> after <p>) looks only at the top.

What it leaves out, and why, is in html_elements.HIDING, seen() and html_css.py (what the
page's own CSS hides); what separates text is html_elements.BLOCK. A page whose CSS hides is
read twice: once to collect its <style> rules and the stylesheets it names (those fetched read
in their place, the others listed to fetch: PageText.stylesheets), once to judge its elements
by them (a <style> anywhere applies to the whole page). Text that its CSS may or may not hide is kept apart
(PageText.sure), so that a quote found only there is never taken as seen.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

from cudagloss.links.css_text import screen_media
from cudagloss.links.html_css import CssFile, Seen, Sheet, typed
from cudagloss.links.html_elements import (
    BLOCK,
    BREAKOUT,
    CLOSES,
    MAYBE_MARK,
    RAW,
    ROOT_IDS,
    SHOWN_RAW,
    VOID,
    PageText,
    Scopes,
    refresh_target,
    runs,
    seen,
)
from cudagloss.text.charrefs import unescape

_NAME = re.compile(r"[^\t\n\f\r />]*")
_SEP = re.compile(r"[\t\n\f\r /]*")
_ATTR = re.compile(
    r"""([^\t\n\f\r />][^\t\n\f\r /=>]*)(?:[\t\n\f\r ]*=[\t\n\f\r ]*(?:"([^"]*)"?|'([^']*)'?|([^\t\n\f\r >]*)))?"""
)
_COMMENT_END = re.compile(r"--!?>")
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_WANTED = frozenset(
    {"hidden", "style", "id", "class", "open", "type", "http-equiv", "content", "rel", "media", "href", "disabled"}
)
"""The attributes read: the rest are skipped over without being kept."""
NOSCRIPT_MAX = 4096
"""Characters of <noscript> text kept, to see whether it asks for JavaScript."""


class _Tree:
    """The open elements and the text collected so far. Each element is pushed once and popped
    once, so the work is linear in the number of tags."""

    def __init__(self, sheet: Sheet, styles: Sheet | None) -> None:
        self.sheet, self.styles = sheet, styles
        """Judged by sheet; styles (on the first reading) collects the page's own CSS."""
        self.chunks: list[str] = []
        self.sure: list[str] | None = None
        self.maybe_from = 0
        """The depth of the outermost element open that the page's CSS may hide (0: none)."""
        self.stack: list[str] = []
        self.open = Scopes()
        self.details: list[int] = []
        """The depths of the closed <details> open: all they hold but a first <summary> is hidden."""
        self.summed: set[int] = set()
        self.names: dict[str, str] = {}
        self.hidden_from = 0
        """The depth of the outermost hiding element open (0: none)."""
        self.scripts = 0
        self.noscript: list[str] = []
        self.noscript_len = 0
        self.root_at = 0
        self.root_text = False
        self.empty_root = False
        self.refresh = ""

    @property
    def foreign(self) -> bool:
        return self.open.is_open("svg") or self.open.is_open("math")

    def separate(self) -> None:
        if not self.hidden_from and self.chunks and self.chunks[-1] != " ":
            self.chunks.append(" ")
            if self.sure is not None:
                self.sure.append(" ")

    def data(self, text: str, *, entities: bool = True) -> None:
        if self.hidden_from or not text or (self.details and self.details[-1] == len(self.stack)):
            return
        if entities and "&" in text:
            text = unescape(text)
        if MAYBE_MARK in text:
            text = text.replace(MAYBE_MARK, "")
        if self.root_at and not self.root_text and not text.isspace():
            self.root_text = True
        if self.maybe_from and self.sure is None:
            self.sure = list(self.chunks)
        self.chunks.append(text)
        if self.sure is not None:
            self.sure.append(MAYBE_MARK if self.maybe_from else text)

    def pop(self) -> str:
        name = self.stack.pop()
        self.open.pop(name)
        depth = len(self.stack)
        while self.details and self.details[-1] > depth:
            self.summed.discard(self.details.pop())
        if self.hidden_from > depth:
            self.hidden_from = 0
        if self.maybe_from > depth:
            self.maybe_from = 0
        if self.root_at > depth:
            self.empty_root |= not self.root_text
            self.root_at = 0
        if name in BLOCK:
            self.separate()
        return name

    def start(self, name: str, attrs: dict[str, str], self_closing: bool) -> None:
        if name == "script" and runs(attrs.get("type", "")):
            self.scripts += 1
        if name == "meta" and not self.refresh:
            self.refresh = refresh_target(attrs)
        if self.styles is not None and name in ("link", "base"):
            self.styles.element(name, attrs, inert=self.open.is_open("template"))
        if self.styles is not None and name == "style" and self.foreign:
            self.styles.external("it has a <style> in SVG or MathML, which was not read")
        if self.foreign and name in BREAKOUT:
            while self.foreign:
                self.pop()
        closes = CLOSES.get(name)
        while closes and self.stack and self.stack[-1] in closes:
            self.pop()
        if name in BLOCK:
            self.separate()
        foreign = self.foreign
        if name in VOID or (name in RAW and not foreign) or (self_closing and foreign):
            return
        name = self.names.setdefault(name, name)
        under = bool(self.details) and self.details[-1] == len(self.stack)
        closed = under and (name != "summary" or len(self.stack) in self.summed)
        if under and name == "summary":
            self.summed.add(len(self.stack))
        self.stack.append(name)
        self.open.push(name, len(self.stack))
        judged = Seen.SHOWN if self.hidden_from else Seen.HIDDEN if closed else seen(name, attrs, self.sheet)
        if name == "details" and "open" not in attrs and not self.hidden_from and judged is not Seen.HIDDEN:
            self.details.append(len(self.stack))
        if judged is Seen.HIDDEN:
            self.hidden_from = len(self.stack)
        elif judged is Seen.MAYBE and not self.maybe_from:
            self.maybe_from = len(self.stack)
        if not self.root_at and not self.hidden_from and (attrs.get("id") in ROOT_IDS or name == "app-root"):
            self.root_at, self.root_text = len(self.stack), False

    def end(self, name: str) -> None:
        if name in BLOCK:
            self.separate()  # </p> with no <p> open is an empty paragraph, </br> a <br>
        if self.open.honoured(name):
            while self.pop() != name:
                pass

    def raw(self, name: str, content: str) -> None:
        """The content of a raw-text element (RAW)."""
        if name == "noscript" and self.noscript_len < NOSCRIPT_MAX:
            self.noscript.append(content[: NOSCRIPT_MAX - self.noscript_len])
            self.noscript_len += len(self.noscript[-1])
        elif name in SHOWN_RAW:
            self.data(content, entities=name == "textarea")
        if name in BLOCK:
            self.separate()

    def style(self, attrs: dict[str, str], css: str) -> None:
        """A <style> element's rules, collected on the first reading (its media may not apply)."""
        applies = screen_media(attrs.get("media", ""))  # (of a type but CSS, or in a <template>: only hides)
        if self.styles is not None and applies is not None:
            self.styles.add_style(css, not applies, typed(attrs) or self.open.is_open("template"))

    def finish(self) -> PageText:
        self.empty_root |= bool(self.root_at) and not self.root_text
        sure = None if self.sure is None else "".join(self.sure)
        found = PageText("".join(self.chunks), self.scripts, "".join(self.noscript), self.empty_root, self.refresh)
        return replace(
            found, sure=sure, styles_unknown=self.sheet.unknown or (self.styles and self.styles.unknown) or ""
        )


def _always(pattern: re.Pattern[str], s: str, p: int) -> re.Match[str]:
    """pattern matched at p, where it cannot fail (it matches the empty string, or what is at p)."""
    found = pattern.match(s, p)
    assert found is not None
    return found


def _tag_end(s: str, p: int, attrs: dict[str, str] | None) -> tuple[bool, int] | None:
    """Read a tag's attributes from p (just after its name) to its '>': (self-closing, the
    position after '>'), or None where the input ends first (the tag is then dropped, as in
    the HTML standard). Attributes named in _WANTED go into attrs, the first of each name."""
    n = len(s)
    while True:
        q = _always(_SEP, s, p).end()
        if q >= n:
            return None
        if s[q] == ">":
            return q > p and s[q - 1] == "/", q + 1
        attr = _always(_ATTR, s, q)  # s[q] is neither a separator nor '>': a name starts there
        key = attr.group(1).lower()
        if attrs is not None and key in _WANTED and key not in attrs:
            value = next((v for v in attr.group(2, 3, 4) if v is not None), "")
            attrs[key] = unescape(value) if "&" in value else value
        p = attr.end()


_RAW_END: dict[str, re.Pattern[str]] = {
    name: re.compile(rf"</{name}(?=[\t\n\f\r />])", re.IGNORECASE) for name in RAW - {"plaintext"}
}


def _start_tag(s: str, i: int, tree: _Tree) -> int:
    """The start tag at s[i] ('<' then a letter); returns where reading goes on."""
    name_match = _always(_NAME, s, i + 1)
    name = name_match.group().lower()
    attrs: dict[str, str] = {}
    read = _tag_end(s, name_match.end(), attrs)
    if read is None:
        return len(s)
    self_closing, p = read
    raw = name in RAW and not tree.foreign
    tree.start(name, attrs, self_closing)
    if not raw:
        return p
    shown = tree.hidden_from == 0 and seen(name, attrs, tree.sheet) is Seen.SHOWN  # never pushed: <textarea hidden>
    if name == "plaintext":
        if shown:
            tree.raw(name, s[p:])
        return len(s)
    end = _RAW_END[name].search(s, p)
    if name == "style":
        tree.style(attrs, s[p : end.start() if end else len(s)])
    elif shown or name == "noscript":
        tree.raw(name, s[p : end.start() if end else len(s)])
    if end is None:
        return len(s)
    read = _tag_end(s, end.end(), None)
    return len(s) if read is None else read[1]


def _markup(s: str, i: int, tree: _Tree) -> int:
    """Whatever starts with the '<' at s[i]; returns where reading goes on."""
    n = len(s)
    after = s[i + 1 : i + 2]
    if after in _LETTERS:
        return _start_tag(s, i, tree)
    if after == "/":
        after = s[i + 2 : i + 3]
        if after in _LETTERS:
            name_match = _always(_NAME, s, i + 2)
            read = _tag_end(s, name_match.end(), None)
            if read is None:
                return n
            tree.end(name_match.group().lower())
            return read[1]
        if after == "":
            tree.data("</")
            return n
        return i + 3 if after == ">" else _past(s, ">", i + 2)
    if after == "!" and s.startswith("<!--", i):
        if s.startswith(">", i + 4) or s.startswith("->", i + 4):  # <!--> and <!---> are empty comments
            return s.index(">", i + 4) + 1
        end = _COMMENT_END.search(s, i + 4)
        return end.end() if end else n
    if after in ("!", "?"):  # a doctype, <![CDATA[...]]> or <?...>: a bogus comment up to '>'
        return _past(s, ">", i + 2)
    tree.data("<")
    return i + 1


def _past(s: str, what: str, i: int) -> int:
    found = s.find(what, i)
    return len(s) if found < 0 else found + len(what)


def read_html(
    s: str, url: str = "", files: Mapping[str, CssFile] | None = None, header: Sequence[tuple[str, str]] = ()
) -> PageText:
    """Read an HTML document: its visible text and the signs that scripts write it; twice where
    its CSS hides something (collected on the first reading, judged on the second). url: the
    page's; files: the stylesheets fetched for it; header: its Link header's (URL, media)."""
    styles = Sheet(url=url, files=files or {})
    for href, media in header:  # (before the page's own, as browsers apply them)
        styles.link(href, media, hide_only=True)  # (applied by Firefox only: what it hides counts)
    found = _read(s, _Tree(Sheet(), styles))
    unknown, wanted = found.styles_unknown or styles.why_unknown(), tuple(styles.missing)
    if not styles.hide or unknown:
        return replace(found, styles_unknown=unknown, stylesheets=() if styles.unknown else wanted)
    return _read(s, _Tree(styles, None))


def _read(s: str, tree: _Tree) -> PageText:
    i, n = 0, len(s)
    while i < n:
        j = s.find("<", i)
        if j < 0:
            j = n
        if j > i:
            tree.data(s[i:j])
        i = _markup(s, j, tree) if j < n else n
    return tree.finish()
