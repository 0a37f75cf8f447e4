"""`cudagloss links` end to end: terms citing URLs of a real local server, stamped in place.

Stamp tests compare files byte for byte apart from the stamp lines.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("ruamel.yaml")

import yaml

from conftest import FIXTURES, ROOT, cudagloss
from cudagloss.links.stamp import stamp_file
from localserver import Quiet, running

TODAY = dt.date.today().isoformat()
"""The day the link checker stamps, set again as each test starts (conftest's stamp_day)."""
pytestmark = pytest.mark.usefixtures("stamp_day")


SLOW = threading.Event()
"""Set when the test that asks /slow is done with it: until then /slow answers nothing."""


class Handler(Quiet):
    def do_HEAD(self) -> None:
        if self.path == "/slow":
            SLOW.wait(120)  # held until released; the bound only ends a thread a failed test left
        self.send_response({"/warps": 200, "/unchecked": 404}.get(self.path, 404))
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_HEAD


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with running(Handler) as url:
        yield url


@pytest.fixture
def glossary(tmp_path: Path, server: str) -> Path:
    """The good fixture corpus and its measurements, with warp.yaml's sources on the local server."""
    shutil.copytree(FIXTURES / "good", tmp_path / "terms")
    shutil.copytree(FIXTURES / "good-measurements", tmp_path / "measurements")
    warp = tmp_path / "terms" / "warp.yaml"
    warp.write_text(
        warp.read_text()
        .replace("https://example.com/warps", f"{server}/warps")
        .replace("https://example.com/unchecked", f"{server}/unchecked")
    )
    return tmp_path


def links(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The command as an author runs it; no archive is asked (test_quotes_cli.py asks a local one)."""
    return cudagloss(root, "links", "terms", "--no-archive", *args)


def changed_lines(before: str, after: str) -> list[tuple[str, str]]:
    a, b = before.splitlines(), after.splitlines()
    assert len(a) == len(b), "stamping added or removed lines"
    return [(x, y) for x, y in zip(a, b, strict=True) if x != y]


def test_reachable_sources_are_stamped_and_only_stamp_lines_change(glossary: Path, server: str) -> None:
    warp = glossary / "terms" / "warp.yaml"
    before = warp.read_text()
    run = links(glossary)
    assert run.returncode == 1, run.stderr  # /unchecked answers 404
    line = before.splitlines().index(f"    url: {server}/unchecked") + 1
    assert f"terms/warp.yaml:{line}: [broken] {server}/unchecked (HTTP 404)" in run.stdout
    unchecked = f"    url: {server}/unchecked\n"
    expected = before.replace("    checked_on: 2026-09-01", f"    checked_on: {TODAY}")
    expected = expected.replace(unchecked, unchecked + "    failed_checks: 1\n")  # broken once, counted
    assert warp.read_text() == expected


def test_the_report_file_tells_the_pages_what_this_run_found(glossary: Path, server: str) -> None:
    """The publish job's path: `links --report` stamps and writes the JSON report; `render
    --link-report` reads it, so the page says the source it could not reach is unreachable."""
    run = links(glossary, "--report", "links.json")
    assert run.returncode == 1 and "[broken]" in run.stdout  # the text report still on standard output
    report = json.loads((glossary / "links.json").read_text(encoding="utf-8"))
    assert report["checked_on"] == TODAY and {r["result"] for r in report["results"]} == {"ok", "broken"}
    shutil.copytree(ROOT / "templates", glossary / "templates")  # a folder mkdocs.yml names is in the repository
    (glossary / "mkdocs.yml").write_text("site_name: T\n", encoding="utf-8")
    built = cudagloss(glossary, "render", "--out", "tree", "--link-report", "links.json")
    assert built.returncode == 0, built.stderr
    page = (glossary / "tree" / "docs" / "terms" / "warp.md").read_text(encoding="utf-8")
    assert f"(checked {TODAY})" in page and f"(unreachable when checked on {TODAY})" in page


def test_a_failure_never_removes_or_moves_back_a_stamp(glossary: Path) -> None:
    warp = glossary / "terms" / "warp.yaml"
    text = warp.read_text().replace("/warps", "/now-missing")
    warp.write_text(text)
    links(glossary, "--force")
    after = warp.read_text()
    assert "    checked_on: 2026-09-01" in after  # both sources fail: the stamp stays, each failure counted
    assert [line for line in after.splitlines() if line not in text.splitlines()] == ["    failed_checks: 1"] * 2
    links(glossary, "--force")
    assert warp.read_text() == after.replace("failed_checks: 1", "failed_checks: 2")


def test_recently_checked_urls_are_skipped_unless_forced(glossary: Path) -> None:
    links(glossary)
    again = json.loads(links(glossary, "--format", "json").stdout)
    assert again["skipped_fresh"] >= 1 and all("/warps" not in r["url"] for r in again["results"])
    forced = json.loads(links(glossary, "--format", "json", "--force").stdout)
    assert any(r["url"].endswith("/warps") and r["result"] == "ok" for r in forced["results"])


def test_no_network_changes_nothing_and_exits_4(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "good", tmp_path / "terms")
    shutil.copytree(FIXTURES / "good-measurements", tmp_path / "measurements")
    warp = tmp_path / "terms" / "warp.yaml"
    warp.write_text(warp.read_text().replace("example.com", "example.invalid"))
    before = {p: p.read_bytes() for p in (tmp_path / "terms").iterdir()}
    run = links(tmp_path)
    assert run.returncode == 4 and len(run.stderr.strip().splitlines()) == 1
    assert "no network here" in run.stderr
    assert {p: p.read_bytes() for p in (tmp_path / "terms").iterdir()} == before


def test_byline_last_checked_on_follows_the_oldest_source_stamp(tmp_path: Path) -> None:
    term = tmp_path / "t.yaml"
    text = (
        "# a comment that stays\n"
        "name: t\n"
        "sources:\n"
        '  - title: "One"   # inline comment\n'
        "    url: https://a.example/1\n"
        "    checked_on: 2026-01-01\n"
        "  - title: Two\n"
        "    url: https://a.example/2\n"
        "byline:\n"
        "  written_by: 'Ada'\n"
        "  last_checked_on: pending\n"
    )
    term.write_text(text)
    day = dt.date(2026, 12, 2)
    outcome = stamp_file(term, {"https://a.example/2": day})
    assert outcome.changed and outcome.stamped == 1
    after = term.read_text()
    assert after == text.replace(
        "    url: https://a.example/2\n", "    url: https://a.example/2\n    checked_on: 2026-12-02\n"
    ).replace("  last_checked_on: pending", "  last_checked_on: 2026-01-01")


def test_ctrl_c_keeps_the_stamps_of_checks_that_finished(glossary: Path) -> None:
    """Ctrl-C once one URL is checked (/warps answers at once; /slow is held until the test ends):
    its stamp is kept. The run's stderr is a terminal, so it draws its progress line: the test
    waits until that line says one URL is done, however long that takes, then interrupts."""
    warp = glossary / "terms" / "warp.yaml"
    warp.write_text(warp.read_text().replace("/unchecked", "/slow"))
    before = warp.read_text()
    terminal, its_end = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "cudagloss", "links", "terms", "--no-archive", "--timeout", "600"],
        cwd=glossary,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=its_end,
        text=True,
    )
    os.close(its_end)
    shown = b""
    try:
        deadline = time.monotonic() + 300  # only a hang comes near it
        while not re.search(rb"\] 1/2\b", shown):
            assert proc.poll() is None and time.monotonic() < deadline, shown.decode(errors="replace")
            if select.select([terminal], [], [], 1)[0]:
                shown += os.read(terminal, 4096)
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=300)
        shown += _rest(terminal)
    finally:
        SLOW.set()
        os.close(terminal)
    err = shown.decode(errors="replace")
    assert proc.returncode == 130, err
    assert "interrupted; stamping the 1 URLs checked so far" in err and "Traceback" not in err
    assert changed_lines(before, warp.read_text()) == [("    checked_on: 2026-09-01", f"    checked_on: {TODAY}")]


def _rest(terminal: int) -> bytes:
    """What is left to read from a pseudo-terminal whose other end has closed."""
    rest = b""
    while select.select([terminal], [], [], 0)[0]:
        try:
            chunk = os.read(terminal, 4096)
        except OSError:  # EIO: the writer is gone and everything was read
            break
        if not chunk:
            break
        rest += chunk
    return rest


def test_the_quick_look_skips_only_files_the_round_trip_would_leave_alone(tmp_path: Path) -> None:
    """stamp_file looks at the text before the slow round trip; each case it must not skip."""
    base = (
        "name: t\nsources:\n  - title: One\n    url: https://a.example/1\n{stamp}"
        "byline:\n  written_by: {who}\n  last_checked_on: pending\n"
    )
    term = tmp_path / "t.yaml"
    # Every source stamped, the byline's date still pending: filled without any new check.
    term.write_text(base.format(stamp="    checked_on: 2026-01-01\n", who="Ada"))
    assert stamp_file(term, {}).changed
    assert "last_checked_on: 2026-01-01" in term.read_text()
    # A pending field that history can fill.
    term.write_text(base.format(stamp="", who="pending"))
    assert stamp_file(term, {}, {"written_by": "Ada Author"}).changed
    assert "written_by: Ada Author" in term.read_text()
    # Nothing to do: unchecked source, nothing fillable, no reachable URL of its own.
    text = base.format(stamp="", who="Ada")
    term.write_text(text)
    assert not stamp_file(term, {"https://other.example/": dt.date(2026, 12, 2)}, {"written_by": "X"}).changed
    assert term.read_text() == text


def test_in_place_stamps_match_the_round_trip_on_every_term_file(tmp_path: Path) -> None:
    """Both ways of editing make the same decisions and, where both can, the same lines
    (up to how a name is quoted)."""
    from cudagloss.links import stamp

    files = sorted((ROOT / "terms").glob("*.yaml")) + sorted((FIXTURES / "good").glob("*.yaml"))
    compared = 0
    for source in files:
        text = source.read_text(encoding="utf-8")
        urls = re.findall(r"url:\s*(\S+)", text)
        reachable = {url: dt.date(2027, 1, 2) for url in urls}
        fill = {"written_by": "Zoë O'Brien", "written_on": dt.date(2026, 1, 5), "reviewed_by": "R: Reviewer"}
        in_place = stamp._in_place(text, reachable, fill)
        assert in_place is not None, source  # every file here has its stamp keys in place
        by_trip, trip_stamped, problem = stamp._round_trip(text, reachable, fill)
        if problem or by_trip is None:
            continue
        assert yaml.safe_load(in_place[0]) == yaml.safe_load(by_trip), source
        differ = [(x, y) for x, y in zip(in_place[0].splitlines(), by_trip.splitlines(), strict=True) if x != y]
        assert all(x.split(":")[0].strip() in ("written_by", "reviewed_by") for x, _ in differ), differ  # quoting
        assert in_place[1] == trip_stamped
        compared += 1
    assert compared >= 5


def test_in_place_stamps_keep_comments_and_quote_what_needs_it(tmp_path: Path) -> None:
    term = tmp_path / "t.yaml"
    text = (
        "sources:\n"
        "  - title: One\n"
        "    url: 'https://a.example/1'\n"
        "    checked_on: '2026-01-01'  # quoted\n"
        "byline:\n"
        "  written_by: 'pending'   # who wrote it\n"
        '  reviewed_by: "pending"\n'
        "  last_checked_on: pending\n"
    )
    term.write_text(text)
    outcome = stamp_file(term, {"https://a.example/1": dt.date(2026, 12, 2)}, {"written_by": "Zoë: Müller"})
    assert outcome.changed and outcome.stamped == 1
    assert term.read_text() == (
        "sources:\n"
        "  - title: One\n"
        "    url: 'https://a.example/1'\n"
        "    checked_on: 2026-12-02  # quoted\n"
        "byline:\n"
        '  written_by: "Zoë: Müller"   # who wrote it\n'
        '  reviewed_by: "pending"\n'
        "  last_checked_on: 2026-12-02\n"
    )
