"""Stamp stage of the link checker: write what a run found of each source into its term.

This is the one place a machine edits a file people write. It decides what to set (_plan;
each source's fields by source_stamps.py: the day found reachable, the quote found, the
archived copy, the broken runs in a row),
writes it over the old values' characters where it can (yamledit.py), else through a
round-trip YAML library (ruamel.yaml), and then proves that only stamp lines changed: if
the edited file differs from the author's anywhere else (an indentation style the dumper
would normalise, say), the file is left as it was and the problem reported. A stamp never
moves back, and the write is atomic and a compare-and-swap (files/atomic.py): an edit an
author saves meanwhile is never overwritten.
"""

from __future__ import annotations

import datetime as dt
import difflib
import io
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from cudagloss.files import linebreaks
from cudagloss.files.atomic import Changed, ReadOnly, read_snapshot, write_text_atomic
from cudagloss.links import yamledit
from cudagloss.links.source_stamps import KEYS as SOURCE_KEYS
from cudagloss.links.source_stamps import UrlStamps, as_date, source_plan
from cudagloss.links.yamledit import Plan

Found = Mapping[str, "dt.date | UrlStamps"]
"""What a run found, by URL: a bare date (found reachable that day) or everything (UrlStamps)."""

STAMP_KEYS = (*SOURCE_KEYS, "last_checked_on", "written_by", "written_on", "reviewed_by")
BYLINE_FROM_HISTORY = ("written_by", "written_on", "reviewed_by")
_INDENTS = ((2, 4, 2), (2, 2, 0), (4, 4, 2), (4, 6, 4))


@dataclass(frozen=True)
class StampOutcome:
    path: Path
    changed: bool
    stamped: int = 0
    problem: str = ""


def _yaml(mapping: int, sequence: int, offset: int) -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 1 << 16
    yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
    return yaml


def _dump(yaml: Any, data: Any) -> str:
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()


def _only_stamps_changed(before: str, after: str) -> bool:
    for line in difflib.ndiff(before.splitlines(), after.splitlines()):
        if line[:2] in ("+ ", "- ") and line[2:].strip().split(":", 1)[0] not in STAMP_KEYS:
            return False
    return True


def _fresh(day: dt.date) -> dt.date:
    """A new date object: the dumper writes one object used twice as an anchor and an alias,
    which term files do not allow."""
    return dt.date.fromordinal(day.toordinal())


def _may_change(text: str, reachable: Found, fill: Mapping[str, object] | None) -> bool:
    """A cheap look at the text before the (slow) round trip: could anything be stamped?
    Only if a reachable URL is in it, a fillable byline field or last_checked_on is still
    pending. When this says no, the round trip would change nothing either."""
    pending = {m.group(1) for m in _PENDING_LINE.finditer(text)}
    if any(url in text for url in reachable):
        return True
    if "last_checked_on" in pending and len(_DATED.findall(text)) >= len(_URL.findall(text)) > 0:
        return True  # every source is stamped, so the byline's date can be filled
    return any(key in pending and value is not None for key, value in (fill or {}).items())


_URL = re.compile(r"^\s*(?:-\s+)?url:", re.MULTILINE)
_DATED = re.compile(r"^\s*(?:-\s+)?checked_on:\s*['\"]?\d{4}-\d{2}-\d{2}", re.MULTILINE)
_PENDING_LINE = re.compile(r"^\s+(\w+):\s*['\"]?pending['\"]?\s*(?:#.*)?$", re.MULTILINE)


def _plan(data: Any, reachable: Found, fill: Mapping[str, object] | None) -> Plan:
    """The stamps to write into a term's data (plain or round-trip): the one place that
    decides, whichever way the file is then edited."""
    plan: Plan = []
    if not isinstance(data, Mapping):
        return plan
    dates: list[dt.date | None] = []
    sources = data.get("sources") or []
    for i, source in enumerate(sources if isinstance(sources, list) else []):
        if not isinstance(source, Mapping):
            return []
        found = reachable.get(str(source.get("url", "")))
        changes = [] if found is None else source_plan(source, found)
        plan += [(("sources", i, key), value) for key, value in changes]
        dates.append(as_date(dict(changes).get("checked_on", source.get("checked_on"))))
    byline = data.get("byline")
    if not isinstance(byline, Mapping):
        return plan
    if dates and all(dates):
        oldest = min(d for d in dates if d is not None)
        current = as_date(byline.get("last_checked_on"))
        if current is None or oldest > current:
            plan.append((("byline", "last_checked_on"), oldest))
    for key, value in (fill or {}).items():
        if value is not None and key in BYLINE_FROM_HISTORY and byline.get(key) == "pending":
            plan.append((("byline", key), value))
    return plan


def stamp_file(
    path: Path, reachable: Found, byline_fill: Mapping[str, str | dt.date | None] | None = None
) -> StampOutcome:
    """Stamp every source whose URL is in reachable (URL -> the day found reachable, or all a run
    found of it: source_stamps.py says what is written), never moving a stamp back; then
    byline.last_checked_on to the oldest source stamp, once every source has one; and byline
    fields still 'pending' from byline_fill (git history).
    A byline field an author set is never overwritten.

    Where every stamp replaces a value already in the file, the new values are written
    over the old ones' characters (found by the YAML parser) and the result is parsed again
    to prove it holds exactly the planned data; otherwise (a key to add, a layout the check
    refuses) the edit goes through the round-trip library.

    The write is a compare-and-swap: if the file changed after it was read (an author saved
    it), the stamps are planned again on the new text, and after a few tries the file is
    left as the author saved it. Line breaks (CRLF, LF, mixed) stay as they were; a
    read-only file is reported, not written; a disk that is full raises WriteFailed."""
    for _ in range(_ATTEMPTS):
        try:
            snapshot = read_snapshot(path)
            text = snapshot.data.decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            return StampOutcome(path, False, problem=f"cannot read it again ({exc}); left as it is")
        after, stamped, problem = _stamp_text(text, reachable, byline_fill)
        if after is None or after == text:
            return StampOutcome(path, False, problem=problem)
        try:
            write_text_atomic(path, after, expect=snapshot)
        except Changed:
            continue
        except ReadOnly:
            return StampOutcome(path, False, problem="the file is read-only; left as it is")
        return StampOutcome(path, True, stamped)
    return StampOutcome(path, False, problem=_KEPT_EDIT)


_ATTEMPTS = 3
_KEPT_EDIT = "it changed while being stamped (saved in an editor?); left as last saved: run it again"


def _stamp_text(text: str, reachable: Found, fill: Mapping[str, object] | None) -> tuple[str | None, int, str]:
    """The stamped text (None: leave the file), the sources stamped, and any problem. The
    edit is made on LF text; the file's own line breaks are put back afterwards."""
    if "\r" not in text:
        return _stamp_lf(text, reachable, fill)
    lf = linebreaks.to_lf(text)
    after, stamped, problem = _stamp_lf(lf, reachable, fill)
    return (None if after is None else linebreaks.restore(text, lf, after)), stamped, problem


def _stamp_lf(text: str, reachable: Found, fill: Mapping[str, object] | None) -> tuple[str | None, int, str]:
    if not _may_change(text, reachable, fill):
        return None, 0, ""
    try:
        in_place = _in_place(text, reachable, fill)
        if in_place is not None:
            return in_place[0], in_place[1], ""
        return _round_trip(text, reachable, fill)
    except Exception as exc:  # saved half-written mid-run, say: the next run stamps it
        from ruamel.yaml.error import YAMLError as RuamelError  # imported by the round trip anyway

        if not isinstance(exc, (RuamelError, *_UNREADABLE)):
            raise
        return None, 0, f"it cannot be read as YAML now ({_why(exc)}); left as it is"


_UNREADABLE = (yaml.YAMLError, ValueError, RecursionError, UnicodeError)
"""How the YAML libraries fail on text they cannot read or build (ruamel.yaml's YAMLError
too): a syntax error, a second document, a NUL, a date such as 2026-02-30, an alias of itself."""


def _why(exc: BaseException) -> str:
    """One line: the parser's own words and the line, where it says them."""
    problem, mark = getattr(exc, "problem", None), getattr(exc, "problem_mark", None)
    if problem and mark is not None:
        return f"{problem} at line {mark.line + 1}"
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return " ".join(str(exc).split())[:120] or type(exc).__name__


def _stamped(plan: Plan) -> int:
    return len({where[:2] for where, _ in plan if where[0] == "sources"})


def _in_place(text: str, reachable: Found, fill: Mapping[str, object] | None) -> tuple[str, int] | None:
    """The stamped text and the number of sources stamped, or None where this way cannot
    do it safely."""
    parsed = yamledit.parse(text)
    if parsed is None:
        return None
    node, data = parsed
    plan = _plan(data, reachable, fill)
    if not plan:
        return text, 0
    out = yamledit.edited(text, node, data, plan)
    if out is None or not _only_stamps_changed(text, out):
        return None
    return out, _stamped(plan)


def _round_trip(text: str, reachable: Found, byline_fill: Mapping[str, object] | None) -> tuple[str | None, int, str]:
    yaml_rt = next((_yaml(*i) for i in _INDENTS if _dump(_yaml(*i), _yaml(*i).load(text)) == text), None)
    if yaml_rt is None:
        return None, 0, "its layout cannot be kept by the YAML round trip; stamp by hand"
    data = yaml_rt.load(text)
    plan = _plan(data, reachable, byline_fill)
    yamledit.assign(data, [(where, _fresh(v) if isinstance(v, dt.date) else v) for where, v in plan])
    after = _dump(yaml_rt, data)
    if after == text:
        return None, 0, ""
    if not _only_stamps_changed(text, after):
        return None, 0, "stamping would change lines other than the stamps; left as it was"
    return after, _stamped(plan), ""
