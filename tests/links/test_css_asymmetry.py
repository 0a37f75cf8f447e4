"""CSS read after the asymmetry rule (issue 39, class 7; html_css.py): what hides counts where it
might apply, what shows only where a browser surely applies it, and what cannot be modelled
leaves the text possibly hidden. Each page here hides its secret from a browser's reader."""

from __future__ import annotations

import pytest

from cudagloss.links.css_tokens import scan
from cudagloss.links.html_css import NEST_MAX, WORK_MAX, CssFile, Sheet
from cudagloss.links.html_text import read_html


def sure_text(html: str, files: dict[str, CssFile] | None = None, header: tuple[tuple[str, str], ...] = ()) -> str:
    """The text a reader is sure to see (what may be hidden left out), whitespace collapsed."""
    files = {"http://h/a{b": CssFile(""), **(files or {})}
    found = read_html(f"<body><p>before</p>{html}<p>after</p></body>", "http://h/", files, header)
    sure = found.text if found.sure is None else found.sure
    return "" if found.styles_unknown else " ".join(sure.split())


@pytest.mark.parametrize(
    "html",
    [
        '<style>.a{content:"/*"}.x{display:none}/**/</style><p class=x>secret</p>',  # 1a
        "<style>.a{content:'/*'}.x{display:none}/**/</style><p class=x>secret</p>",
        """<p class=x style="font-family:'/*';display:none;font-family:'*/'">secret</p>""",
        '<p style="display:none;display:bogus">secret</p>',  # 1b
        '<p style="display:none;display:block block">secret</p>',
        '<p style="visibility:hidden;visibility:shown">secret</p>',
        '<p style="display:none;display:inherit">secret</p>',
        "<style>.x{display:none;display:revert-layer}</style><p class=x>secret</p>",
        "<style>.x{--h:none;display:var(--h)}</style><p class=x>secret</p>",  # 1c
        '<p style="--h:none;display:var(--h)">secret</p>',
        "<style>.x{visibility:env(x)}</style><p class=x>secret</p>",
        "<style>@import url('a{b'); .x{display:none}</style><p class=x>secret</p>",  # 1d
        '<style>.a{content:"}"} .x{display:none}</style><p class=x>secret</p>',
        "<style>.x{display:none}</style><style type=text/x-not-css>.x{display:block!important}</style>"
        "<p class=x>secret</p>",  # 2
        "<style>.x{display:none}</style><template><style>.x{display:block!important}</style></template>"
        "<p class=x>secret</p>",
        "<style>.HIDE{display:none}</style><p class=hide>secret</p>",  # 3: quirks mode
        "<style>#Hide{display:none}</style><p id=hide>secret</p>",
        "<style>.hide{display:none}.HIDE{display:block!important}</style><p class=hide>secret</p>",
        "<div hidden><table><tr><td></div>secret",  # 4
        "<dialog><table><tr><td></dialog>secret",
        "<div hidden><object></div>secret",
        "<span hidden><div></span>secret",
        "<p hidden><button></p>secret",
        "<div hidden></body>secret",
        "<details><summary>s</summary>secret</details>",
        "<details><summary>s</summary><summary>secret</summary></details>",  # only the first shows
        '<p style="content-visibility:hidden">secret</p>',
        '<p style="font-size:0">secret</p>',
        "<style>.x{opacity:0.0}</style><p class=x>secret</p>",
        "<style>.x{opacity:0}.x{opacity:1}</style><p class=x>secret</p>",
    ],
)
def test_a_hidden_quote_is_never_sure_to_be_seen(html: str) -> None:
    assert "secret" not in sure_text(html)


@pytest.mark.parametrize(
    "html",
    [
        "<style>.x{display:none}</style><p class=x style='display:block'>shown</p>",
        "<style>.x{display:none}.x{display:inline flex}</style><p class=x>shown</p>",
        '<style>.a{content:"/*"}</style><p class=a>shown</p>',
        "<div><table><tr><td></div>shown",
        "<details open><summary>s</summary>shown</details>",
        "<div hidden><span></div>shown",
    ],
)
def test_what_a_browser_shows_is_still_seen(html: str) -> None:
    assert "shown" in sure_text(html)


SHOW = CssFile(".x{display:block!important}")


@pytest.mark.parametrize(
    ("html", "header"),
    [
        ("<link rel=stylesheet href=s.css disabled><style>.x{display:none}</style>", ()),
        ("<style>.x{display:none}</style><link rel=stylesheet href=s.css type=text/plain>", ()),
        ("<style>.x{display:none}</style>", (("http://h/s.css", ""),)),  # Firefox alone applies a Link header's
        ("<style>@import url(t.css); .y{color:red} @import url(s.css); .x{display:none}</style>", ()),
        ("<style>@media screen{@import url(s.css);} .x{display:none}</style>", ()),
    ],
)
def test_a_sheet_a_browser_may_not_apply_shows_nothing(html: str, header: tuple[tuple[str, str], ...]) -> None:
    files = {"http://h/s.css": SHOW, "http://h/t.css": CssFile(".z{color:red}")}
    assert "secret" not in sure_text(html + "<p class=x>secret</p>", files, header)


def test_a_link_headers_sheet_still_hides() -> None:
    files = {"http://h/s.css": CssFile(".x{display:none}")}
    assert "secret" not in sure_text("<p class=x>secret</p>", files, (("http://h/s.css", ""),))


@pytest.mark.parametrize(
    "css",
    ["\U0001f600" + ";" * 20_000, "a{" * 20_000, "/*" + "x" * 20_000, '"' * 20_000, "url(" * 20_000, "@x;" * 9000],
)
def test_reading_a_sheet_takes_steps_in_proportion_to_its_length(css: str) -> None:
    for text in (css, css * 2, css * 4):
        assert scan(text, True).steps <= 2 * len(text) + 1
        sheet = Sheet()
        sheet.add_style(text, False)
        assert sheet.work <= 2 * (NEST_MAX + 2) * len(text) + 4  # each nesting level read again


def test_past_the_work_budget_hiding_is_unknown() -> None:
    sheet = Sheet(work=WORK_MAX - 10)
    sheet.add_style(".x{display:none}" * 10, False)
    assert sheet.unknown
