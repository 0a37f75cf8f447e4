"""Reports of `cudagloss links`: the run's results, told in one format or another.

As lychee's formatters: the run produces a LinkReport (the plan, every result, the files
stamped), and each output format is one formatter over it, returning the text printed on
standard output. FORMATS maps `--format`'s choices to them.

    text   `path:line: [result] url (detail)` for each citation of a URL with a problem,
           sorted by URL; then, apart, each quote not found on its page (content drift: the
           page answers but no longer says what we cite it for) or that could not be looked
           for; then a table of counts per result and per quote result, the archived copies
           found, the URLs skipped and the files stamped
    json   one document: the day, counts, files stamped, and every result with where it is
           cited, its quotes' results, its archived copy and its broken runs in a row
           (`cudagloss render --link-report` reads it, so pages say what this run found)
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from cudagloss.errors import shown
from cudagloss.links.findings import Findings
from cudagloss.links.plan import LinkPlan
from cudagloss.links.quotes import QuoteStatus
from cudagloss.links.status import LinkResult, LinkStatus
from cudagloss.model.limits import COUNT_MAX
from cudagloss.model.report_limits import DETAIL_MAX, HOPS_MAX, PATH_MAX
from cudagloss.model.urls import MAX_URL_LENGTH


@dataclass(frozen=True)
class LinkReport:
    """What a run found: the plan it followed, each URL's result (in the order they
    finished), and the term files stamped."""

    plan: LinkPlan
    results: dict[str, LinkResult]
    stamped: list[str]
    found: Findings = field(default_factory=Findings)
    """The quotes judged and the archived copies found (results is found.results, or given apart)."""

    @property
    def counts(self) -> Counter[str]:
        """Results per LinkStatus value."""
        return Counter(r.status.value for r in self.results.values())

    def failed_checks(self, url: str) -> int:
        """Broken runs in a row for url, this one counted: what the stamps say after it (they
        stop at COUNT_MAX, and a report past it is refused by `render --link-report`)."""
        before = max((c.failed_checks for c in self.plan.by_url.get(url, [])), default=0)
        result = self.results.get(url)
        if result is None:
            return before
        return min(before + 1, COUNT_MAX) if result.status.fails else 0 if result.status.reachable else before

    def archived(self, url: str) -> str | None:
        """url's archived copy: found this run, else the one its citations carry."""
        snap = self.found.archive.found.get(url)
        if snap is not None:
            return snap.url
        return next((c.archived_url for c in self.plan.by_url.get(url, []) if c.archived_url), None)

    @property
    def failed(self) -> bool:
        """Whether a URL is broken or invalid (LinkStatus.fails): the run exits FAILED."""
        return any(r.status.fails for r in self.results.values())


def problem(result: LinkResult) -> bool:
    """Whether the text report lists the result: anything but a plain OK."""
    return result.status is not LinkStatus.OK or result.soft_404


def text(report: LinkReport) -> str:
    lines = []
    for url, r in sorted(report.results.items()):
        if problem(r):
            detail = "; ".join(x for x in (r.detail, *r.notes) if x)
            for c in report.plan.by_url[url]:
                lines.append(f"{c.path}:{c.line}: [{r.status.value}] {shown(url)}" + (f" ({detail})" if detail else ""))
    drift = _drift(report)
    if drift:
        lines.append("quotes not found on their pages (content drift) or not looked for:")
        lines += drift
    counts = report.counts
    lines.append(f"{'result':<18} count")
    lines += [f"{status.value:<18} {counts.get(status.value, 0)}" for status in LinkStatus]
    lines += [f"{q.value:<18} {report.found.quote_count(q)}" for q in QuoteStatus]
    archive = report.found.archive
    if archive.found or archive.problems:
        lines.append(f"archived copies found for {len(archive.found)} of {len(archive.found) + len(archive.problems)}")
    if archive.stopped:
        lines.append(f"archive: {archive.stopped}")
    lines.append(f"{'skipped':<18} {report.plan.skipped} (checked within {report.plan.max_age:g} days)")
    if report.stamped:
        lines.append(f"stamped {len(report.stamped)} term files")
    return "\n".join(lines)


def _drift(report: LinkReport) -> list[str]:
    """`path:line: [quote-missing] url: "quote" (detail)` for each citation whose quote was not found."""
    lines = []
    for url, judged in sorted(report.found.quotes.items()):
        for c in report.plan.by_url.get(url, []):
            r = judged.get(c.quote or "")
            if r is not None and r.status is not QuoteStatus.FOUND:
                said = f": {shown(r.detail, 300)}" if r.detail else ""  # a server's words (its Content-Type)
                lines.append(f"{c.path}:{c.line}: [{r.status.value}] {shown(url)} {shown(repr(c.quote), 100)}{said}")
    return lines


def as_json(report: LinkReport) -> str:
    """The report as `render --link-report` reads it: every field within model/report_limits.py's
    bounds (a detail, a server's URL or a path past them is cut), so the reader's caps hold it."""
    by_url = report.plan.by_url
    document = {
        "checked_on": report.plan.today.isoformat(),
        "checked": len(report.results),
        "skipped_fresh": report.plan.skipped,
        "counts": dict(report.counts),
        "quote_counts": {q.value: report.found.quote_count(q) for q in QuoteStatus},
        "stamped": [path[:PATH_MAX] for path in report.stamped],
        "results": [
            {
                "url": r.url,
                "result": r.status.value,
                "detail": r.detail[:DETAIL_MAX],
                "http_status": r.http_status,
                "final_url": r.final_url[:MAX_URL_LENGTH] if r.final_url is not None else None,
                "chain": [[h.status, h.location[:MAX_URL_LENGTH]] for h in r.chain[:HOPS_MAX]],
                "soft_404": r.soft_404,
                "cited_at": [f"{c.path[:PATH_MAX]}:{c.line}" for c in by_url[r.url]],
                "quotes": [
                    {"quote": q, "result": j.status.value, "detail": j.detail[:DETAIL_MAX]}
                    for q, j in report.found.quotes.get(r.url, {}).items()
                ],
                "archived_url": report.archived(r.url),
                "failed_checks": report.failed_checks(r.url),
            }
            for r in report.results.values()
        ],
    }
    return json.dumps(document, indent=2)


FORMATS: dict[str, Callable[[LinkReport], str]] = {"text": text, "json": as_json}
"""The formatter of each `--format` choice."""
