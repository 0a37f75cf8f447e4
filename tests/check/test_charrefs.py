"""Numeric character references too long for int() (issue 39, class 3b): `&#0000…65;` and
`&#99999…;` in a term body, a diagram or a fetched page decode as a browser decodes them,
never into Python's "Exceeds the limit (4300 digits)" traceback (text/charrefs.py)."""

from __future__ import annotations

import html
import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES, cudagloss
from cudagloss.links.page_text import visible_text
from cudagloss.links.quotes import QuoteResult, QuoteStatus, judge_quote
from cudagloss.links.status import Page
from cudagloss.text.charrefs import bound_charrefs, unescape
from cudagloss.text.markdown import plain_text
from cudagloss.text.svg import problems

ZEROS, NINES = "&#" + "0" * 5000 + "65;", "&#" + "9" * 5000 + ";"
QUOTE = "Each SM partitions its warps among four schedulers."


@pytest.mark.parametrize(
    "text",
    ["&#65;", "&#0065", "&#x0041;", "&#;", "&#x;", "&#", "&#0;", "a&#0b", "&#1114112;", "&#65;;", "&#x41g", "&amp;"],
)
def test_a_short_reference_decodes_as_the_standard_library_decodes_it(text: str) -> None:
    assert unescape(text) == html.unescape(text)


@pytest.mark.parametrize(
    ("text", "decoded"),
    [(ZEROS, "A"), (NINES, "\ufffd"), ("&#x" + "0" * 5000 + "41;", "A"), ("&#" + "0" * 5000 + ";x", "\ufffdx")],
)
def test_a_reference_of_thousands_of_digits_decodes_as_a_browser_reads_it(text: str, decoded: str) -> None:
    assert unescape(text) == decoded
    assert plain_text(f"one {text} two") == f"one {decoded} two"


@pytest.mark.parametrize("reference", [ZEROS, NINES])
def test_a_fetched_page_with_a_long_reference_still_shows_its_quote(reference: str) -> None:
    body = f"<html><body><p title='{reference}'>x {reference}</p><p>{QUOTE}</p></body></html>"
    assert QUOTE in visible_text(body)
    page = Page("https://docs.example/guide.html", "text/html", "utf-8", body.encode(), False)
    assert judge_quote(page, QUOTE) == QuoteResult(QuoteStatus.FOUND)


@pytest.mark.parametrize("reference", [ZEROS, NINES])
def test_a_term_body_with_a_long_reference_is_checked_without_a_traceback(tmp_path: Path, reference: str) -> None:
    shutil.copytree(FIXTURES / "good", tmp_path / "terms")
    before = cudagloss(tmp_path, "check", "--no-cache", "terms", timeout=120)
    warp = tmp_path / "terms" / "warp.yaml"
    text = warp.read_text(encoding="utf-8")
    warp.write_text(text.replace("A warp runs one", f"A warp {reference} runs one", 1), encoding="utf-8")
    run = cudagloss(tmp_path, "check", "--no-cache", "terms", timeout=120)
    assert "Traceback" not in run.stderr and "Exceeds the limit" not in run.stderr + run.stdout
    assert (run.returncode, run.stdout, run.stderr) == (before.returncode, before.stdout, before.stderr)


def test_a_diagram_with_a_long_reference_is_read_without_a_traceback() -> None:
    assert problems(f"<svg><text>{ZEROS}</text></svg>") == []
    assert bound_charrefs("&#0065; and &#x41;") == "&#0065; and &#x41;"
