"""Byline from history: who added each term file and when, and who reviewed it, from git.

One `git log` process reads the history of every term at once (not one process per file),
oldest commit first. Written by / written on come from the commit that added the file;
reviewed by from the latest `Reviewed-by:` trailer on a commit that touched it. In a
shallow clone the history is cut, so the commit that seems to add a file may not be the
one that did: then nothing is filled in and the caller says why.

Names from git are untrusted text that will be published: e-mail addresses are dropped
(a trailer's 'Name <address>' keeps the name; a bare address leaves the field pending, as
even its local part may identify a mailbox), and so are control, bidirectional and
invisible characters. A date in the future (a forged commit date) leaves the field pending.
"""

from __future__ import annotations

import datetime as dt
import subprocess
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from cudagloss.check.fields import DATE_SLACK, utc_today, without_email
from cudagloss.model.limits import NAME_MAX
from cudagloss.model.term import PENDING
from cudagloss.text.characters import hidden_reason

_COMMIT, _FIELD, _REVIEWER = "\x1e", "\x1f", "\x1d"


@dataclass
class FileHistory:
    written_by: str | None = None
    written_on: dt.date | None = None
    reviewed_by: str | None = None


class HistoryUnavailable(Exception):
    """No usable history: not a git repository, git missing, or a shallow clone."""


def _git(root: Path, *args: str) -> str:
    try:
        run = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        raise HistoryUnavailable(f"git cannot run here ({exc})") from None
    if run.returncode != 0:
        raise HistoryUnavailable(run.stderr.strip().splitlines()[-1] if run.stderr.strip() else "git failed")
    return run.stdout


def clean_name(raw: str) -> str | None:
    """A name from git as it may be published, or None when nothing publishable is left."""
    text = "".join(ch if not hidden_reason(ch) and ch not in "\t\r\n" else " " for ch in raw)
    name = without_email(unicodedata.normalize("NFC", text))
    if not name or "@" in name or name == PENDING:
        return None
    return name if len(name) <= NAME_MAX else name[:NAME_MAX].rstrip()


GIT_FIRST_DAY = dt.date(2005, 4, 7)
"""Git's first commit: a commit dated before it (any date can be typed into a commit) is forged,
and gives no byline day (issue 39, class 6: dates from outside lie between a stated earliest day
and tomorrow)."""


def _day(text: str) -> dt.date | None:
    try:
        day = dt.datetime.fromisoformat(text.strip()).date()
    except ValueError:
        return None
    return day if GIT_FIRST_DAY <= day <= utc_today() + DATE_SLACK else None


def read_history(root: Path, folder: str = "terms") -> dict[str, FileHistory]:
    """Each file under folder (path relative to root) with what git says of it."""
    if _git(root, "rev-parse", "--is-shallow-repository").strip() == "true":
        raise HistoryUnavailable("this is a shallow clone, so history is cut; run `git fetch --unshallow` first")
    log = _git(
        root,
        "log",
        "--reverse",
        "--no-renames",
        f"--format={_COMMIT}%an{_FIELD}%aI{_FIELD}%(trailers:key=Reviewed-by,valueonly,separator=%x1d)",
        "--name-status",
        "--",
        folder,
    )
    files: dict[str, FileHistory] = {}
    for chunk in log.split(_COMMIT)[1:]:
        head, _, names = chunk.partition("\n")
        raw_author, date, reviewers = [*head.split(_FIELD), "", "", ""][:3]
        author, day = clean_name(raw_author), _day(date)
        reviewed = ", ".join(dict.fromkeys(n for r in reviewers.split(_REVIEWER) if (n := clean_name(r)))) or None
        for line in names.splitlines():
            status, _, path = line.partition("\t")
            if not path:
                continue
            record = files.setdefault(path, FileHistory())
            if status.startswith("A") and record.written_on is None:
                record.written_by, record.written_on = author, day
            if reviewed:
                record.reviewed_by = reviewed
    return files
