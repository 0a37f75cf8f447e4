"""Plan stage of `cudagloss links`: every source URL of the terms, where each is cited, and
which are checked this run; nothing is judged and nothing is asked of the network.

The terms are read by the load stage alone (cudagloss.load.terms.load_terms): the same files
and refusals as `make check`, but no claim is judged, no measurement read and no typed number
looked at, so a glossary whose claims fail or whose measurements are stale still has its links
checked (`make check` says what else is wrong). What the checker needs is validated here, as
`make check` validates it: every source URL, and every archived copy, a public http(s) address
(cudagloss.check.fields.source_url_mistake), and no `checked_on` in the future (it would keep
the URL fresh forever). Terms that cannot be read, or such a source, raise GlossaryError:
the run cannot start (ExitCode.USAGE at the command line).

The plan also says what a check leads to: a URL found reachable is stamped with the plan's
day (stamps()), in every file that cites it (stamp_folder.py writes them).
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass
from pathlib import Path

from cudagloss.check.fields import future_dates, source_url_mistake, utc_today
from cudagloss.errors import Diagnostic, GlossaryError
from cudagloss.load.terms import load_terms
from cudagloss.model.corpus import LoadedTerm


@dataclass(frozen=True)
class Citation:
    """One source of one term: where it is, and when it was last found reachable."""

    url: str
    path: str
    file: Path
    line: int
    checked_on: dt.date | None
    quote: str | None = None
    archived_url: str | None = None
    failed_checks: int = 0


@dataclass(frozen=True)
class LinkPlan:
    """What a run checks, decided before any request."""

    by_url: dict[str, list[Citation]]
    """Every source URL, with each place that cites it, in the order the files cite them."""
    todo: list[str]
    """The URLs to check: all of them when forced, else those not found reachable within max_age days."""
    today: dt.date
    """The day a URL found reachable is stamped with."""
    max_age: float

    @property
    def quotes(self) -> dict[str, list[str]]:
        """The quotes each URL to check carries (several terms may quote one page), in citing order."""
        out: dict[str, list[str]] = {}
        for url in self.todo:
            for q in dict.fromkeys(c.quote for c in self.by_url[url] if c.quote):
                out.setdefault(url, []).append(q)
        return out

    def unarchived(self, url: str) -> bool:
        """A citation of url has no archived copy yet: the archive is asked, once found reachable."""
        return any(c.archived_url is None for c in self.by_url.get(url, []))

    @property
    def skipped(self) -> int:
        """URLs left alone: found reachable within max_age days by every citation."""
        return len(self.by_url) - len(self.todo)


def citations(terms: Path, root: Path) -> list[Citation]:
    """Every source of every term file in terms, in file order; GlossaryError for terms that
    cannot be read and for sources the checker may not ask for (see the module's docstring)."""
    loaded, diagnostics = load_terms(terms, root)
    for t in loaded:
        diagnostics += _source_mistakes(t)
    if any(not d.warning for d in diagnostics):
        raise GlossaryError(diagnostics)
    out = []
    for t in loaded:
        for i, source in enumerate(t.term.sources):
            line, _ = t.at(f"sources[{i}].url")
            out.append(
                Citation(
                    source.url,
                    t.path,
                    t.file,
                    line,
                    _day(source.checked_on),
                    source.quote,
                    source.archived_url,
                    source.failed_checks,
                )
            )
    return out


def _day(value: dt.date | str) -> dt.date | None:
    return value if isinstance(value, dt.date) else None


def _source_mistakes(t: LoadedTerm) -> list[Diagnostic]:
    found = [
        m
        for i in range(len(t.term.sources))
        for key in ("url", "archived_url")
        if (m := source_url_mistake(t, i, key)) is not None
    ]
    dates = [
        (f"sources[{i}].checked_on", s.checked_on.isoformat(), t.at(f"sources[{i}].checked_on"))
        for i, s in enumerate(t.term.sources)
        if isinstance(s.checked_on, dt.date)
    ] + [
        (f"sources[{i}].quote_checked_on", s.quote_checked_on.isoformat(), t.at(f"sources[{i}].quote_checked_on"))
        for i, s in enumerate(t.term.sources)
        if isinstance(s.quote_checked_on, dt.date)
    ]
    return found + future_dates(t.path, dates, utc_today())


def plan(terms: Path, root: Path, *, today: dt.date, max_age: float, force: bool) -> LinkPlan:
    """The plan for the terms folder (read relative to root): every source URL, and those to
    check today (all when force)."""
    by_url: dict[str, list[Citation]] = {}
    for c in citations(terms, root):
        by_url.setdefault(c.url, []).append(c)
    todo = [u for u, cs in by_url.items() if force or not fresh(u, cs, today, max_age)]
    return LinkPlan(by_url, todo, today, max_age)


def fresh(url: str, citations: list[Citation], today: dt.date, max_age: float) -> bool:
    """Checked successfully within max_age days by every citation; a per-URL jitter of up to
    a quarter of max_age spreads re-checks out instead of all expiring on one day. A quote is
    judged whenever its URL is checked: one not found (or not yet judged) waits for its URL's
    next check like everything else about it, rather than keeping the URL due on every run (a
    PDF or a page that needs JavaScript would never rest); `--force` judges every quote now."""
    days = [c.checked_on for c in citations]
    if not days or any(d is None for d in days):
        return False
    jitter = int(hashlib.sha256(url.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF * max_age / 4
    oldest = min(d for d in days if d is not None)
    return (today - oldest).days < max_age - jitter
