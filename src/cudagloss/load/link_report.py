"""Read a link check's JSON report (`cudagloss links --format json`) for the pages to cite.

The publish job writes the report in the same run, but it is still a file on disk handed to
us by name: it is parsed as strict JSON, bounded in size, and anything in it that is not the
report's shape is a diagnostic at its line and column, all at once, never half-used.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
from pathlib import Path
from typing import Any, BinaryIO

from cudagloss.check.fields import DATE_SLACK, utc_today
from cudagloss.errors import Diagnostic, GlossaryError, display_path
from cudagloss.files.inside import refuse_read_links
from cudagloss.model.limits import COUNT_MAX, FIRST_DAY
from cudagloss.model.link_checks import QUOTE_RESULTS, REACHABLE, RESULTS, LinkCheck, LinkChecks
from cudagloss.model.report_limits import REPORT_BYTES_MAX, REPORT_VALUES_MAX
from cudagloss.text import strictjson

MAX_BYTES = REPORT_BYTES_MAX
"""What the checker can write for a glossary at its limits (model/report_limits.py); a larger
file is not one it wrote."""
# A report's checked_on from FIRST_DAY (model.limits: no `cudagloss links` run is older) to
# tomorrow in UTC (check.fields.DATE_SLACK) is taken; one outside is refused, not rendered as
# 'checked <that day>' beside every source.
HINT = "pass the file `cudagloss links --format json` printed, unchanged (or leave --link-report out)"


def load_link_report(path: Path) -> LinkChecks:
    """The report's day and each URL's result; GlossaryError naming every problem (one line for
    a link at the file or a folder above it, from the working folder down: refuse_read_links)."""
    shown = display_path(path)

    def problem(offset: int | None, message: str) -> GlossaryError:
        line, col = strictjson.line_col(text, offset) if offset is not None else (1, 1)
        return GlossaryError([Diagnostic(shown, line, col, message, HINT)])

    text = ""
    refuse_read_links(path, None, "the link report")  # a committed link, at the file or above: read from anywhere
    try:
        with path.open("rb") as f:
            size = os.fstat(f.fileno()).st_size  # a regular file's size: refused before a byte is read
            raw = b"" if size > MAX_BYTES else _read_at_most(f, MAX_BYTES)
        if size > MAX_BYTES or len(raw) > MAX_BYTES:
            raise problem(None, f"the link report is larger than {MAX_BYTES:,} bytes, the most the checker writes")
        text = raw.decode("utf-8")
    except OSError as exc:
        raise problem(None, f"cannot read the link report: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise problem(None, f"the link report is not UTF-8 (byte {exc.start})") from None
    try:
        parsed = strictjson.parse(text, max_values=REPORT_VALUES_MAX)
    except strictjson.JsonProblem as exc:
        raise problem(exc.offset, f"not JSON: {exc.message}") from None
    diagnostics: list[Diagnostic] = []

    def bad(at: tuple[strictjson.Key, ...], message: str) -> None:
        line, col = strictjson.line_col(text, parsed.where.offset(at))
        diagnostics.append(Diagnostic(shown, line, col, message, HINT))

    data: Any = parsed.value
    day = None
    if not isinstance(data, dict):
        bad((), "a link report is one JSON object")
        raise GlossaryError(diagnostics)
    with contextlib.suppress(ValueError):
        day = dt.date.fromisoformat(data["checked_on"]) if isinstance(data.get("checked_on"), str) else None
    if day is None:
        bad(("checked_on",), "'checked_on' must be the run's day, YYYY-MM-DD")
    elif day > utc_today() + DATE_SLACK:
        bad(("checked_on",), f"'checked_on' {day} is in the future: a report is of a run that was made")
    elif day < FIRST_DAY:
        bad(("checked_on",), f"'checked_on' {day} is before {FIRST_DAY}, the project's first day: no run is older")
    results = data.get("results")
    by_url: dict[str, LinkCheck] = {}
    if not isinstance(results, list):
        bad(("results",), "'results' must be a list of {url, result}")
        results = []
    for i, entry in enumerate(results):
        url = entry.get("url") if isinstance(entry, dict) else None
        result = entry.get("result") if isinstance(entry, dict) else None
        if not isinstance(url, str) or result not in RESULTS:
            bad(("results", i), f"results[{i}] must have a 'url' string and a 'result' of {', '.join(RESULTS)}")
        else:
            by_url[url] = _check(entry, i, result, bad)
    if diagnostics or day is None:  # a day out of range was said above
        raise GlossaryError(diagnostics)
    return LinkChecks(day, by_url)


def _read_at_most(f: BinaryIO, limit: int) -> bytes:
    """The file's bytes, read a mebibyte at a time and never more than one chunk past limit
    (read(limit + 1) would reserve limit bytes of memory first, however small the file)."""
    chunks: list[bytes] = []
    total = 0
    while total <= limit and (chunk := f.read(1 << 20)):
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def _check(entry: dict[str, Any], i: int, result: str, bad: Any) -> LinkCheck:
    """One URL's entry: its result, and the optional quotes' results, broken runs in a row
    and archived copy that reports since quotes came carry (each checked, else a diagnostic)."""
    quotes: dict[str, str] = {}
    listed = entry.get("quotes", [])
    if not isinstance(listed, list):
        bad(("results", i, "quotes"), f"results[{i}].quotes must be a list of {{quote, result}}")
        listed = []
    for j, q in enumerate(listed):
        text, said = (q.get("quote"), q.get("result")) if isinstance(q, dict) else (None, None)
        if not isinstance(text, str) or said not in QUOTE_RESULTS:
            needs = f"a 'quote' string and a 'result' of {', '.join(QUOTE_RESULTS)}"
            bad(("results", i, "quotes", j), f"results[{i}].quotes[{j}] needs {needs}")
        else:
            quotes[text] = said
    failed = entry.get("failed_checks")
    if failed is not None and (type(failed) is not int or not 0 <= failed <= COUNT_MAX):
        bad(("results", i, "failed_checks"), f"results[{i}].failed_checks must be a whole number from 0")
        failed = None
    elif failed and result in REACHABLE:
        bad(("results", i, "failed_checks"), f"results[{i}].failed_checks must be 0: the URL was found reachable")
        failed = None
    archived = entry.get("archived_url")
    if archived is not None and not isinstance(archived, str):
        bad(("results", i, "archived_url"), f"results[{i}].archived_url must be a URL or null")
        archived = None
    return LinkCheck(result, tuple(quotes.items()), failed, archived)
