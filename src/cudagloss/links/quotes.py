"""Is a source's quote on its page? The judgement, from the page the link checker fetched.

A quote is looked for in the page's visible text, both sides normalised (page_text.py): found
is found. Not found is only "missing" where we could have seen it: a PDF, an image, a binary
body, a page whose scripts write its text, a page that sends its reader on to another (a meta
refresh), or the unread rest of a page too long to fetch whole is "unverifiable", with the
reason, because nothing here says the quote is not there. Found is only "found" where a reader
sees it: text the page's own CSS hides is not read (html_css.py), and a quote found only in
text its CSS may hide, or on a page whose CSS could not all be read (a linked stylesheet that
could not be fetched: links/stylesheets.py fetches them), is "unverifiable" too.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from cudagloss.errors import shown
from cudagloss.links.html_css import CssFile
from cudagloss.links.html_elements import MAYBE_MARK
from cudagloss.links.html_text import read_html
from cudagloss.links.page_text import bom_codec, decode_page, normalise, normalise_within, web_codec
from cudagloss.links.status import Page


class QuoteStatus(enum.Enum):
    """What a reader is told about a source's quote.

    FOUND: the quoted words are on the page today, as a reader sees them.
    MISSING: the page was read and they are not on it: the page changed, or the quote was
    never its words. Worth a look before trusting the sentence the quote supports.
    UNVERIFIABLE: the page could not be read for it (not fetched, a PDF, an image, text its
    scripts write, past the part fetched): nothing is known either way.
    """

    FOUND = "quote-found"
    MISSING = "quote-missing"
    UNVERIFIABLE = "quote-unverifiable"


@dataclass(frozen=True)
class QuoteResult:
    status: QuoteStatus
    detail: str = ""
    """Why, in words for a person (empty when found)."""


HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
PLAIN_TYPES = frozenset({"text/plain"})
SPARSE = 200
"""Characters of visible text under which a page with scripts is taken to be written by them."""
GROWTH_SLACK = 4096
"""A page's normalised text is cut at as many characters as the page has bytes, plus this.
Text shrinks as its markup goes, and a page of ligatures (U+FB01: three bytes, two characters)
still fits; compatibility characters that grow further (U+FDFA: three bytes, eighteen) are
compared up to there, and a quote not in that part is unverifiable. So a page's normalised
forms hold at most about its size in characters each, whatever it holds."""
SNIFF = 1024
"""Bytes looked at to tell a binary body (the MIME Sniffing standard's binary data bytes)."""
_SPACES = re.compile(" {2,}")
_BINARY = re.compile(rb"[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f]")
_ASKS_FOR_JS = re.compile(
    r"\b(?:enable|turn on|switch on|activate|requires?|needs?)\b[^.!?]{0,40}\bjavascript\b"
    r"|\bjavascript\b[^.!?]{0,40}\b(?:required|disabled|is off|must be|needs to be|to be enabled)\b",
    re.IGNORECASE,
)
_KINDS = (
    ("application/pdf", "a PDF: its text is not read"),
    ("image/", "an image: it has no text to read"),
    ("video/", "a video: it has no text to read"),
    ("audio/", "a sound file: it has no text to read"),
    ("application/json", "JSON: its text is not read"),
    ("application/octet-stream", "a file of bytes (application/octet-stream): its text is not read"),
)


@dataclass(frozen=True)
class _Reading:
    """A page read once: its normalised text, or why it cannot be read; and why a quote not
    found in it may still be on the page (scripts, truncation)."""

    text: str = ""
    unreadable: str = ""
    caveat: str = ""
    sure: str | None = None
    """text less what the page's CSS may hide (None: all of text is seen)."""
    styles_unknown: str = ""
    """Why what the page's CSS hides is not known ('' where it is)."""
    if_hidden: str = ""
    """text as it would read were all that its CSS may hide hidden ('' where sure is None)."""
    stylesheets: tuple[str, ...] = ()
    """Stylesheets to fetch before what its CSS hides is known (PageText.stylesheets)."""


def _size(n: int) -> str:
    mib = n / (1 << 20)
    return f"{mib:g} MiB" if mib >= 1 and mib == int(mib) else f"{n:,} bytes"


def _kind(page: Page) -> tuple[str, str]:
    """('html' | 'plain' | '', why not) for the page's media type; a page served without one is
    read as HTML when it starts like HTML, and as plain text otherwise."""
    media = page.content_type.partition(";")[0].strip().lower()
    if media in HTML_TYPES:
        return "html", ""
    if media in PLAIN_TYPES:
        return "plain", ""
    if media == "":
        start = page.body[:SNIFF].lstrip().lower()
        return ("html" if start.startswith((b"<!doctype html", b"<html")) else "plain"), ""
    why = next((why for prefix, why in _KINDS if media.startswith(prefix)), "")
    return "", why or f"served as {shown(media, 100)}: only HTML and plain text pages are read"


def _looks_binary(page: Page, text: str) -> bool:
    """Control bytes in the first SNIFF bytes (other than in UTF-16, where they are half of
    every ASCII character), or more than one character in ten undecodable."""
    utf16 = (bom_codec(page.body) or ("", 0))[0].startswith("utf-16") or (web_codec(page.charset) or "").startswith(
        "utf-16"
    )
    if not utf16 and _BINARY.search(page.body[:SNIFF]):
        return True
    sample = text[:65536]
    return sample.count("\ufffd") * 10 > len(sample)


def _needs_javascript(scripts: int, shown: int, noscript: str, empty_root: bool) -> str:
    """Why the page's text is likely written by its scripts, or "". Only a page with scripts
    can need them; then any of: an app's root element left empty, under SPARSE characters of
    text without them, or a <noscript> asking for JavaScript."""
    if not scripts:
        return ""
    prefix = "the page needs JavaScript to show its text: "
    if empty_root:
        return prefix + "its app's root element is empty until its scripts fill it"
    if shown < SPARSE:
        return prefix + f"without its {scripts} script(s) it shows only {shown} characters"
    if _ASKS_FOR_JS.search(noscript):
        return prefix + "its <noscript> asks for JavaScript, so part of the page may be written by scripts"
    return ""


def _read(page: Page | None, files: Mapping[str, CssFile]) -> _Reading:
    """The page read once for its quotes, in memory bounded by its size n, whatever it holds:
    its body (n bytes), its characters and its visible text (each at most n characters, 4
    bytes each where one is outside the BMP; the text twice where its CSS may hide some), and
    the normalised forms (each at most n + GROWTH_SLACK characters, held as pieces then joined,
    plus one piece's copies: page_text.PIECE). About 16n at worst; a run judges two at once
    (run.py), and tests/links/test_quote_memory.py holds the command to under 24 times the cap.
    files: the stylesheets fetched for it so far."""
    if page is None:
        return _Reading(unreadable="the page was not fetched, so its text could not be read")
    kind, why = _kind(page)
    if not kind:
        return _Reading(unreadable=why)
    decoded = decode_page(page.body, page.charset, sniff_meta=kind == "html")
    if _looks_binary(page, decoded):
        return _Reading(
            unreadable=f"the body looks binary, though served as {shown(page.content_type or 'no type', 100)}"
        )
    caveat = ""
    limit = len(page.body) + GROWTH_SLACK
    if kind == "html":
        found = read_html(decoded, page.url, files, page.stylesheets)
        del decoded  # (the page's characters are not needed past here: memory for the next copies)
        text, whole = normalise_within(found.text, limit)
        caveat = _needs_javascript(found.scripts, len(text), found.noscript, found.empty_root)
        if not caveat and found.refresh:
            target = shown(found.refresh, 100)
            caveat = f"the page sends its reader on to {target} (<meta http-equiv=refresh>), which was not read"
        sure, unknown = None if found.sure is None else normalise_within(found.sure, limit)[0], found.styles_unknown
        sheets = found.stylesheets
        del found
    else:
        (text, whole), sure, unknown, sheets = normalise_within(decoded, limit), None, "", ()
    if not caveat and not whole:
        caveat = (
            f"the page's text grows past {len(page.body):,} characters when normalised (compatibility characters"
            " such as U+FDFA): the quote is not in the part compared"
        )
    if not caveat and page.truncated:
        size = _size(len(page.body))
        caveat = f"the page is over {size}; the quote is not in its first {size}"
    if_hidden = "" if sure is None else _SPACES.sub(" ", sure.replace(MAYBE_MARK, ""))
    return _Reading(text, "", caveat, sure, unknown, if_hidden, sheets)


def _found(reading: _Reading, needle: str) -> QuoteResult:
    """A quote that is in the page's text: found where a reader is known to see it there."""
    if reading.styles_unknown:
        return QuoteResult(
            QuoteStatus.UNVERIFIABLE,
            f"the quoted words are on the page, but whether a reader sees them is not known: {reading.styles_unknown}",
        )
    if reading.sure is not None and needle not in reading.sure:
        why = "the quoted words are only in text that the page's own CSS may hide (by rules not judged here)"
        return QuoteResult(QuoteStatus.UNVERIFIABLE, why)
    return QuoteResult(QuoteStatus.FOUND)


def judge_quotes(page: Page | None, quotes: Iterable[str]) -> dict[str, QuoteResult]:
    """Each quote's result on one page, which is read once (only if some quote has words)."""
    return judge_page(page, quotes)[0]


def judge_page(
    page: Page | None, quotes: Iterable[str], files: Mapping[str, CssFile] | None = None
) -> tuple[dict[str, QuoteResult], tuple[str, ...]]:
    """Each quote's result on one page, read with the stylesheets fetched for it (files); and
    the stylesheets still to fetch before judging it again, where a quote is in its text and
    whether a reader sees it waits on them (else none: no sheet makes a missing quote found)."""
    wanted = {quote: normalise(quote) for quote in quotes}
    reading = _read(page, files or {}) if any(wanted.values()) else _Reading()
    results: dict[str, QuoteResult] = {}
    for quote, needle in wanted.items():
        if not needle:
            results[quote] = QuoteResult(QuoteStatus.UNVERIFIABLE, "the quote has no words to look for")
        elif reading.unreadable:
            results[quote] = QuoteResult(QuoteStatus.UNVERIFIABLE, reading.unreadable)
        elif needle in reading.text:
            results[quote] = _found(reading, needle)
        elif reading.caveat:
            results[quote] = QuoteResult(QuoteStatus.UNVERIFIABLE, reading.caveat)
        elif needle in reading.if_hidden:
            why = "the quoted words are on the page only if its CSS hides text between them (by rules not judged here)"
            results[quote] = QuoteResult(QuoteStatus.UNVERIFIABLE, why)
        else:
            results[quote] = QuoteResult(
                QuoteStatus.MISSING, f"not in the page's visible text ({len(reading.text):,} characters read)"
            )
    waits = reading.stylesheets and any(n and n in reading.text for n in wanted.values())
    return results, reading.stylesheets if waits else ()


def judge_quote(page: Page | None, quote: str) -> QuoteResult:
    """One quote's result on its page (judge_quotes reads a page once for several)."""
    return judge_quotes(page, [quote])[quote]
