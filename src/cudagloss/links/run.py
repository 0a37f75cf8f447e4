"""The run of `cudagloss links`: collect every source URL, check each once, report, and stamp the terms.

Its exit statuses (ExitCode): OK nothing broken; FAILED something broken or invalid;
OFFLINE no network here (every lookup failed): nothing is reported broken and no file
changes; WRITE a term file could not be written (disk full, no permission): one line says
which and why, the report is still printed, and no file is left half-written; INTERRUPTED
(Ctrl-C): the URLs checked by then are stamped, each file written whole; TERMINATED
(SIGTERM): stops at once, between two files, stamping nothing more. Terms that cannot be
read raise GlossaryError (USAGE at the command line). The command itself, its options and
its SIGTERM handler, is cudagloss.commands.links.

Stamping never loses an author's byte: see stamp.py (compare-and-swap, line breaks) and
atomic.py (modes, links, read-only files, temporaries, signals).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from cudagloss.errors import ExitCode, shown
from cudagloss.files.atomic import WriteFailed, remove_stale_temporaries
from cudagloss.links.checker import CheckerOptions, LinkChecker
from cudagloss.links.history import FileHistory, HistoryUnavailable, read_history
from cudagloss.links.stamp import stamp_file
from cudagloss.links.status import LinkResult, LinkStatus, looks_offline
from cudagloss.load.glossary import load_glossary
from cudagloss.load.terms import term_files
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
    corpus = load_glossary(terms, terms.parent / "measurements", repo_root=root)
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

        async def one(url: str) -> None:
            results[url] = await checker.check(url)
            _progress(len(results), len(urls))

        await asyncio.gather(*(one(u) for u in urls))
    if urls and sys.stderr.isatty():
        print(file=sys.stderr)


def _history(terms: Path) -> dict[Path, FileHistory]:
    """Git history of the term files by absolute path; empty (with one line saying why) when
    there is none to trust, so bylines stay pending rather than wrong."""
    try:
        top = Path(
            subprocess.run(
                ["git", "rev-parse", "--show-toplevel"], cwd=terms, capture_output=True, text=True, check=True
            ).stdout.strip()
        )
        folder = terms.resolve().relative_to(top).as_posix()
        return {(top / path).resolve(): h for path, h in read_history(top, folder).items()}
    except HistoryUnavailable as exc:
        print(f"cudagloss links: bylines left pending: {exc}", file=sys.stderr)
    except (OSError, subprocess.CalledProcessError, ValueError):
        print("cudagloss links: bylines left pending: the terms are not in a git repository", file=sys.stderr)
    return {}


def _problem(result: LinkResult) -> bool:
    return result.status is not LinkStatus.OK or result.soft_404


def _stamp_all(terms: Path, today: dt.date, results: dict[str, LinkResult], stamped_files: list[str]) -> bool:
    """Stamp every term file; False (after one line saying why) when a write failed, which
    stops the stamping: a full disk or a folder we may not write fails for every file."""
    remove_stale_temporaries(terms)  # those of a run killed by SIGKILL
    history = _history(terms)
    reachable = {u: today for u, r in results.items() if r.status.reachable}
    repository = terms.absolute().parent.resolve()  # where the folder is named, not where a link leads
    for file in term_files(terms):
        if not file.resolve().is_relative_to(repository):
            print(f"{file}: not stamped: it links to {file.resolve()}, outside {repository}", file=sys.stderr)
            continue
        found = history.get(file.resolve())
        fill = (
            {"written_by": found.written_by, "written_on": found.written_on, "reviewed_by": found.reviewed_by}
            if found
            else None
        )
        try:
            outcome = stamp_file(file, reachable, fill)
        except WriteFailed as exc:
            print(f"cudagloss links: {exc}; stopped stamping after {len(stamped_files)} files", file=sys.stderr)
            return False
        if outcome.changed:
            stamped_files.append(str(file))
        if outcome.problem:
            print(f"{file}: not stamped: {outcome.problem}", file=sys.stderr)
    return True


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
    stamped_files: list[str] = []
    write_failed = False
    if stamp:
        try:
            write_failed = not _stamp_all(terms, today, results, stamped_files)
        except KeyboardInterrupt:
            if not terminated:
                raise
            print(f"cudagloss links: terminated; stopped after stamping {len(stamped_files)} files", file=sys.stderr)
            return ExitCode.TERMINATED
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
    if write_failed:
        return ExitCode.WRITE
    return ExitCode.FAILED if failed else ExitCode.OK
