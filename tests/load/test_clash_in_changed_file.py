"""A name two term files claim is reported in the file being changed: the one git sees as
modified or untracked, else the one modified last, else the one committed last; never just
the one that sorts first. File names in the repository are hostile input."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from conftest import FIXTURES
from cudagloss.errors import GlossaryError
from cudagloss.load.corpus import load_corpus
from gitrepo import git
from scaffold import scaffold

HINT = "each name, alias, abbreviation and plural belongs to one term"


def _term(name: str, *aliases: str) -> str:
    return scaffold(name).replace("aliases: []", f"aliases: [{', '.join(aliases)}]")


def _folder(root: Path, files: dict[str, str]) -> Path:
    terms = root / "terms"
    terms.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURES / "good" / "_sections.yaml", terms)
    for name, text in files.items():
        (terms / name).write_text(text, encoding="utf-8")
    return terms


def _clashes(terms: Path) -> list[str]:
    try:
        load_corpus(terms, terms.parent)
    except GlossaryError as exc:
        assert all(d.hint == HINT for d in exc.diagnostics if "already used by" in d.message)
        return [f"{d.path}:{d.line}: {d.message}" for d in exc.diagnostics if "already used by" in d.message]
    return []


def _newer(path: Path, than: Path, seconds: float = 60) -> None:
    """path's modification time seconds after than's."""
    when = than.stat().st_mtime_ns + int(seconds * 10**9)
    os.utime(path, ns=(when, when))


def _repo(root: Path, files: dict[str, str], date: str = "2026-10-01T12:00:00+00:00") -> Path:
    terms = _folder(root, files)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "terms", date=date)
    return terms


def test_an_untracked_term_is_told_though_the_old_one_sorts_first_and_is_newer(tmp_path: Path) -> None:
    terms = _repo(tmp_path, {"alpha.yaml": _term("Alpha", "Gamma")})
    (terms / "gamma.yaml").write_text(_term("Gamma"), encoding="utf-8")
    _newer(terms / "alpha.yaml", terms / "gamma.yaml")
    assert _clashes(terms) == ["terms/gamma.yaml:2: name: 'Gamma' is already used by terms/alpha.yaml (aliases[0])"]


def test_a_modified_term_is_told_not_the_committed_one(tmp_path: Path) -> None:
    terms = _repo(tmp_path, {"alpha.yaml": _term("Alpha", "Other"), "beta.yaml": _term("Beta", "Shared")})
    (terms / "alpha.yaml").write_text(_term("Alpha", "Shared"), encoding="utf-8")
    _newer(terms / "beta.yaml", terms / "alpha.yaml")
    assert _clashes(terms) == [
        "terms/alpha.yaml:8: aliases[0]: 'Shared' is already used by terms/beta.yaml (aliases[0])"
    ]


def test_of_two_committed_terms_the_later_commit_is_told(tmp_path: Path) -> None:
    terms = _repo(tmp_path, {"alpha.yaml": _term("Alpha", "Gamma")}, date="2026-10-01T12:00:00+00:00")
    (terms / "gamma.yaml").write_text(_term("Gamma"), encoding="utf-8")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "gamma", date="2026-10-02T12:00:00+00:00")
    _newer(terms / "alpha.yaml", terms / "gamma.yaml")  # a checkout's mtimes say nothing
    assert _clashes(terms) == ["terms/gamma.yaml:2: name: 'Gamma' is already used by terms/alpha.yaml (aliases[0])"]


def test_without_git_the_newer_file_is_told(tmp_path: Path) -> None:
    terms = _folder(tmp_path, {"alpha.yaml": _term("Alpha", "Shared"), "beta.yaml": _term("Beta", "Shared")})
    _newer(terms / "beta.yaml", terms / "alpha.yaml")
    assert _clashes(terms) == [
        "terms/beta.yaml:8: aliases[0]: 'Shared' is already used by terms/alpha.yaml (aliases[0])"
    ]
    _newer(terms / "alpha.yaml", terms / "beta.yaml")
    assert _clashes(terms) == [
        "terms/alpha.yaml:8: aliases[0]: 'Shared' is already used by terms/beta.yaml (aliases[0])"
    ]
    _newer(terms / "alpha.yaml", terms / "beta.yaml", seconds=1.5)  # written together: the later form
    assert _clashes(terms) == [
        "terms/beta.yaml:8: aliases[0]: 'Shared' is already used by terms/alpha.yaml (aliases[0])"
    ]


def test_hostile_file_names_are_read_as_names(tmp_path: Path) -> None:
    """An untracked term whose name holds a quote and a byte that is not UTF-8 (git quotes such
    a name unless asked for -z), beside files whose names hold a newline, a status line and
    spaces: the untracked term is told, and the committed one is not taken for changed."""
    terms = _repo(tmp_path, {"alpha.yaml": _term("Alpha", "Gamma")})
    (terms / 'gam "ma\udcff.yaml').write_text(_term("Gamma"), encoding="utf-8")  # b'gam "ma\xff.yaml' on disk
    for junk in ("junk\n?? alpha.yaml", " M alpha.yaml", "a b\x01c.txt", "\udcfe.txt"):
        (terms / junk).write_text("not a term\n", encoding="utf-8")
    _newer(terms / "alpha.yaml", terms / 'gam "ma\udcff.yaml')
    assert _clashes(terms) == [
        "terms/gam \"ma\udcff.yaml:2: name: 'Gamma' is already used by terms/alpha.yaml (aliases[0])"
    ]


def test_outside_a_repository_git_is_not_asked_to_guess(tmp_path: Path) -> None:
    """A terms folder that is a repository's ignored folder, or beside none, falls back to mtimes."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / ".gitignore").write_text("terms/\n", encoding="utf-8")
    terms = _folder(repo, {"alpha.yaml": _term("Alpha", "Shared"), "beta.yaml": _term("Beta", "Shared")})
    _newer(terms / "alpha.yaml", terms / "beta.yaml")
    assert _clashes(terms) == [
        "terms/alpha.yaml:8: aliases[0]: 'Shared' is already used by terms/beta.yaml (aliases[0])"
    ]


def test_a_look_alike_is_told_in_the_changed_file_too(tmp_path: Path) -> None:
    """'modern' and 'Modem' read alike (TR39) and neither is its own skeleton ('rnodern'), so
    neither is the disguise: the changed file is told."""
    terms = _repo(tmp_path, {"alpha.yaml": _term("Alpha", "Modem")})
    (terms / "beta.yaml").write_text(_term("modern"), encoding="utf-8")
    _newer(terms / "alpha.yaml", terms / "beta.yaml")
    found: list[str] = []
    try:
        load_corpus(terms, tmp_path)
    except GlossaryError as exc:
        found = [f"{d.path}:{d.line}: {d.message}" for d in exc.diagnostics if "looks like" in d.message]
    assert found == ["terms/beta.yaml:2: name: 'modern' looks like 'Modem' of terms/alpha.yaml (aliases[0])"]
