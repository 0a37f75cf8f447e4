"""A source's quote judged against the page the link checker fetched (links/quotes.py).

Pages are built as the checker hands them over (links/status.Page): a media type, a charset,
the body's bytes and whether it was cut short.
"""

from __future__ import annotations

import pytest

from cudagloss.links.quotes import QuoteResult, QuoteStatus, judge_quote, judge_quotes
from cudagloss.links.status import Page

FOUND, MISSING, UNVERIFIABLE = QuoteStatus.FOUND, QuoteStatus.MISSING, QuoteStatus.UNVERIFIABLE
FILLER = "<p>" + "A warp is a set of thirty-two threads that execute together on one multiprocessor. " * 5 + "</p>"
QUOTE = "Each SM partitions its warps among four schedulers."


def html_page(body: str, *, charset: str | None = "utf-8", encoding: str = "utf-8") -> Page:
    return Page("https://docs.example/guide.html", "text/html", charset, body.encode(encoding), False)


def judged(body: str, quote: str = QUOTE) -> QuoteResult:
    return judge_quote(html_page(f"<html><body>{FILLER}{body}{FILLER}</body></html>"), quote)


def test_the_statuses_are_a_closed_set_with_stable_names() -> None:
    assert [s.value for s in QuoteStatus] == ["quote-found", "quote-missing", "quote-unverifiable"]


def test_a_quote_on_the_page_is_found() -> None:
    assert judged(f"<p>{QUOTE}</p>") == QuoteResult(FOUND)


def test_a_quote_not_on_the_page_is_missing_and_says_what_was_read() -> None:
    result = judged("<p>Each SM partitions its warps among two schedulers.</p>")
    assert result.status is MISSING
    assert "visible text" in result.detail


@pytest.mark.parametrize(
    "body",
    [
        "<p>Each <em>SM</em> partitions its <a href='/w'>warps</a> among <code>four</code> sched<b>ulers</b>.</p>",
        "<p>Each SM partitions<span> its warps </span>among\n   four schedulers.</p>",
        "<p>each sm PARTITIONS its warps among four schedulers.</p>",  # case, as text fragments
        "<p>Each&nbsp;SM partitions its warps among four&#32;schedulers&#46;</p>",
        "<p>Each SM parti\u00adtions its warps among four sched\u200bulers.</p>",
    ],
)
def test_a_quote_across_inline_elements_entities_and_case_is_found(body: str) -> None:
    assert judged(body).status is FOUND


def test_entities_and_typography_on_either_side() -> None:
    page = "<p>The compiler&#8217;s &ldquo;fast&rdquo; path &mdash; 10&ndash;20 cycles &amp; more &#x2212;1</p>"
    assert judged(page, 'The compiler\'s "fast" path - 10-20 cycles & more -1').status is FOUND
    assert judged(page, "The compiler’s “fast” path — 10–20 cycles & more −1").status is FOUND
    ascii_page = '<p>The compiler\'s "fast" path -- not so</p>'
    assert judged(ascii_page, "The compiler’s “fast” path").status is FOUND


@pytest.mark.parametrize(
    "body",
    [
        f"<script>var q = '{QUOTE}';</script>",
        f"<style>/* {QUOTE} */</style>",
        f"<div hidden><p>{QUOTE}</p></div>",
        f'<p style="display:none">{QUOTE}</p>',
        f"<template>{QUOTE}</template>",
        f"<noscript>{QUOTE}</noscript>",
        f"<!-- {QUOTE} -->",
        f'<p title="{QUOTE}">alt</p>',
    ],
)
def test_a_quote_only_where_no_reader_sees_it_is_missing(body: str) -> None:
    assert judged(body).status is MISSING


def test_a_quote_fused_from_two_blocks_is_not_found() -> None:
    """'four schedulers' ends one block and 'Each' starts the next: never 'schedulersEach'."""
    assert judged("<p>four schedulers</p><p>Each cycle</p>", "schedulersEach").status is MISSING
    assert judged("<td>four</td><td>schedulers</td>", "fourschedulers").status is MISSING
    assert judged("<li>four<li>schedulers", "fourschedulers").status is MISSING


def test_a_page_that_needs_javascript_is_unverifiable() -> None:
    spa = '<html><head><script src="/app.js"></script></head><body><div id="root"></div></body></html>'
    result = judge_quote(html_page(spa), QUOTE)
    assert result.status is UNVERIFIABLE and "JavaScript" in result.detail
    sparse = "<html><body><script>render()</script><p>Loading...</p></body></html>"
    assert judge_quote(html_page(sparse), QUOTE).status is UNVERIFIABLE
    asks = f"<body>{FILLER}<script>x()</script><noscript><p>Please enable JavaScript to view this page.</p></noscript>"
    result = judge_quote(html_page(asks), QUOTE)
    assert result.status is UNVERIFIABLE and "noscript" in result.detail


def test_a_quote_on_a_page_with_scripts_is_still_found() -> None:
    spa = f'<script src="/app.js"></script><div id="__next"><p>{QUOTE}</p></div>'
    assert judge_quote(html_page(spa), QUOTE).status is FOUND


def test_a_page_full_of_text_with_scripts_is_judged() -> None:
    """Scripts alone say nothing: a documentation page with its text and a search script."""
    body = f"<html><body>{FILLER}<script src=search.js></script><div id=app><p>Results</p></div></body></html>"
    assert judge_quote(html_page(body), QUOTE).status is MISSING


def test_an_empty_page_without_scripts_is_judged() -> None:
    assert judge_quote(html_page("<html><body><p>Short.</p></body></html>"), QUOTE).status is MISSING


@pytest.mark.parametrize(
    ("media", "said"),
    [
        ("application/pdf", "a PDF: its text is not read"),
        ("image/png", "an image"),
        ("application/json", "JSON"),
        ("application/zip", "only HTML and plain text"),
        ("text/css", "only HTML and plain text"),
    ],
)
def test_a_page_that_is_not_html_or_text_is_unverifiable(media: str, said: str) -> None:
    page = Page("https://x.example/f", media, None, f"%PDF-1.7 {QUOTE}".encode(), False)
    result = judge_quote(page, QUOTE)
    assert result.status is UNVERIFIABLE and said in result.detail


def test_no_page_is_unverifiable() -> None:
    result = judge_quote(None, QUOTE)
    assert result.status is UNVERIFIABLE and "not fetched" in result.detail


def test_a_binary_body_served_as_html_is_unverifiable() -> None:
    junk = bytes(range(256)) * 40
    page = Page("https://x.example/", "text/html", None, junk + QUOTE.encode(), False)
    result = judge_quote(page, QUOTE)
    assert result.status is UNVERIFIABLE and "binary" in result.detail


def test_plain_text_is_searched_as_it_is() -> None:
    text = "Notes\n\n<p>" + QUOTE.replace(" its ", "\n  its ") + "</p> and <script>x</script>"
    page = Page("https://x.example/notes.txt", "text/plain", "utf-8", text.encode(), False)
    assert judge_quote(page, QUOTE).status is FOUND
    assert judge_quote(page, "<script>x</script>").status is FOUND  # not markup here


def test_a_page_served_without_a_type_is_sniffed() -> None:
    page = Page("https://x.example/", "", None, f"<!DOCTYPE html><p>{QUOTE}</p><b>{QUOTE[:5]}</b>".encode(), False)
    assert judge_quote(page, QUOTE).status is FOUND
    assert judge_quote(page, "<p>").status is MISSING  # read as HTML: the tag is not text


@pytest.mark.parametrize(
    ("encoding", "charset", "bom"),
    [
        ("cp1252", "windows-1252", b""),
        ("cp1252", "iso-8859-1", b""),  # read as windows-1252, as browsers do
        ("utf-16-le", None, b"\xff\xfe"),
        ("utf-16-be", "utf-8", b"\xfe\xff"),  # the BOM beats the header
        ("utf-8", None, b""),
    ],
)
def test_pages_in_other_encodings(encoding: str, charset: str | None, bom: bytes) -> None:
    body = bom + f"<p>{FILLER} The compiler’s “fast” café.</p>".encode(encoding)
    page = Page("https://x.example/", "text/html", charset, body, False)
    assert judge_quote(page, 'the compiler\'s "fast" café').status is FOUND


def test_a_meta_charset_is_read() -> None:
    body = b'<html><head><meta charset="windows-1252"></head><body><p>It\x92s \x93quoted\x94 caf\xe9</p></body></html>'
    page = Page("https://x.example/", "text/html", None, body, False)
    assert judge_quote(page, "It’s “quoted” café").status is FOUND


def test_a_bogus_charset_is_passed_over() -> None:
    """With rot13 taken at its word, 'Uryyb' would read as 'Hello'."""
    page = Page("https://x.example/", "text/html", "rot13", "<p>Uryyb, café</p>".encode(), False)
    assert judge_quote(page, "Uryyb, café").status is FOUND
    assert judge_quote(page, "Hello").status is MISSING


def test_a_quote_past_the_part_read_of_a_truncated_page_is_unverifiable() -> None:
    body = ("<p>" + "filler words. " * 100_000 + "</p>").encode()[: 1 << 20]
    page = Page("https://x.example/", "text/html", "utf-8", body, True)
    assert judge_quote(page, "filler words. filler").status is FOUND
    result = judge_quote(page, QUOTE)
    assert result == QuoteResult(UNVERIFIABLE, "the page is over 1 MiB; the quote is not in its first 1 MiB")


@pytest.mark.parametrize("quote", ["", "   ", "\u200b\u00ad", "\n\t"])
def test_a_quote_with_no_words_is_unverifiable(quote: str) -> None:
    result = judge_quote(html_page("<p>text</p>"), quote)
    assert result.status is UNVERIFIABLE and "no words" in result.detail


def test_several_quotes_on_one_page() -> None:
    page = html_page(f"<p>{QUOTE}</p><p>Another sentence here.</p>")
    results = judge_quotes(page, [QUOTE, "another SENTENCE", "not there", ""])
    assert {q: r.status for q, r in results.items()} == {
        QUOTE: FOUND,
        "another SENTENCE": FOUND,
        "not there": MISSING,
        "": UNVERIFIABLE,
    }
    assert judge_quotes(None, []) == {}


def test_hostile_pages_give_a_verdict_never_an_exception() -> None:
    pages = [
        b"<div>" * 100_000 + QUOTE.encode(),
        b"<a title='" + b"x" * 3_000_000,
        b"<!--" * 100_000,
        b"<script>" + b"</scrip" * 100_000,
        b"\xff\xfe" + b"\x00\xd8" * 1000,  # UTF-16 of lone surrogates
        bytes(range(256)) * 1000,
    ]
    for body in pages:
        result = judge_quote(Page("https://x.example/", "text/html", None, body, False), QUOTE)
        assert result.status in QuoteStatus


def test_a_page_hidden_whole_until_its_scripts_run_is_read() -> None:
    """<body style="display:none"> is a page waiting for its scripts to lay it out, not a hidden page."""
    for tag in ('<body style="display:none">', "<body hidden>", '<html style="visibility:hidden"><body>'):
        assert judge_quote(html_page(f"{tag}{FILLER}<p>{QUOTE}</p><script>show()</script>"), QUOTE).status is FOUND


def test_data_in_script_elements_is_not_a_script() -> None:
    """JSON-LD on a short static page does not make it a page written by scripts."""
    body = '<script type="application/ld+json">{"@type": "Article"}</script><p>A short page.</p>'
    assert judge_quote(html_page(body), QUOTE).status is MISSING
    for kind in ("", ' type="module"', ' type="text/javascript"', " type=' Application/ECMAScript '"):
        assert judge_quote(html_page(f"<script{kind}>x()</script><p>A short page.</p>"), QUOTE).status is UNVERIFIABLE


def test_a_media_type_with_parameters_is_read() -> None:
    page = Page("https://x.example/", "Text/HTML; charset=utf-8", "utf-8", f"<p>{QUOTE}</p>".encode(), False)
    assert judge_quote(page, QUOTE).status is FOUND


@pytest.mark.parametrize(
    "meta",
    [
        '<meta http-equiv="refresh" content="0; url=https://docs.example/new.html">',
        "<META HTTP-EQUIV=Refresh CONTENT=\"5;URL='/moved'\">",
        '<meta http-equiv="refresh" content="0,/moved">',
    ],
)
def test_a_page_that_sends_its_reader_on_is_unverifiable_not_drift(meta: str) -> None:
    """A reader never sees a page that refreshes to another: the quote is looked for on a
    page nobody reads, and its absence says nothing of the page they are sent to."""
    result = judge_quote(html_page(f"<html><head>{meta}</head><body>This page has moved.</body></html>"), QUOTE)
    assert result.status is UNVERIFIABLE and "sends its reader on to" in result.detail
    found = judge_quote(html_page(f"<html><head>{meta}</head><body><p>{QUOTE}</p></body></html>"), QUOTE)
    assert found.status is FOUND  # it is there all the same


@pytest.mark.parametrize(
    "meta",
    [
        '<meta http-equiv="refresh" content="300">',  # the same page, reloaded
        '<noscript><meta http-equiv="refresh" content="0; url=/nojs"></noscript>',  # only without scripts
        '<meta name="refresh" content="0; url=/x">',
    ],
)
def test_a_page_that_only_reloads_itself_is_still_judged(meta: str) -> None:
    result = judge_quote(html_page(f"<html><head>{meta}</head><body>{FILLER}</body></html>"), QUOTE)
    assert result.status is MISSING
