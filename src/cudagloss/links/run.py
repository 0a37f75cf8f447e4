"""The run of `cudagloss links`: plan -> check (-> quotes -> archive) -> stamp -> report.

    plan    plan.py: the terms read (not judged), every source URL and where it is cited,
            which are checked this run (the others were found reachable within --max-age days)
    check   here, over checker.py: each URL of the plan checked once, after asking whether
            there is a network at all (network.py); a URL whose sources carry a quote is read
            whole and each quote looked for in its visible text (quotes.py, page_text.py;
            the stylesheets it links fetched where a quote's being seen waits on them,
            stylesheets.py);
            then the archive is asked for a copy of each URL found reachable that has none
            yet (archive.py; --no-archive, --archive-api). What was found: findings.py
    stamp   stamp_folder.py (stamp.py for one file; source_stamps.py decides each source's
            fields): each URL found reachable stamped with today's date, each quote found
            with it, archived copies and broken runs in a row written, and pending byline
            fields filled from git history
    report  report.py: the results in the chosen format, on standard output

Its exit statuses (ExitCode): OK nothing broken; FAILED something broken or invalid;
OFFLINE no network here: nothing is reported broken and no file changes (whether there is
a network is asked before any check, on a clock of its own, network.py, so --timeout cannot
turn "offline" into timeouts; a run whose every lookup failed is offline too); WRITE a term
file could not be written (disk full, no permission): one line says which and why, the
report is still printed, and no file is left half-written; INTERRUPTED (Ctrl-C): the URLs
checked by then are stamped, each file written whole; TERMINATED (SIGTERM): stops at once,
between two files, stamping nothing more. Terms that cannot be read, or a source the checker
may not ask for, raise GlossaryError from the plan (USAGE at the command line); a claim that
fails or a stale measurement is no concern of this run (`make check` says so). The command
itself, its options and its SIGTERM handler, is cudagloss.commands.links.

Stamping never loses an author's byte: see stamp.py (compare-and-swap, line breaks) and
atomic.py (modes, links, read-only files, temporaries, signals); stamp_folder.py walks the
folder, as `cudagloss byline` does without checking anything.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import sys
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from cudagloss.errors import ExitCode, shown
from cudagloss.files.atomic import write_text_atomic
from cudagloss.links.archive import DEFAULT_API, find_snapshots
from cudagloss.links.checker import CheckerOptions, LinkChecker
from cudagloss.links.findings import Findings
from cudagloss.links.html_css import IMPORT_DEPTH, STYLE_MAX, CssFile
from cudagloss.links.network import PROBE_SECONDS, network_answers
from cudagloss.links.plan import LinkPlan, plan
from cudagloss.links.quotes import QuoteResult, QuoteStatus, judge_page
from cudagloss.links.report import FORMATS, LinkReport, as_json
from cudagloss.links.source_stamps import UrlStamps
from cudagloss.links.stamp_folder import FolderStamps, histories, stamp_folder
from cudagloss.links.status import LinkResult, Page, looks_offline
from cudagloss.links.stylesheets import Stylesheets
from cudagloss.model.project import Project

PROG = "cudagloss links"


def _progress(done: int, total: int) -> None:
    if sys.stderr.isatty():
        width = 30
        filled = width * done // max(total, 1)
        print(f"\r  [{'#' * filled}{'.' * (width - filled)}] {done}/{total}", end="", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Asked:
    """What the check stage is asked to do beyond each URL's result."""

    plan: LinkPlan
    """The quotes each URL carries (its page is read whole and each looked for), and which URLs
    already have an archived copy (asked about no more)."""
    archive_api: str | None
    """The archive's availability API (None: --no-archive)."""


async def _check(urls: list[str], options: CheckerOptions, found: Findings, asked: Asked | None) -> None:
    """Check urls into found as each finishes, so an interrupted run keeps what it found. A
    page's quotes are judged on a worker thread (parsing a guide of a few MiB takes a while),
    not on the loop that waits for the other URLs, and each judgement lands in found as soon
    as it is done (an interrupted run stamps the quotes judged by then, and judges no more)."""
    quotes = asked.plan.quotes if asked is not None else {}
    pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="cudagloss-quotes")
    judging: list[asyncio.Future[None]] = []
    try:
        async with LinkChecker(options) as checker:
            sheets = Stylesheets(
                lambda url, local: checker.check(url, page=True, cap=STYLE_MAX, inward=local), options.total_timeout
            )

            def done(url: str, result: LinkResult) -> None:
                cited = quotes.get(url)
                if cited and result.status.reachable:  # no page (a coding we cannot undo): unverifiable
                    judging.append(asyncio.ensure_future(_judge_page(found, url, result.page, cited, pool, sheets)))
                found.results[url] = replace(result, page=None)
                _progress(len(found.results), len(urls))

            try:
                await checker.check_all(urls, done, pages=quotes)
                for future in judging:
                    await future
            finally:
                for future in judging:
                    future.cancel()
                await sheets.close()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # (a judgement under way ends in about a second)
    if urls and sys.stderr.isatty():
        print(file=sys.stderr)
    if asked is not None and asked.archive_api is not None:
        reachable = [u for u, r in found.results.items() if r.status.reachable and not r.soft_404]
        todo = [u for u in reachable if asked.plan.unarchived(u)]
        if todo:  # no retries: a busy archive is asked again next run, not hammered now
            async with LinkChecker(replace(options, retries=0)) as archive:
                found.archive = await find_snapshots(archive, todo, dt.date.today(), asked.archive_api)


async def _judge_page(
    found: Findings, url: str, page: Page | None, quotes: list[str], pool: ThreadPoolExecutor, sheets: Stylesheets
) -> None:
    """Judge url's quotes into found, on a worker thread; where whether a reader sees one waits
    on the page's stylesheets, they are fetched (within the page's time budget) and it is
    judged again, once more for what they @import (html_css.IMPORT_DEPTH)."""
    loop = asyncio.get_running_loop()
    files: dict[str, CssFile] = {}
    deadline = loop.time() + sheets.budget
    for level in range(IMPORT_DEPTH + 1):
        found.quotes[url], wanted = await loop.run_in_executor(pool, _judge, page, quotes, files)
        if not wanted or page is None or level == IMPORT_DEPTH:
            return
        files.update(await sheets.fetch(wanted, page.local, deadline))


def _judge(
    page: Page | None, quotes: list[str], files: dict[str, CssFile]
) -> tuple[dict[str, QuoteResult], tuple[str, ...]]:
    """url's quotes judged (on a worker thread). Whatever a page holds, one page's trouble is
    that page's verdict: an error here makes its quotes unverifiable, not the run fail."""
    try:
        return judge_page(page, quotes, files)
    except Exception as exc:  # the last line, as LinkChecker.check's
        why = shown(f"its text could not be read ({type(exc).__name__})")
        return {q: QuoteResult(QuoteStatus.UNVERIFIABLE, why) for q in quotes}, ()


def check(todo: list[str], timeout: float, found: Findings, asked: Asked | None = None) -> None:
    """The check stage: each URL of todo checked once, into found as each finishes (so
    that a KeyboardInterrupt, which it lets through, leaves what was found); asked: the
    plan's quotes judged and its archive asked (None: neither)."""
    asyncio.run(_check(todo, CheckerOptions(total_timeout=timeout), found, asked))


def stamp_checked(terms: Path, reachable: Mapping[str, dt.date | UrlStamps], done: FolderStamps) -> None:
    """The stamp stage: reachable URLs stamped into every term file citing them, and pending
    byline fields filled from git history (left pending, with one line, when there is none
    to trust), into done."""
    history, why_not = histories(terms)
    if why_not:
        print(f"{PROG}: bylines left pending: {why_not}", file=sys.stderr)
    stamp_folder(terms, reachable, history, PROG, done)


def _offline(why: str) -> ExitCode:
    print(f"{PROG}: no network here ({why}); nothing was checked or changed", file=sys.stderr)
    return ExitCode.OFFLINE


def run(
    project: Project,
    *,
    max_age: float,
    force: bool,
    form: str,
    stamp: bool,
    timeout: float,
    terminated: list[int],
    report_file: Path | None = None,
    archive_api: str | None = DEFAULT_API,
) -> ExitCode:
    """Check the URLs of terms not found reachable within max_age days (all of them when
    force), print the report in form (a key of report.FORMATS), and stamp the term files
    unless told not to; terminated is non-empty once SIGTERM came (its handler raises
    KeyboardInterrupt). report_file: where the JSON report is also written (atomically), for
    `render --link-report`, whatever form standard output takes; archive_api: where archived
    copies are asked for (None: not at all)."""
    planned = plan(project.terms_dir, project.root, today=dt.date.today(), max_age=max_age, force=force)
    todo = planned.todo
    if todo and not network_answers(todo):
        return _offline(f"none of the hosts of {len(todo)} URLs answered within {PROBE_SECONDS:g} s")
    found = Findings()
    results = found.results
    interrupted = False
    try:
        check(todo, timeout, found, Asked(planned, archive_api))
    except KeyboardInterrupt:
        if terminated:
            print(f"\n{PROG}: terminated; nothing was stamped", file=sys.stderr)
            return ExitCode.TERMINATED
        interrupted = True
        print(f"\n{PROG}: interrupted; stamping the {len(results)} URLs checked so far", file=sys.stderr)
    if looks_offline(results):
        return _offline(f"every one of {len(results)} DNS lookups failed")
    done = FolderStamps()
    if stamp:
        try:
            stamp_checked(project.terms_dir, found.stamps(planned.today), done)
        except KeyboardInterrupt:
            if not terminated:
                raise
            print(f"{PROG}: terminated; stopped after stamping {len(done.changed)} files", file=sys.stderr)
            return ExitCode.TERMINATED
    report = LinkReport(planned, results, done.changed, found)
    print(FORMATS[form](report))
    if report_file is not None:  # a failed write is the boundary's one line, exit 5
        write_text_atomic(report_file, as_json(report) + "\n")
    if interrupted:
        return ExitCode.INTERRUPTED
    if done.write_failed:
        return ExitCode.WRITE
    return ExitCode.FAILED if report.failed else ExitCode.OK
