"""Bylines from git history, in a real temporary repository and a real shallow clone of it."""

from __future__ import annotations

import datetime as dt
import subprocess
from pathlib import Path

import pytest

from cudagloss.links.history import HistoryUnavailable, read_history
from cudagloss.links.stamp import stamp_file
from gitrepo import git

TERM = "name: {name}\nbyline:\n  written_by: {by}\n  reviewed_by: pending\n  written_on: pending\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "terms").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "terms" / "a.yaml").write_text(TERM.format(name="a", by="pending"))
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "Add a")
    (repo / "terms" / "b.yaml").write_text(TERM.format(name="b", by="Set By Hand"))
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "Add b", author="Bo Writer", date="2026-11-02T09:00:00+00:00")
    (repo / "terms" / "a.yaml").write_text(TERM.format(name="a", by="pending") + "# reviewed\n")
    git(
        repo,
        "commit",
        "-qam",
        "Review a\n\nReviewed-by: Cy Reviewer",
        author="Cy Reviewer",
        date="2026-11-20T09:00:00+00:00",
    )
    return repo


def test_one_pass_over_the_log_gives_author_date_and_reviewer(repo: Path) -> None:
    history = read_history(repo, "terms")
    a, b = history["terms/a.yaml"], history["terms/b.yaml"]
    assert (a.written_by, a.written_on, a.reviewed_by) == ("Ada Author", dt.date(2026, 10, 1), "Cy Reviewer")
    assert (b.written_by, b.written_on, b.reviewed_by) == ("Bo Writer", dt.date(2026, 11, 2), None)


def test_pending_fields_are_filled_and_hand_set_ones_kept(repo: Path) -> None:
    history = read_history(repo, "terms")
    for name in ("a", "b"):
        h = history[f"terms/{name}.yaml"]
        fill = {"written_by": h.written_by, "written_on": h.written_on, "reviewed_by": h.reviewed_by}
        stamp_file(repo / "terms" / f"{name}.yaml", {}, fill)
    a = (repo / "terms" / "a.yaml").read_text()
    b = (repo / "terms" / "b.yaml").read_text()
    assert "written_by: Ada Author\n  reviewed_by: Cy Reviewer\n  written_on: 2026-10-01\n" in a
    assert "written_by: Set By Hand\n  reviewed_by: pending\n  written_on: 2026-11-02\n" in b


def test_a_shallow_clone_is_refused_rather_than_giving_wrong_dates(repo: Path, tmp_path: Path) -> None:
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(shallow)], check=True)
    with pytest.raises(HistoryUnavailable, match="shallow clone"):
        read_history(shallow, "terms")


def test_a_commit_dated_before_git_existed_gives_no_day(repo: Path) -> None:
    """Any date can be typed into a commit: one before git's first commit is forged, and the
    byline day stays pending rather than say 1971 (found by a fresh-eyes attack, issue 39)."""
    (repo / "terms" / "c.yaml").write_text(TERM.format(name="c", by="pending"))
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "Add c", author="Old Clock", date="1971-01-01T09:00:00+00:00")
    c = read_history(repo, "terms")["terms/c.yaml"]
    assert (c.written_by, c.written_on) == ("Old Clock", None)
