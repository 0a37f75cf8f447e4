"""Reports of `cudagloss links`: the run's results, told in one format or another.

As lychee's formatters: the run produces a LinkReport (the plan, every result, the files
stamped), and each output format is one formatter over it, returning the text printed on
standard output. FORMATS maps `--format`'s choices to them.

    text   `path:line: [result] url (detail)` for each citation of a URL with a problem,
           sorted by URL, then a table of counts per result, the URLs skipped and the files stamped
    json   one document: the day, counts, files stamped, and every result with where it is cited
           (`cudagloss render --link-report` reads it, so pages say what this run found)
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from cudagloss.errors import shown
from cudagloss.links.plan import LinkPlan
from cudagloss.links.status import LinkResult, LinkStatus


@dataclass(frozen=True)
class LinkReport:
    """What a run found: the plan it followed, each URL's result (in the order they
    finished), and the term files stamped."""

    plan: LinkPlan
    results: dict[str, LinkResult]
    stamped: list[str]

    @property
    def counts(self) -> Counter[str]:
        """Results per LinkStatus value."""
        return Counter(r.status.value for r in self.results.values())

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
    counts = report.counts
    lines.append(f"{'result':<14} count")
    lines += [f"{status.value:<14} {counts.get(status.value, 0)}" for status in LinkStatus]
    lines.append(f"{'skipped':<14} {report.plan.skipped} (checked within {report.plan.max_age:g} days)")
    if report.stamped:
        lines.append(f"stamped {len(report.stamped)} term files")
    return "\n".join(lines)


def as_json(report: LinkReport) -> str:
    by_url = report.plan.by_url
    document = {
        "checked_on": report.plan.today.isoformat(),
        "checked": len(report.results),
        "skipped_fresh": report.plan.skipped,
        "counts": dict(report.counts),
        "stamped": report.stamped,
        "results": [
            {
                "url": r.url,
                "result": r.status.value,
                "detail": r.detail,
                "http_status": r.http_status,
                "final_url": r.final_url,
                "chain": [[h.status, h.location] for h in r.chain],
                "soft_404": r.soft_404,
                "cited_at": [f"{c.path}:{c.line}" for c in by_url[r.url]],
            }
            for r in report.results.values()
        ],
    }
    return json.dumps(document, indent=2)


FORMATS: dict[str, Callable[[LinkReport], str]] = {"text": text, "json": as_json}
"""The formatter of each `--format` choice."""
