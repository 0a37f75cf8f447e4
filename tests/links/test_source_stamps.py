"""The stamps a run writes beside a source (source_stamps.py through stamp.py): the quote's
day, the archived copy, the broken runs in a row; every comment and the author's layout kept,
and a quote not found never stamped."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

pytest.importorskip("ruamel.yaml")

import yaml

from cudagloss.links.source_stamps import UrlStamps, source_plan
from cudagloss.links.stamp import stamp_file

DAY = dt.date(2026, 12, 5)
URL = "https://docs.nvidia.com/cuda/x.html"
QUOTE = "Lazy loading reduces program initialization time"
TERM = f"""\
# A term an author wrote; every comment stays.
name: Lazy loading
sources:
  - id: guide   # the guide
    title: "CUDA Programming Guide: Lazy Loading"
    url: {URL}
    quote: "{QUOTE}"   # the sentence we rest on
  - title: Another page
    url: https://example.com/other
    checked_on: 2026-11-01
byline:
  written_by: pending
"""


def write(tmp_path: Path, text: str, newline: str = "\n") -> Path:
    path = tmp_path / "term.yaml"
    path.write_bytes(text.replace("\n", newline).encode())
    return path


def added(before: str, after: str) -> list[str]:
    """The lines after has that before has not, in order; before's lines must all still be there."""
    old, new = before.splitlines(), after.splitlines()
    assert [line for line in new if line in old] == old, "a line of the author's changed or went"
    return [line for line in new if line not in old]


def test_a_quote_found_is_stamped_beside_the_day_the_url_was_found(tmp_path: Path) -> None:
    path = write(tmp_path, TERM)
    outcome = stamp_file(path, {URL: UrlStamps(reachable_on=DAY, quotes_found=frozenset({QUOTE}))})
    assert outcome.changed and outcome.stamped == 1
    assert added(TERM, path.read_text()) == [
        "    checked_on: 2026-12-05",
        "    quote_checked_on: 2026-12-05",
        "  last_checked_on: 2026-11-01",  # every source has a day now: the byline's is the oldest
    ]


def test_a_quote_missing_is_never_stamped(tmp_path: Path) -> None:
    path = write(tmp_path, TERM)
    stamp_file(path, {URL: UrlStamps(reachable_on=DAY, quotes_found=frozenset({"another quote"}))})
    assert added(TERM, path.read_text()) == ["    checked_on: 2026-12-05", "  last_checked_on: 2026-11-01"]


def test_an_archived_copy_is_written_once(tmp_path: Path) -> None:
    path = write(tmp_path, TERM)
    copy = f"https://web.archive.org/web/20261201000000/{URL}"
    found = UrlStamps(reachable_on=DAY, archived_url=copy, archived_on=dt.date(2026, 12, 1))
    stamp_file(path, {URL: found})
    after = path.read_text()
    assert added(TERM, after) == [
        "    checked_on: 2026-12-05",
        f'    archived_url: "{copy}"',
        "    archived_on: 2026-12-01",
        "  last_checked_on: 2026-11-01",
    ]
    other = UrlStamps(reachable_on=DAY, archived_url=copy + "x", archived_on=DAY)
    stamp_file(path, {URL: other})
    assert path.read_text() == after  # a source that has a copy keeps it


def test_broken_runs_are_counted_and_reset_once_reachable(tmp_path: Path) -> None:
    path = write(tmp_path, TERM, "\r\n")
    for expected in (1, 2, 3):
        stamp_file(path, {URL: UrlStamps(failed=True)})
        data = yaml.safe_load(path.read_text())
        assert data["sources"][0]["failed_checks"] == expected
        assert "checked_on" not in data["sources"][0]
    stamp_file(path, {URL: UrlStamps(reachable_on=DAY)})
    data = yaml.safe_load(path.read_text())
    assert data["sources"][0]["failed_checks"] == 0 and data["sources"][0]["checked_on"] == DAY
    raw = path.read_bytes()
    assert raw.count(b"\r\n") == raw.count(b"\n")  # the file's line breaks kept
    assert b"# the sentence we rest on" in raw


def test_a_run_that_cannot_tell_leaves_the_count_alone(tmp_path: Path) -> None:
    source = {"url": URL, "failed_checks": 2}
    assert source_plan(source, UrlStamps()) == []  # a timeout or a bot wall: neither broken nor reachable


def test_a_stamp_never_moves_back() -> None:
    source = {"url": URL, "quote": QUOTE, "checked_on": DAY, "quote_checked_on": DAY}
    earlier = UrlStamps(reachable_on=DAY - dt.timedelta(days=1), quotes_found=frozenset({QUOTE}))
    assert source_plan(source, earlier) == []


def test_a_count_in_the_file_that_is_not_a_number_starts_again() -> None:
    assert source_plan({"url": URL, "failed_checks": "many"}, UrlStamps(failed=True)) == [("failed_checks", 1)]


@pytest.mark.parametrize("style", [">-", "|", ">", "|-", ""])
def test_a_source_ending_in_a_block_quote_gets_its_stamps_right_after_the_quote(tmp_path: Path, style: str) -> None:
    """A quote written as a block scalar, then a blank line and a comment on what follows:
    the stamps go under the quote, in the source, never below the comment of the next key."""
    text = (
        "name: Lazy loading\nsources:\n  - title: The guide\n"
        f"    url: {URL}\n    quote: {style}\n      Lazy loading reduces\n      program initialization time\n"
        "\n# the byline: who wrote it\nbyline:\n  written_by: Ada\n"
    )
    path = write(tmp_path, text)
    found = UrlStamps(reachable_on=DAY, quotes_found=frozenset({yaml.safe_load(text)["sources"][0]["quote"]}))
    assert stamp_file(path, {URL: found}).changed
    after = path.read_text()
    lines = after.splitlines()
    at = lines.index("      program initialization time")
    assert lines[at + 1 : at + 3] == [f"    checked_on: {DAY}", f"    quote_checked_on: {DAY}"], after
    assert (
        after.replace(f"    checked_on: {DAY}\n    quote_checked_on: {DAY}\n", "").replace(
            f"  last_checked_on: {DAY}\n", ""
        )
        == text
    )
