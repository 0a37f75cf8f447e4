"""Text a page's own CSS hides is not text a reader sees (issue 39, class 7): html_css.py and
css_text.py read <style> rules and inline styles as CSS does (comments, escapes, the cascade),
and say where they cannot judge. The CSS is hostile too: reading it must stay linear."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from cudagloss.links.html_css import STYLE_MAX
from cudagloss.links.html_elements import MAYBE_MARK
from cudagloss.links.html_text import read_html

BEFORE, AFTER = "<body><p>before</p>", "<p>after</p></body>"


def read(html: str) -> tuple[str, str, str]:
    """(the text, the text sure to be seen, why hiding is unknown), whitespace collapsed."""
    found = read_html(BEFORE + html + AFTER)
    sure = found.text if found.sure is None else found.sure
    return " ".join(found.text.split()), " ".join(sure.split()), found.styles_unknown


@pytest.mark.parametrize(
    "html",
    [
        "<style>.x{display:none}</style><p class=x>secret</p>",
        "<p class='a x b'>secret</p><style>.x { display : none }</style>",  # a later <style> applies too
        "<style>#x{visibility:hidden}</style><div id=x><p>secret</p></div>",
        "<style>aside{display:none}</style><aside>secret</aside>",
        "<style>p.x#y{display:none}</style><p class=x id=y>secret</p>",
        "<style>.a, .x{display:none}</style><p class=x>secret</p>",
        "<style>.x{display:non\\65}</style><p class=x>secret</p>",  # a CSS escape
        "<style>.x{display:/* no */none}</style><p class=x>secret</p>",
        "<style>.x{DISPLAY:NONE!IMPORTANT}</style><p class=x style='display:block'>secret</p>",
        "<style>.x{display:none}.x{color:red}</style><p class=x>secret</p>",
        "<style>section{display:block}.x{display:none}</style><section class=x>secret</section>",  # specificity
        '<p style="display:/**/none">secret</p>',
        '<p style="visibility:hidden/*x*/">secret</p>',
        '<p style="display:none;color:red/*;display:block*/">secret</p>',
        '<p style="display:n\\6f ne">secret</p>',
        "<style media=all>.x{display:none}</style><p class=x>secret</p>",
    ],
)
def test_what_the_pages_css_hides_is_not_text(html: str) -> None:
    text, sure, unknown = read(html)
    assert "secret" not in text and text == sure == "before after", text
    assert unknown == ""


@pytest.mark.parametrize(
    "html",
    [
        "<style>div .x{display:none}</style><p class=x>maybe</p>",
        "<style>.x:hover{display:none}</style><p class=x>maybe</p>",
        "<style>[data-x]{display:none}</style><p data-x>maybe</p>",
        "<style>@media screen{.x{display:none}}</style><p class=x>maybe</p>",
        "<style media='screen and (min-width: 60em)'>.x{display:none}</style><p class=x>maybe</p>",
        "<style>.x{display:none}@media (min-width:1px){.x{display:block}}</style><p class=x>maybe</p>",
        "<style>.p{.x{display:none}}</style><p class=x>maybe</p>",  # CSS nesting
        "<style>.\\78{display:none}</style><p class=x>maybe</p>",  # an escaped class
        "<style>:not(.y){display:none}</style><p class=x>maybe</p>",
    ],
)
def test_what_the_pages_css_may_hide_is_not_sure_to_be_seen(html: str) -> None:
    text, sure, unknown = read(html)
    assert "maybe" in text and "maybe" not in sure and MAYBE_MARK in sure, (text, sure)
    assert unknown == ""


@pytest.mark.parametrize(
    "html",
    [
        "<style>.x{display:none}</style><p class=y>shown</p>",
        "<style>.x{display:none}.x.y{display:block}</style><p class='x y'>shown</p>",
        "<style>.x{display:none}</style><p class=x style='display:block'>shown</p>",
        "<style>.x::before{display:none}.x:after{display:none}</style><p class=x>shown</p>",
        "<style>.x{color:red;--display:none}</style><p class=x>shown</p>",
        "<style>@font-face{font-family:x}.x{display:block}</style><p class=x>shown</p>",
        "<style>/* .x{display:none} */</style><p class=x>shown</p>",
        "<style media=print>.x{display:none}</style><p class=x>shown</p>",  # never on a screen
        "<style media='speech, not screen'>.x{display:none}</style><p class=x>shown</p>",
        "<link rel='alternate stylesheet' href=/site.css><p class=x>shown</p>",  # not applied unless chosen
        "<link rel=stylesheet media=print href=/site.css><p class=x>shown</p>",  # not fetched at all
    ],
)
def test_what_the_pages_css_shows_is_text(html: str) -> None:
    text, sure, unknown = read(html)
    assert text == sure == "before shown after" and unknown == ""


@pytest.mark.parametrize(
    ("html", "why"),
    [
        ("<link rel=stylesheet href=/site.css><p>x</p>", "stylesheet /site.css was not read"),
        ("<link rel=StyleSheet href=/site.css><p>x</p>", "stylesheet /site.css was not read"),
        ("<style>@import url(site.css);</style><p>x</p>", "stylesheet site.css was not read"),
        ("<style>@import 'site.css' screen;</style><p>x</p>", "stylesheet site.css was not read"),
        ("<style>@import;</style><p>x</p>", "imports a stylesheet"),
        ("<svg><style>.x{display:none}</style></svg><p>x</p>", "SVG or MathML"),
        ("<style>" + ".a{display:none}" * 5000 + "</style><p>x</p>", "over 4096 rules"),
        ("<style>" + " " * (STYLE_MAX + 1) + "</style><p>x</p>", "over 512 KiB"),
    ],
)
def test_css_that_is_not_read_leaves_hiding_unknown(html: str, why: str) -> None:
    assert why in read(html)[2]


def _cpu(func: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        func()
        best = min(best, time.process_time() - start)
    return best


@pytest.mark.parametrize(
    ("prefix", "unit"),
    [
        ("<style>", "{"),
        ("<style>", "/*"),
        ("<style>", '"'),
        ("<style>", "\\"),
        ("<style>.x{display:none}</style>", "<p class=x>a</p>"),
        ("<style>.x{display:none}</style>", "<p class='x x x x x x x x x x'>"),
        ("<style>", ".a .b, "),
        ("<p style='", "display:none;"),
        ("<p style='", "/**/"),
        ("<style>@import url(", " "),
        ("<style>@import ", "url( "),
        ("<style>", "@import 'a.css' screen;"),
    ],
)
def test_hostile_css_is_read_in_linear_time(prefix: str, unit: str) -> None:
    """A page of 4N units takes about four times as long as one of N, not sixteen."""
    n = max(1, 20_000 // len(unit))
    small, large = prefix + unit * n, prefix + unit * (4 * n)
    small_time = _cpu(lambda: read_html(small))
    large_time = _cpu(lambda: read_html(large))
    assert large_time < 9 * max(small_time, 0.002), (unit, small_time, large_time)
