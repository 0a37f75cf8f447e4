"""Term files are read only when they are regular files of the repository: a pull request
that adds `terms/leak.yaml` as a link to a file elsewhere (a home directory, /proc, /etc,
.git/config) must not publish it or echo it, and a FIFO must not hang the check. A link is
refused wherever it leads, inside the repository too (issue 39: the rule writes follow,
cudagloss.files.inside), with one line, and every other mistake is still reported.

Real links, a real FIFO and the real `cudagloss check` command line."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import FIXTURES, cudagloss
from cudagloss.errors import GlossaryError
from cudagloss.load.corpus import load_corpus

SECRET = "s3cr3t-T0KEN-4f9a"
LINK = "is a symbolic link; a term file and the folders above it are plain folders"
OUTSIDE = HIDDEN = NOWHERE = LINK  # wherever a link leads, the same one line
NOT_REGULAR = "is not a regular file"


def term_text(name: str, secret: str = "") -> str:
    """A valid term (so only the link can make it an error), holding secret if given."""
    return (
        "# yaml-language-server: $schema=../schema/term.schema.json\n"
        f"name: {name}\ntitle: What is {name}?\ndefinition: A term that says {secret or 'nothing'}.\n"
        f"section: widgets\nbody: |\n  The value is {secret or 'plain'}.\n"
    )


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tmp_path/repo (the working directory) with terms/ holding one good term, and
    tmp_path/outside holding a valid term file full of a secret: what a link must never publish."""
    root = tmp_path / "repo"
    (root / "terms").mkdir(parents=True)
    shutil.copy(FIXTURES / "good" / "_sections.yaml", root / "terms")
    (root / "terms" / "good.yaml").write_text(term_text("Good"), encoding="utf-8")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.yaml").write_text(term_text("Leaked", SECRET), encoding="utf-8")
    monkeypatch.chdir(root)
    return root


def problems(root: Path | None = None, folder: Path = Path("terms")) -> list[tuple[str, str]]:
    """(path:line:col, message) of every diagnostic of loading folder ([] when it loads)."""
    try:
        load_corpus(folder, root)
    except GlossaryError as exc:
        return [(f"{d.path}:{d.line}:{d.col}", d.message) for d in exc.diagnostics]
    return []


LINKS_OUT: dict[str, Callable[[Path], Path]] = {
    "absolute": lambda tmp: tmp / "outside" / "secret.yaml",
    "relative": lambda tmp: Path("..") / ".." / "outside" / "secret.yaml",
    "proc-status": lambda tmp: Path("/proc/self/status"),
    "etc-passwd": lambda tmp: Path("/etc/passwd"),
    "dev-zero": lambda tmp: Path("/dev/zero"),
    "root-folder": lambda tmp: Path("/"),
}


@pytest.mark.parametrize("case", list(LINKS_OUT), ids=list(LINKS_OUT))
def test_a_link_out_of_the_repository_is_refused_unread(repo: Path, case: str) -> None:
    (repo / "terms" / "leak.yaml").symlink_to(LINKS_OUT[case](repo.parent))
    assert problems(repo) == [("terms/leak.yaml:1:1", OUTSIDE)]


def test_the_check_command_never_shows_what_a_link_leads_to(repo: Path) -> None:
    terms = repo / "terms"
    (terms / "leak.yaml").symlink_to(repo.parent / "outside" / "secret.yaml")
    (terms / "proc.yaml").symlink_to("/proc/self/status")
    (terms / "passwd.yaml").symlink_to("/etc/passwd")
    (repo / ".git").mkdir()
    (repo / ".git" / "config").write_text(f"[http]\n\textraheader = AUTHORIZATION: basic {SECRET}\n")
    (terms / "git.yaml").symlink_to(Path("..") / ".git" / "config")
    os.mkfifo(terms / "pipe.yaml")  # opening it to read would wait for a writer for ever
    run = cudagloss(repo, "check", "terms", timeout=60)
    output = run.stdout + run.stderr
    assert run.returncode == 1 and "Traceback" not in output
    for name, message in [("leak", OUTSIDE), ("proc", OUTSIDE), ("passwd", OUTSIDE), ("git", HIDDEN)]:
        assert f"terms/{name}.yaml:1:1: {message}" in output
    assert f"terms/pipe.yaml:1:1: {NOT_REGULAR}" in output
    assert output.rstrip().endswith("5 errors found"), output
    for leaked in (SECRET, "Leaked", "Pid:", "State:", "root:", "extraheader"):
        assert leaked not in output


def test_a_link_inside_the_repository_is_refused_too(repo: Path) -> None:
    """A term, the sections file and the facts file, each a link to a file of the repository:
    one line each, and the mistakes of the other files still reported."""
    (repo / "shared").mkdir()
    (repo / "shared" / "linked.yaml").write_text(term_text("Linked"), encoding="utf-8")
    (repo / "terms" / "linked.yaml").symlink_to(Path("..") / "shared" / "linked.yaml")
    (repo / "terms" / "chained.yaml").symlink_to(repo / "shared" / "linked.yaml")  # absolute
    shutil.move(repo / "terms" / "_sections.yaml", repo / "shared" / "_sections.yaml")
    (repo / "terms" / "_sections.yaml").symlink_to(Path("..") / "shared" / "_sections.yaml")
    (repo / "shared" / "_facts.yml").write_text("facts: []\n", encoding="utf-8")
    (repo / "terms" / "_facts.yml").symlink_to(Path("..") / "shared" / "_facts.yml")
    (repo / "terms" / "bad.yaml").write_text(term_text("Bad").replace("section: widgets", "section: 7"))
    found = problems(repo)
    assert ("terms/_sections.yaml:1:1", LINK.replace("a term file", "the sections file")) in found
    assert ("terms/_facts.yml:1:1", LINK.replace("a term file", "the facts file")) in found
    assert ("terms/chained.yaml:1:1", LINK) in found and ("terms/linked.yaml:1:1", LINK) in found
    assert any(where.startswith("terms/bad.yaml:") for where, _ in found), found


def test_a_chain_of_links_is_refused_at_its_first(repo: Path) -> None:
    (repo / "shared").mkdir()
    (repo / "shared" / "hop.yaml").symlink_to(repo.parent / "outside" / "secret.yaml")
    (repo / "terms" / "chain.yaml").symlink_to(Path("..") / "shared" / "hop.yaml")
    assert problems(repo) == [("terms/chain.yaml:1:1", OUTSIDE)]


def test_dangling_and_looping_links_are_refused(repo: Path) -> None:
    (repo / "terms" / "dangling.yaml").symlink_to("missing.yaml")
    (repo / "terms" / "loop-a.yaml").symlink_to("loop-b.yaml")
    (repo / "terms" / "loop-b.yaml").symlink_to("loop-a.yaml")
    assert problems(repo) == [
        ("terms/dangling.yaml:1:1", NOWHERE),
        ("terms/loop-a.yaml:1:1", NOWHERE),
        ("terms/loop-b.yaml:1:1", NOWHERE),
    ]


def test_fifos_folders_and_links_to_them_are_refused_without_opening(repo: Path) -> None:
    terms = repo / "terms"
    os.mkfifo(terms / "pipe.yaml")
    (terms / "folder.yaml").mkdir()
    os.mkfifo(repo / "inner-pipe")
    (terms / "to-pipe.yaml").symlink_to(Path("..") / "inner-pipe")
    (terms / "to-folder.yml").symlink_to(Path(".."))
    assert sorted(problems(repo)) == [
        ("terms/folder.yaml:1:1", NOT_REGULAR),
        ("terms/pipe.yaml:1:1", NOT_REGULAR),
        ("terms/to-folder.yml:1:1", LINK),
        ("terms/to-pipe.yaml:1:1", LINK),
    ]


def test_an_editor_lock_link_is_not_a_term(repo: Path) -> None:
    (repo / "terms" / ".#good.yaml").symlink_to("ada@host.1234:1700000000")  # what Emacs leaves
    assert problems(repo) == []


@pytest.mark.parametrize("kind", ["outside", "fifo", "dangling"])
def test_the_sections_file_is_held_to_the_same_rule(repo: Path, kind: str) -> None:
    sections = repo / "terms" / "_sections.yaml"
    sections.unlink()
    if kind == "outside":
        secret = repo.parent / "outside" / "_sections.yaml"
        secret.write_text(f"sections:\n  - slug: widgets\n    title: {SECRET}\n")
        sections.symlink_to(secret)
    elif kind == "fifo":
        os.mkfifo(sections)
    else:
        sections.symlink_to("nothing.yaml")
    link = LINK.replace("a term file", "the sections file")
    message = {"outside": link, "fifo": NOT_REGULAR, "dangling": link}[kind]
    found = problems(repo)
    assert found[0] == ("terms/_sections.yaml:1:1", message)
    assert not any(SECRET in m for _, m in found)


FOLDER_LINK = "is a symbolic link; the terms folder and the folders above it are plain folders"


def test_a_terms_folder_linked_out_of_the_repository_is_refused_once(repo: Path) -> None:
    elsewhere = repo.parent / "outside" / "terms"
    shutil.move(repo / "terms", elsewhere)
    (elsewhere / "leak.yaml").write_text(term_text("Leaked", SECRET), encoding="utf-8")
    (repo / "terms").symlink_to(elsewhere)
    assert problems(repo) == [("terms:1:1", FOLDER_LINK)]
    run = cudagloss(repo, "check", "terms", timeout=60)
    assert run.returncode == 1 and SECRET not in run.stdout + run.stderr


def test_a_terms_folder_linked_inside_the_repository_is_refused_too(repo: Path) -> None:
    """The rule writes follow: no link at any component from the repository root."""
    shutil.move(repo / "terms", repo / "glossary")
    (repo / "terms").symlink_to("glossary")
    assert problems(repo) == [("terms:1:1", FOLDER_LINK)]


def test_a_link_above_the_terms_folder_is_refused_by_check(repo: Path) -> None:
    """`content/terms` where `content` is a committed link out of the repository: one line, no
    traceback, nothing of the outside folder read."""
    outside = repo.parent / "outside" / "content"
    shutil.move(repo / "terms", outside / "terms")
    (outside / "terms" / "leak.yaml").write_text(term_text("Leaked", SECRET), encoding="utf-8")
    (repo / "content").symlink_to(outside)
    run = cudagloss(repo, "check", "--no-cache", "content/terms", timeout=60)
    output = run.stdout + run.stderr
    assert run.returncode == 1 and "Traceback" not in output, output
    assert f"content:1:1: {FOLDER_LINK}" in output.splitlines(), output
    assert SECRET not in output and "Leaked" not in output


def test_without_a_root_the_terms_folders_parent_is_the_boundary(repo: Path) -> None:
    (repo / "terms" / "leak.yaml").symlink_to(repo.parent / "outside" / "secret.yaml")
    os.chdir(repo.parent)  # as `cudagloss check repo/terms` from elsewhere would
    assert problems(None, Path("repo/terms")) == [("repo/terms/leak.yaml:1:1", OUTSIDE)]
