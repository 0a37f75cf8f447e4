"""The archive stage against a fake availability API on 127.0.0.1: a good answer, none,
garbage, a lie (a snapshot of another page, or on another host), a date in the future, an
answer too large, and one that never comes; and that the lookups are polite (one at a time,
each URL once, stopping after failures in a row)."""

from __future__ import annotations

import asyncio
import datetime as dt
import gzip
import json
import threading
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import pytest

from cudagloss.links.archive import (
    GIVE_UP_AFTER,
    ArchiveRun,
    Snapshot,
    find_snapshots,
    query_url,
    read_answer,
    same_page,
)
from cudagloss.links.checker import CheckerOptions, LinkChecker
from cudagloss.links.status import Page
from hostile_http import HostileServer, raw, response, trickle
from localserver import Quiet, running

TODAY = dt.date(2026, 12, 5)
RELEASE = threading.Event()
ASKED: list[str] = []
IN_FLIGHT = [0, 0]
"""Requests being answered now, and the most at once."""
LOCK = threading.Lock()


def wayback(url: str, stamp: str = "20261201093000", host: str = "web.archive.org") -> str:
    return f"http://{host}/web/{stamp}/{url}"


class Archive(Quiet):
    """/MODE/wayback/available?url=...&timestamp=...: answers as MODE says."""

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        mode = parts.path.split("/")[1]
        asked = parse_qs(parts.query).get("url", [""])[0]
        with LOCK:
            ASKED.append(asked)
            IN_FLIGHT[0] += 1
            IN_FLIGHT[1] = max(IN_FLIGHT)
        try:
            body = self.answer(mode, asked)
        finally:
            with LOCK:
                IN_FLIGHT[0] -= 1
        if body is None:
            self.send_response(503)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def answer(self, mode: str, asked: str) -> bytes | None:
        closest = {"status": "200", "available": True, "url": wayback(asked), "timestamp": "20261201093000"}
        if mode == "slow":
            RELEASE.wait(60)  # held until the test releases it
            return None
        if mode == "down":
            return None
        if mode == "none":
            return b'{"url": "x", "archived_snapshots": {}}'
        if mode == "garbage":
            return b"<html>not json{"
        if mode == "lies":
            closest["url"] = wayback("https://evil.example/other")
        elif mode == "elsewhere":
            closest["url"] = wayback(asked, host="evil.example")
        elif mode == "future":
            closest["url"] = wayback(asked, stamp="29990101000000")
        elif mode == "first-day":
            closest["url"] = wayback(asked, stamp="19960101000000")
        elif mode == "ancient":
            closest["url"] = wayback(asked, stamp="19000101000000")
        elif mode == "year-one":
            closest["url"] = wayback(asked, stamp="00010101000000")
        elif mode == "huge":
            return b'{"pad": "' + b"x" * (200 * 1024) + b'"}'
        elif mode == "nan":
            return b'{"archived_snapshots": {"closest": {"available": true, "status": NaN}}}'
        return json.dumps({"url": asked, "archived_snapshots": {"closest": closest}}).encode()


@pytest.fixture(scope="module")
def archive() -> Iterator[str]:
    with running(Archive) as url:
        yield url


def ask(api: str, urls: list[str], timeout: float = 10.0) -> ArchiveRun:
    async def go() -> ArchiveRun:
        async with LinkChecker(CheckerOptions(total_timeout=timeout, retries=0)) as checker:
            return await find_snapshots(checker, urls, TODAY, api)

    return asyncio.run(go())


PAGE = "https://docs.nvidia.com/cuda/cuda-programming-guide/index.html"


def test_a_good_answer_is_a_snapshot_on_https(archive: str) -> None:
    run = ask(f"{archive}/good/wayback/available", [PAGE])
    assert run.found == {PAGE: Snapshot(f"https://web.archive.org/web/20261201093000/{PAGE}", dt.date(2026, 12, 1))}
    assert run.problems == {} and run.stopped == ""


@pytest.mark.parametrize(
    ("mode", "why"),
    [
        ("none", "no snapshot"),
        ("garbage", "not JSON"),
        ("nan", "not JSON"),
        ("lies", "another page"),
        ("elsewhere", "archive's own host"),
        ("future", "future"),
        ("ancient", "before 1996, when the archive began"),
        ("year-one", "before 1996, when the archive began"),
        ("huge", "KiB"),
    ],
)
def test_an_answer_that_is_not_a_snapshot_of_the_page_is_refused(archive: str, mode: str, why: str) -> None:
    run = ask(f"{archive}/{mode}/wayback/available", [PAGE])
    assert run.found == {}
    assert why in run.problems[PAGE]


def test_the_archives_first_day_is_a_snapshot(archive: str) -> None:
    run = ask(f"{archive}/first-day/wayback/available", [PAGE])
    assert run.found == {PAGE: Snapshot(f"https://web.archive.org/web/19960101000000/{PAGE}", dt.date(1996, 1, 1))}


def test_an_archive_that_never_answers_is_bounded_and_stops_after_failures_in_a_row(archive: str) -> None:
    RELEASE.clear()
    urls = [f"https://example.com/{i}" for i in range(GIVE_UP_AFTER + 3)]
    try:
        run = ask(f"{archive}/slow/wayback/available", urls, timeout=0.5)
    finally:
        RELEASE.set()
    assert run.found == {}
    assert len(run.problems) == GIVE_UP_AFTER  # the rest were not asked
    assert "in a row" in run.stopped
    assert all("timeout" in p for p in run.problems.values())


def test_lookups_are_one_at_a_time_and_each_url_once(archive: str) -> None:
    ASKED.clear()
    IN_FLIGHT[1] = 0
    urls = [f"https://example.com/page/{i}" for i in range(6)]
    run = ask(f"{archive}/good/wayback/available", urls + urls)
    assert sorted(run.found) == sorted(urls)
    assert sorted(ASKED) == sorted(urls)  # each once, though asked twice
    assert IN_FLIGHT[1] == 1


def test_a_failure_between_successes_does_not_stop_the_lookups(archive: str) -> None:
    run = ask(f"{archive}/down/wayback/available", ["https://example.com/a"])
    assert "did not answer" in run.problems["https://example.com/a"]
    assert run.stopped == ""


def test_the_query_encodes_the_whole_url() -> None:
    asked = "https://example.com/a b?x=1&y=2#frag"
    query = parse_qs(urlsplit(query_url("https://archive.org/wayback/available", asked, TODAY)).query)
    assert query == {"url": [asked], "timestamp": ["20261205"]}


@pytest.mark.parametrize(
    ("original", "same"),
    [
        ("http://www.docs.nvidia.com:80/cuda/x/", True),
        ("https://docs.nvidia.com/cuda/x", True),
        ("https://docs.nvidia.com/cuda/x?y=1", False),
        ("https://docs.nvidia.com/cuda/y", False),
        ("https://docs.nvidia.com.evil.example/cuda/x", False),
        ("https://docs.nvidia.com:8443/cuda/x", False),
        ("http://[::1", False),
    ],
)
def test_same_page_as_the_archive_canonicalises(original: str, same: bool) -> None:
    assert same_page(original, "https://docs.nvidia.com/cuda/x") is same


def test_a_snapshot_url_with_credentials_or_another_scheme_is_refused() -> None:
    for where in (f"http://user:pw@web.archive.org/web/20261201000000/{PAGE}", f"ftp://web.archive.org/web/1/{PAGE}"):
        body = json.dumps({"archived_snapshots": {"closest": {"available": True, "status": "200", "url": where}}})
        page = Page("https://archive.org/wayback/available", "application/json", None, body.encode(), False)
        assert not isinstance(read_answer(page, PAGE, "https://archive.org/wayback/available", TODAY), Snapshot)


def answer(where: str, extra: str = "") -> Page:
    closest = json.dumps({"available": True, "status": "200", "url": where})
    body = f'{{"archived_snapshots": {{"closest": {closest}{extra}}}}}'.encode()
    return Page("https://archive.org/wayback/available", "application/json", None, body, False)


def test_a_snapshot_url_keeps_no_fragment_of_the_archives_choosing() -> None:
    """A fragment is the archive's, not the page's: it would stand in for the quote's text
    fragment (a link already holding :~: gets none) or carry markup into the stamp."""
    for fragment in ("#:~:text=not%20what%20we%20quote", '#"><script>alert(1)</script>'):
        got = read_answer(answer(wayback(PAGE) + fragment), PAGE, "https://archive.org/wayback/available", TODAY)
        assert got == Snapshot(f"https://web.archive.org/web/20261201093000/{PAGE}", dt.date(2026, 12, 1))


def test_a_snapshot_of_the_page_with_credentials_is_not_of_the_page() -> None:
    where = wayback("https://user:pw@docs.nvidia.com/cuda/cuda-programming-guide/index.html")
    got = read_answer(answer(where), PAGE, "https://archive.org/wayback/available", TODAY)
    assert got == "the archive answered with a snapshot of another page"


def test_an_answer_that_says_a_key_twice_is_refused() -> None:
    """Which of two 'closest' counts depends on the parser: neither is taken."""
    got = read_answer(answer(wayback(PAGE), ', "closest": {}'), PAGE, "https://archive.org/wayback/available", TODAY)
    assert got == "the archive's answer is not JSON (a key given twice)"


def test_hostile_archives_give_a_reason_never_a_snapshot_nor_a_hang() -> None:
    """A body that drips forever, a gzip bomb, JSON nested past its bound, and a redirect into
    this machine: each is a problem named for its URL, within the run's deadline."""
    api = "/wayback/available"
    pages = [f"https://example.com/{i}" for i in range(4)]
    bomb = gzip.compress(b'{"archived_snapshots": {"closest": {"pad": "' + b" " * (64 << 20) + b'"}}}')
    ok = {"Content-Type": "application/json"}
    scripts = [
        trickle(response(200, {**ok, "Content-Length": str(1 << 20)}) + b"{", b" "),
        raw(response(200, {**ok, "Content-Encoding": "gzip"}, bomb)),
        raw(response(200, ok, b'{"a":' * 200 + b"1" + b"}" * 200)),
        raw(response(302, {"Location": "http://127.0.0.2:9/"})),
    ]
    with HostileServer({}) as server:
        for page, script in zip(pages, scripts, strict=True):
            server.routes[query_url(api, page, TODAY)] = script
        run = ask(server.url + api, pages, timeout=1.0)
    assert run.found == {} and run.stopped == ""
    assert "timeout" in run.problems[pages[0]]
    assert run.problems[pages[1]] == "the archive's answer is over 64 KiB"
    assert run.problems[pages[2]] == "the archive's answer is not JSON"
    assert "loopback" in run.problems[pages[3]]
