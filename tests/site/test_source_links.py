"""Where a page sends a reader for a source (model.source_links) and what survives the page
sanitiser: a text fragment to the quote, Robust Links attributes that carry only an address a
reader may follow and a date, the archived copy once the page has been broken ARCHIVE_AFTER
runs in a row; and the link report's new fields read strictly."""

from __future__ import annotations

import dataclasses
import datetime as dt
import html
import json
import re
from pathlib import Path
from urllib.parse import unquote

import pytest

from cudagloss.errors import GlossaryError
from cudagloss.links.quotes import QuoteStatus
from cudagloss.load.link_report import load_link_report
from cudagloss.model.link_checks import ARCHIVE_AFTER, QUOTE_RESULTS, LinkCheck, LinkChecks
from cudagloss.model.source import Source
from cudagloss.model.source_links import source_link
from cudagloss.site.escape import clean_html
from cudagloss.site.term_view import source_view
from scaffold import good_glossary
from sitebuild import build, fixture_config

DAY = dt.date(2026, 12, 5)
URL = "https://docs.nvidia.com/cuda/guide.html"
COPY = f"https://web.archive.org/web/20261101000000/{URL}"
QUOTE = "Lazy loading reduces program initialization time"


def source(**fields: object) -> Source:
    return dataclasses.replace(Source("The guide", URL), **fields)  # type: ignore[arg-type]


def test_the_model_knows_every_quote_result_the_checker_gives() -> None:
    assert set(QUOTE_RESULTS) == {s.value for s in QuoteStatus}


def test_a_quoted_source_links_to_its_quote() -> None:
    link = source_link(source(quote=QUOTE), None)
    assert link.href.startswith(f"{URL}#:~:text=Lazy%20loading") and not link.archive_shown
    assert link.quote_phrase == "quote not yet checked"
    assert source_link(source(), None).href == URL and source_link(source(), None).quote_phrase == ""


@pytest.mark.parametrize(
    ("stamped", "failed", "report", "shown"),
    [
        (0, 0, None, False),
        (ARCHIVE_AFTER - 1, 0, None, False),
        (ARCHIVE_AFTER, 0, None, True),
        (ARCHIVE_AFTER, 0, 0, False),  # the report is newer: reachable again
        (0, 0, ARCHIVE_AFTER, True),
    ],
)
def test_the_archived_copy_is_linked_once_the_page_is_gone(
    stamped: int, failed: int, report: int | None, shown: bool
) -> None:
    checks = LinkChecks(DAY, {URL: LinkCheck("broken", failed_checks=report)}) if report is not None else None
    link = source_link(source(archived_url=COPY, archived_on=DAY, failed_checks=stamped), checks)
    assert link.archive_shown is shown and link.href == (COPY if shown else URL)
    assert link.original == URL and link.archived_url == COPY


def test_without_a_copy_a_gone_page_is_still_linked_as_it_was() -> None:
    link = source_link(source(failed_checks=9), None)
    assert link.href == URL and not link.archive_shown


@pytest.mark.parametrize("copy", ["javascript:alert(1)", "http://10.0.0.1/", "http://[::1]:8080/web/1/x"])
def test_a_copy_that_is_not_an_address_a_reader_may_follow_is_never_linked(copy: str) -> None:
    link = source_link(source(archived_url=copy, archived_on=DAY, failed_checks=5), None)
    assert link.href == URL and link.archived_url is None
    checks = LinkChecks(DAY, {URL: LinkCheck("broken", failed_checks=5, archived_url=copy)})  # a report's copy
    link = source_link(source(), checks)
    assert link.href == URL and link.archived_url is None


@pytest.mark.parametrize(
    ("said", "phrase"),
    [
        ("quote-found", f"quote checked {DAY}"),
        ("quote-missing", f"quote checked 2026-11-01; quote not found on the page on {DAY}"),
        ("quote-unverifiable", f"quote checked 2026-11-01; quote could not be looked for on {DAY}"),
    ],
)
def test_what_the_report_says_of_the_quote(said: str, phrase: str) -> None:
    checks = LinkChecks(DAY, {URL: LinkCheck("ok", quotes=((QUOTE, said),))})
    assert source_link(source(quote=QUOTE, quote_checked_on=dt.date(2026, 11, 1)), checks).quote_phrase == phrase


def test_the_sources_list_item_survives_the_sanitiser_with_its_robust_links() -> None:
    view = source_view(source(quote=QUOTE, archived_url=COPY, archived_on=DAY), None)
    html = (
        f'<a href="{view.url}" data-originalurl="{view.original_url}" '
        f'data-versionurl="{view.version_url}" data-versiondate="{view.version_date}">x</a>'
    )
    cleaned = clean_html(html)
    assert f'data-versionurl="{COPY}"' in cleaned and 'data-versiondate="2026-12-05"' in cleaned
    assert f'data-originalurl="{URL}"' in cleaned and "#:~:text=" in cleaned


@pytest.mark.parametrize(
    "attribute",
    [
        'data-versionurl="javascript:alert(1)"',
        'data-originalurl="data:text/html,x"',
        'data-versiondate="tomorrow"',
        'data-versiondate="2026-12-05&quot; onclick=&quot;x"',
    ],
)
def test_the_sanitiser_keeps_only_addresses_and_dates_in_robust_links(attribute: str) -> None:
    cleaned = clean_html(f'<a href="https://example.com/" {attribute}>x</a>')
    assert "data-" not in cleaned and "onclick" not in cleaned
    assert "data-" not in clean_html(f'<span data-versionurl="{COPY}">x</span>')  # on a link only


def report(tmp_path: Path, entry: dict[str, object]) -> Path:
    path = tmp_path / "links.json"
    path.write_text(json.dumps({"checked_on": DAY.isoformat(), "results": [{"url": URL, "result": "ok", **entry}]}))
    return path


def test_the_report_carries_quotes_counts_and_copies(tmp_path: Path) -> None:
    entry = {"quotes": [{"quote": QUOTE, "result": "quote-missing"}], "failed_checks": 0, "archived_url": COPY}
    checks = load_link_report(report(tmp_path, entry))
    assert checks.by_url[URL] == LinkCheck("ok", ((QUOTE, "quote-missing"),), 0, COPY)


@pytest.mark.parametrize(
    "entry",
    [
        {"quotes": {"q": "quote-found"}},
        {"quotes": [{"quote": 1, "result": "quote-found"}]},
        {"quotes": [{"quote": "q", "result": "found"}]},
        {"failed_checks": -1},
        {"failed_checks": True},
        {"failed_checks": 1.5},
        {"archived_url": 7},
        {"failed_checks": 3},  # the result is "ok": a URL found reachable has no broken runs in a row
    ],
)
def test_a_report_whose_new_fields_are_wrong_is_refused(tmp_path: Path, entry: dict[str, object]) -> None:
    with pytest.raises(GlossaryError) as raised:
        load_link_report(report(tmp_path, entry))
    (diagnostic,) = raised.value.diagnostics
    assert diagnostic.line == 1 and "results[0]" in diagnostic.message


@pytest.mark.builders
def test_a_quote_of_characters_that_mean_something_builds_strictly_and_links_whole(tmp_path: Path) -> None:
    """A quote holding what means something in a URL, Markdown, HTML or a text directive:
    the page still builds under --strict, the quote is shown as text, and the link's text
    fragment is one directive that decodes back to the quote's words."""
    quote = 'It ends ) and ] then " and <b>not</b> & # % :~:text=x, [a](javascript:y) *z* {{ w }}'
    source = f"sources:\n  - title: The guide\n    url: {URL}?a=1&b=(2)\n    quote: {json.dumps(quote)}\n"
    terms = good_glossary(tmp_path, source) / "terms"
    done = build(fixture_config(tmp_path, terms), tmp_path / "site")
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "site" / "terms" / "warp" / "index.html").read_text(encoding="utf-8")
    href = re.search(r'<a href="([^"]*#:~:text=[^"]*)"', page)
    assert href is not None and "<b>not</b>" not in page and "javascript:" not in href[1]
    fragment = html.unescape(href[1]).split("#:~:text=", 1)[1]
    assert "&" not in fragment and "#" not in fragment and fragment.count(",") <= 1
    start_words, _, end_words = (unquote(part) for part in fragment.partition(","))
    assert quote.startswith(start_words) and quote.endswith(end_words)
    assert f"“{html.escape(quote, quote=False)}”" in page


def test_another_terms_copy_in_the_report_is_not_linked_without_its_date() -> None:
    """The report names a copy (another term citing the same URL has one) but this source has no
    stamps of its own: the page links the URL itself, until `make links` stamps the copy here too."""
    checks = LinkChecks(DAY, {URL: LinkCheck("broken", failed_checks=ARCHIVE_AFTER + 1, archived_url=COPY)})
    link = source_link(source(), checks)
    assert link.href == URL and link.archived_url is None and not link.archive_shown
    view = source_view(source(), checks)
    assert view.url == URL and view.version_url is None
