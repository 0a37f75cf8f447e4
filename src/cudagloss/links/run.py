"""The run of `cudagloss links`: collect every source URL, check each once, report, and stamp the terms.

Its exit statuses (ExitCode): OK nothing broken; FAILED something broken or invalid;
OFFLINE no network here: nothing is reported broken and no file changes (whether there is
a network is asked before any check, on a clock of its own, network.py, so --timeout cannot
turn "offline" into timeouts; a run whose every lookup failed is offline too); WRITE a term
file could not be written (disk full, no permission): one line says which and why, the
report is still printed, and no file is left half-written; INTERRUPTED (Ctrl-C): the URLs
checked by then are stamped, each file written whole; TERMINATED (SIGTERM): stops at once,
between two files, stamping nothing more. Terms that cannot be read raise GlossaryError
(USAGE at the command line). The command itself, its options and its SIGTERM handler, is
cudagloss.commands.links.

Stamping never loses an author's byte: see stamp.py (compare-and-swap, line breaks) and
atomic.py (modes, links, read-only files, temporaries, signals); stamp_folder.py walks the
folder, as `cudagloss byline` does without checking anything.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from cudagloss.errors import ExitCode, shown
from cudagloss.links.checker import CheckerOptions, LinkChecker
from cudagloss.links.network import PROBE_SECONDS, network_answers
from cudagloss.links.stamp_folder import FolderStamps, histories, stamp_folder
from cudagloss.links.status import LinkResult, LinkStatus, looks_offline
from cudagloss.load.glossary import load_glossary
from cudagloss.model.project import Project
from cudagloss.model.term import PENDING


@dataclass(frozen=True)
class Citation:
    """One source of one term: where it is, and when it was last found reachable."""

    url: str
    path: str
    file: Path
    line: int
    checked_on: dt.date | None


def collect(terms: Path, root: Path) -> list[Citation]:
    corpus = load_glossary(Project.default(root).for_terms(terms))
    out = []
    for t in corpus:
        for i, source in enumerate(t.term.sources):
            line, _ = t.at(f"sources[{i}].url")
            day = source.checked_on if source.checked_on != PENDING else None
            out.append(Citation(source.url, t.path, t.file, line, day))
    return out


def fresh(url: str, citations: list[Citation], today: dt.date, max_age: float) -> bool:
    """Checked successfully within max_age days by every citation; a per-URL jitter of up to
    a quarter of max_age spreads re-checks out instead of all expiring on one day."""
    days = [c.checked_on for c in citations]
    if not days or any(d is None for d in days):
        return False
    jitter = int(hashlib.sha256(url.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF * max_age / 4
    oldest = min(d for d in days if d is not None)
    return (today - oldest).days < max_age - jitter


def _progress(done: int, total: int) -> None:
    if sys.stderr.isatty():
        width = 30
        filled = width * done // max(total, 1)
        print(f"\r  [{'#' * filled}{'.' * (width - filled)}] {done}/{total}", end="", file=sys.stderr, flush=True)


async def _check(urls: list[str], options: CheckerOptions, results: dict[str, LinkResult]) -> None:
    """Check urls into results as each finishes, so an interrupted run keeps what it found."""
    async with LinkChecker(options) as checker:

        def done(url: str, result: LinkResult) -> None:
            results[url] = result
            _progress(len(results), len(urls))

        await checker.check_all(urls, done)
    if urls and sys.stderr.isatty():
        print(file=sys.stderr)


def _problem(result: LinkResult) -> bool:
    return result.status is not LinkStatus.OK or result.soft_404


def run(
    terms: Path,
    *,
    max_age: float,
    force: bool,
    form: str,
    stamp: bool,
    timeout: float,
    terminated: list[int],
) -> ExitCode:
    """Check the URLs of terms not found reachable within max_age days (all of them when
    force), print the report in form (text or json), and stamp the term files unless told
    not to; terminated is non-empty once SIGTERM came (its handler raises KeyboardInterrupt)."""
    today = dt.date.today()
    citations = collect(terms, Path.cwd())
    by_url: dict[str, list[Citation]] = {}
    for c in citations:
        by_url.setdefault(c.url, []).append(c)
    todo = [u for u, cs in by_url.items() if force or not fresh(u, cs, today, max_age)]
    results: dict[str, LinkResult] = {}
    interrupted = False
    if todo and not network_answers(todo):
        print(
            f"cudagloss links: no network here (none of the hosts of {len(todo)} URLs answered within "
            f"{PROBE_SECONDS:g} s); nothing was checked or changed",
            file=sys.stderr,
        )
        return ExitCode.OFFLINE
    try:
        asyncio.run(_check(todo, CheckerOptions(total_timeout=timeout), results))
    except KeyboardInterrupt:
        if terminated:
            print("\ncudagloss links: terminated; nothing was stamped", file=sys.stderr)
            return ExitCode.TERMINATED
        interrupted = True
        print(f"\ncudagloss links: interrupted; stamping the {len(results)} URLs checked so far", file=sys.stderr)
    if looks_offline(results):
        print(
            f"cudagloss links: no network here (every one of {len(results)} DNS lookups failed); "
            "nothing was checked or changed",
            file=sys.stderr,
        )
        return ExitCode.OFFLINE
    done = FolderStamps()
    if stamp:
        reachable = {u: today for u, r in results.items() if r.status.reachable}
        try:
            history, why_not = histories(terms)
            if why_not:
                print(f"cudagloss links: bylines left pending: {why_not}", file=sys.stderr)
            stamp_folder(terms, reachable, history, "cudagloss links", done)
        except KeyboardInterrupt:
            if not terminated:
                raise
            print(f"cudagloss links: terminated; stopped after stamping {len(done.changed)} files", file=sys.stderr)
            return ExitCode.TERMINATED
    stamped_files = done.changed
    counts = Counter(r.status.value for r in results.values())
    failed = any(r.status.fails for r in results.values())
    if form == "json":
        print(
            json.dumps(
                {
                    "checked": len(results),
                    "skipped_fresh": len(by_url) - len(todo),
                    "counts": dict(counts),
                    "stamped": stamped_files,
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
                        for r in results.values()
                    ],
                },
                indent=2,
            )
        )
    else:
        for url, r in sorted(results.items()):
            if _problem(r):
                for c in by_url[url]:
                    detail = "; ".join(x for x in (r.detail, *r.notes) if x)
                    print(f"{c.path}:{c.line}: [{r.status.value}] {shown(url)}" + (f" ({detail})" if detail else ""))
        print(f"{'result':<14} count")
        for status in LinkStatus:
            print(f"{status.value:<14} {counts.get(status.value, 0)}")
        print(f"{'skipped':<14} {len(by_url) - len(todo)} (checked within {max_age:g} days)")
        if stamped_files:
            print(f"stamped {len(stamped_files)} term files")
    if interrupted:
        return ExitCode.INTERRUPTED
    if done.write_failed:
        return ExitCode.WRITE
    return ExitCode.FAILED if failed else ExitCode.OK
