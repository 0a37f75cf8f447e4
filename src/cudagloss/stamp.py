"""Stamp stage of the link checker: write the date a source was found reachable into its term.

This is the one place a machine edits a file people write, so it edits through a
round-trip YAML library (ruamel.yaml) and then proves that only stamp lines changed: if
the re-dumped file differs from the author's anywhere else (an indentation style the
dumper would normalise, say), the file is left as it was and the problem reported. A
stamp never moves back, and the write is atomic.
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

from .atomic import write_text_atomic

STAMP_KEYS = ("checked_on", "last_checked_on", "written_by", "written_on", "reviewed_by")
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


def _as_date(value: object) -> dt.date | None:
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError:
        return None


def _fresh(day: dt.date) -> dt.date:
    """A new date object: the dumper writes one object used twice as an anchor and an alias,
    which term files do not allow."""
    return dt.date.fromordinal(day.toordinal())


def _may_change(text: str, reachable: Mapping[str, dt.date], fill: Mapping[str, object] | None) -> bool:
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


def stamp_file(
    path: Path, reachable: Mapping[str, dt.date], byline_fill: Mapping[str, str | dt.date | None] | None = None
) -> StampOutcome:
    """Set checked_on of every source whose URL is in reachable (URL -> day found reachable),
    never moving a stamp back; then byline.last_checked_on to the oldest source stamp, once
    every source has one; and byline fields still 'pending' from byline_fill (git history).
    A byline field an author set is never overwritten."""
    text = path.read_text(encoding="utf-8")
    if not _may_change(text, reachable, byline_fill):
        return StampOutcome(path, False)
    yaml = next((_yaml(*i) for i in _INDENTS if _dump(_yaml(*i), _yaml(*i).load(text)) == text), None)
    if yaml is None:
        return StampOutcome(path, False, problem="its layout cannot be kept by the YAML round trip; stamp by hand")
    data = yaml.load(text)
    stamped = 0
    dates: list[dt.date | None] = []
    for source in data.get("sources") or []:
        day = reachable.get(str(source.get("url", "")))
        old = _as_date(source.get("checked_on"))
        if day is not None and (old is None or day > old):
            source["checked_on"] = _fresh(day)
            old = day
            stamped += 1
        dates.append(old)
    byline = data.get("byline")
    if dates and all(dates) and byline is not None:
        oldest = min(d for d in dates if d is not None)
        current = _as_date(byline.get("last_checked_on"))
        if current is None or oldest > current:
            byline["last_checked_on"] = _fresh(oldest)
    for key, value in (byline_fill or {}).items():
        if byline is not None and value is not None and key in BYLINE_FROM_HISTORY and byline.get(key) == "pending":
            byline[key] = _fresh(value) if isinstance(value, dt.date) else str(value)
    after = _dump(yaml, data)
    if after == text:
        return StampOutcome(path, False)
    if not _only_stamps_changed(text, after):
        return StampOutcome(path, False, problem="stamping would change lines other than the stamps; left as it was")
    write_text_atomic(path, after)
    return StampOutcome(path, True, stamped)
