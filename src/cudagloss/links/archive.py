"""Archive stage of `cudagloss links`: an archived copy of each source, asked for once.

NVIDIA moves and rewrites its guides; a source that dies should still be readable as it was
when we cited it. The first time a run finds a source reachable, it asks an archive for the
snapshot closest to that day (the Wayback Machine's availability API by default:
`https://archive.org/wayback/available?url=...&timestamp=YYYYMMDD`), and the stamp stage writes
`archived_url:` and `archived_on:` beside the source. A source that has a snapshot is never
asked about again. The site renders Robust Links attributes from them, and links the copy in
place of a URL broken for several runs (model.link_checks.ARCHIVE_AFTER).

Polite and bounded: one request at a time, each URL asked once per run (a cache), the
lookups stop after GIVE_UP_AFTER failures in a row (the archive is down or slow: the next run
asks again), and every request goes through the link checker's own client and policy (no
private address, no credential, redirects checked, a deadline, the body capped at MAX_ANSWER).

The answer is as hostile as any page: strict JSON, and a snapshot is taken only where it is
available with status 200, its URL is on the archive's own host with the form
`/web/<14-digit timestamp>/<original>`, the original is the page we asked about (the archive
may answer for another), and its date is a real one from EARLIEST to tomorrow; a key given twice
refuses the answer, and a fragment of the archive's choosing is dropped.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from cudagloss.links.status import Page
from cudagloss.model.addresses import url_host_problem
from cudagloss.model.limits import URL_MAX
from cudagloss.model.urls import url_problem
from cudagloss.text.strictjson import JsonProblem, parse

if TYPE_CHECKING:
    from cudagloss.links.checker import LinkChecker

DEFAULT_API = "https://archive.org/wayback/available"
SNAPSHOT_HOSTS = frozenset({"web.archive.org"})
"""Where the Wayback Machine's snapshots are; the configured API's own host is allowed too."""
SNAPSHOT_STATUSES = frozenset({"200", "301", "302", "303", "307", "308"})
"""A page, or a redirect (a source that moved): the archive replays it to the page it led to."""
EARLIEST = dt.date(1996, 1, 1)
"""The Wayback Machine's first crawls are of 1996: a snapshot dated before (19000101, 00010101)
is not one, and would be stamped as the day the archived copy was taken."""
MAX_ANSWER = 64 * 1024
GIVE_UP_AFTER = 3
_SNAPSHOT_PATH = re.compile(r"/web/([0-9]{14})/(https?://.+)", re.S)


@dataclass(frozen=True)
class Snapshot:
    """An archived copy of a source: where it is, and the day it was taken."""

    url: str
    day: dt.date


@dataclass
class ArchiveRun:
    """What asking the archive found: snapshots by source URL, and why any was not taken."""

    found: dict[str, Snapshot]
    problems: dict[str, str]
    stopped: str = ""
    """Why the lookups stopped early ('' when every URL was asked)."""


def query_url(api: str, url: str, day: dt.date) -> str:
    """The availability API's address for url, asking for the snapshot closest to day."""
    return f"{api}?url={quote(url, safe='')}&timestamp={day:%Y%m%d}"


async def find_snapshots(checker: LinkChecker, urls: Iterable[str], day: dt.date, api: str = DEFAULT_API) -> ArchiveRun:
    """Ask the archive about each URL in turn (each once), through checker; never raises."""
    run = ArchiveRun({}, {})
    failures = 0
    for url in dict.fromkeys(urls):
        result = await checker.check(query_url(api, url, day), page=True)
        if result.page is None:
            run.problems[url] = f"the archive did not answer ({result.status.value}: {result.detail})"
            failures += 1
            if failures >= GIVE_UP_AFTER:
                run.stopped = f"the archive failed {failures} times in a row; the rest are asked next run"
                break
            continue
        failures = 0
        answer = read_answer(result.page, url, api, day)
        if isinstance(answer, Snapshot):
            run.found[url] = answer
        else:
            run.problems[url] = answer
    return run


def read_answer(page: Page, asked: str, api: str, today: dt.date) -> Snapshot | str:
    """The snapshot the archive's answer names for asked, or why none is taken."""
    if page.truncated or len(page.body) > MAX_ANSWER:
        return f"the archive's answer is over {MAX_ANSWER // 1024} KiB"
    try:
        parsed = parse(page.body.decode("utf-8"), max_depth=8, max_values=1000)
    except (UnicodeDecodeError, JsonProblem):
        return "the archive's answer is not JSON"
    if parsed.duplicates:  # which of the two counts depends on the parser: neither does
        return "the archive's answer is not JSON (a key given twice)"
    data: Any = parsed.value
    snapshots = data.get("archived_snapshots") if isinstance(data, dict) else None
    closest = snapshots.get("closest") if isinstance(snapshots, dict) else None
    if not isinstance(closest, dict) or closest == {}:
        return "the archive has no snapshot of it"
    if closest.get("available") is not True or str(closest.get("status")) not in SNAPSHOT_STATUSES:
        return "the archive's closest snapshot is not an available page (status 200, or a redirect it replays)"
    where = closest.get("url")
    if not isinstance(where, str) or len(where) > URL_MAX:
        return "the archive's answer has no snapshot URL"
    return snapshot(where, asked, api, today)


def snapshot(where: str, asked: str, api: str, today: dt.date) -> Snapshot | str:
    """where as a Snapshot of asked, if it is one: on the archive's host, of that page, dated."""
    try:
        parts = urlsplit(where)
        host = (parts.hostname or "").lower()
    except ValueError:
        return "the snapshot URL is not a URL"
    allowed = SNAPSHOT_HOSTS | {(urlsplit(api).hostname or "").lower()}
    if parts.scheme not in ("http", "https") or host not in allowed or parts.username or parts.password:
        return "the snapshot is not on the archive's own host"
    m = _SNAPSHOT_PATH.fullmatch(parts.path + (f"?{parts.query}" if parts.query else ""))
    if m is None:
        return "the snapshot URL is not of the form /web/<timestamp>/<url>"
    if not same_page(m.group(2), asked):
        return "the archive answered with a snapshot of another page"
    try:
        taken = dt.datetime.strptime(m.group(1), "%Y%m%d%H%M%S").date()
    except ValueError:
        return "the snapshot's timestamp is not a real date"
    if taken > today + dt.timedelta(days=1):
        return "the snapshot's date is in the future"
    if taken < EARLIEST:
        return f"the snapshot's date is before {EARLIEST:%Y}, when the archive began"
    parts = parts._replace(fragment="")  # the archive's, not the page's: the quote's text fragment goes there
    where = (parts._replace(scheme="https", netloc=host) if host in SNAPSHOT_HOSTS else parts).geturl()
    problem = url_problem(where) or url_host_problem(where)
    if problem is not None:
        return f"the snapshot URL cannot be cited ({problem})"
    return Snapshot(where, taken)


def same_page(original: str, asked: str) -> bool:
    """Whether the archive's original is the page asked about, as the Wayback Machine
    canonicalises: scheme, a leading 'www.', default ports and a trailing slash aside."""
    mine, theirs = _canonical(asked), _canonical(original)
    return mine is not None and mine == theirs


def _canonical(url: str) -> tuple[str, str, str] | None:
    try:
        parts = urlsplit(url.strip())
        host = (parts.hostname or "").lower().removeprefix("www.")
        port = parts.port
    except ValueError:
        return None
    if parts.username is not None or parts.password is not None:
        return None  # a source never carries credentials (make check), so this is not ours
    if port not in (None, 80, 443):
        host = f"{host}:{port}"
    return host, parts.path.rstrip("/") or "/", parts.query
