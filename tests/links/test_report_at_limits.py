"""The link checker's own report is always read by `render --link-report` (issue 39, class 9b):
written by the real writer (links/report.as_json) for a glossary at its limits, TERMS_MAX terms
with ITEMS_MAX sources each, it is read back by the real reader; one result with every field at
its longest stays within the per-result bounds the reader's caps are made of."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cudagloss.check.fields import utc_today
from cudagloss.links.findings import Findings
from cudagloss.links.plan import Citation, LinkPlan
from cudagloss.links.quotes import QuoteResult, QuoteStatus
from cudagloss.links.report import LinkReport, as_json
from cudagloss.links.status import Hop, LinkResult, LinkStatus
from cudagloss.load.link_report import load_link_report
from cudagloss.model import report_limits as limits
from cudagloss.model.limits import ITEMS_MAX, QUOTE_MAX, TERMS_MAX
from cudagloss.model.urls import MAX_URL_LENGTH
from cudagloss.text import strictjson

ASTRAL = "\U0001f600"
"""A character JSON writes as two \\uXXXX escapes: the most bytes one character can take."""


def _report(urls: int, *, hops: int, quoted: bool = True, longest: bool = False, stamped: int = 0) -> LinkReport:
    """A run's report over urls sources, one citation each, each with a redirect chain of hops and
    (quoted) a quote; longest: every string at (or past) its bound, of ASTRAL characters."""
    today = utc_today()
    by_url: dict[str, list[Citation]] = {}
    results: dict[str, LinkResult] = {}
    quotes: dict[str, dict[str, QuoteResult]] = {}
    long_url = "https://e.com/" + ASTRAL * MAX_URL_LENGTH
    for i in range(urls):
        url = long_url[: MAX_URL_LENGTH - 8] + f"{i:08}" if longest else f"https://example.com/{i}"
        term = f"terms/term-{i // ITEMS_MAX:04}.yaml"
        path = term + ASTRAL * limits.PATH_MAX * 2 if longest else term
        quote = (ASTRAL * QUOTE_MAX if longest else "a quote of four words") if quoted else None
        archived = long_url[:MAX_URL_LENGTH] if longest else None
        by_url[url] = [Citation(url, path, Path(term), 2**63 - 1 if longest else 9, today, quote, archived)]
        location = long_url * 2 if longest else "https://example.com/moved"
        chain = tuple(Hop(308, location) for _ in range(hops))
        detail = ASTRAL * (limits.DETAIL_MAX * 2) if longest else "-> https://example.com/moved"
        results[url] = LinkResult(url, LinkStatus.REDIRECTED, detail, 200, location, chain, True)
        if quote is not None:
            quotes[url] = {quote: QuoteResult(QuoteStatus.MISSING, detail)}
    plan = LinkPlan(by_url, list(by_url), today, 30.0)
    files = [f"terms/term-{n:04}.yaml" + (ASTRAL * limits.PATH_MAX * 2 if longest else "") for n in range(stamped)]
    return LinkReport(plan, results, files, Findings(results, quotes))


@pytest.mark.limits
def test_the_report_of_a_glossary_at_its_limits_is_read_back(tmp_path: Path) -> None:
    """Every source a URL of its own: the most results a report can have (the longest of each
    is the next test's). About a minute: most of it the strict parser reading 100 MB."""
    report = _report(limits.CITATIONS_MAX, hops=0, quoted=False, stamped=TERMS_MAX)
    written = tmp_path / "links.json"
    written.write_text(as_json(report), encoding="utf-8")
    checks = load_link_report(written)
    assert len(checks.by_url) == TERMS_MAX * ITEMS_MAX
    last = checks.by_url[f"https://example.com/{limits.CITATIONS_MAX - 1}"]
    assert last.result == "redirected" and last.quotes == ()


def _values(value: Any) -> int:
    """JSON values as strictjson counts them: each scalar and each container."""
    if isinstance(value, dict):
        return 1 + sum(_values(v) for v in value.values())
    if isinstance(value, list):
        return 1 + sum(_values(v) for v in value)
    return 1


def test_one_result_at_its_longest_stays_within_the_bounds_the_caps_are_made_of() -> None:
    """Bytes and values of one result (its citation included) and of one stamped file, each
    string past its bound in the characters JSON makes longest, within what the caps count."""
    none = as_json(_report(0, hops=0))
    one = as_json(_report(1, hops=limits.HOPS_MAX + 3, longest=True))
    stamped = as_json(_report(0, hops=0, longest=True, stamped=1))
    assert len(one) - len(none) <= limits.URL_ENTRY_BYTES + limits.CITATION_BYTES
    assert len(none) <= limits.FRAME
    assert len(stamped) - len(none) <= (limits.HEADER_BYTES - limits.FRAME) // TERMS_MAX
    values = _values(strictjson.parse(one, max_values=10**6).value)
    assert values - _values(strictjson.parse(none).value) <= limits.URL_ENTRY_VALUES + limits.CITATION_VALUES
    assert one.isascii()  # so a character's bytes are its JSON escapes, JSON_CHAR_MAX at most
