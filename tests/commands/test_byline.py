"""`cudagloss byline`: pending byline fields from git history alone, in a real repository,
with the link checker's writing rules. A local server cited by the terms counts requests,
to prove that nothing goes to the network."""

from __future__ import annotations

import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("ruamel.yaml")

from conftest import FIXTURES, cudagloss
from gitrepo import git
from localserver import Ok, running
from scaffold import scaffold

REQUESTS: list[str] = []


class Counting(Ok):
    def do_HEAD(self) -> None:
        REQUESTS.append(self.path)
        super().do_HEAD()


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with running(Counting) as url:
        yield url


def a_term(name: str, url: str, checked: str = "") -> str:
    source = f"  - title: Source\n    url: {url}\n" + (f"    checked_on: {checked}\n" if checked else "")
    return scaffold(name, source)


@pytest.fixture
def repo(tmp_path: Path, server: str) -> Path:
    """alpha (CRLF, mode 0o640, reviewed in a later commit), beta (written_by set by hand, its
    source already stamped), gamma (not committed yet)."""
    terms = tmp_path / "terms"
    terms.mkdir()
    shutil.copy(FIXTURES / "good" / "_sections.yaml", terms)
    git(tmp_path, "init", "-q", "-b", "main")
    alpha = terms / "alpha.yaml"
    alpha.write_bytes(a_term("Alpha", f"{server}/a").replace("\n", "\r\n").encode())
    alpha.chmod(0o640)
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "Add alpha")
    beta = a_term("Beta", f"{server}/b", checked="2026-11-03").replace("written_by: pending", "written_by: Bo Hand")
    (terms / "beta.yaml").write_text(beta, encoding="utf-8")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "Add beta", author="Cy Writer", date="2026-11-02T09:00:00+00:00")
    alpha.write_bytes(alpha.read_bytes() + b"# reviewed\r\n")
    git(tmp_path, "commit", "-qam", "Review alpha\n\nReviewed-by: Di Reviewer <di@example.invalid>")
    (terms / "gamma.yaml").write_text(a_term("Gamma", f"{server}/g"), encoding="utf-8")
    return tmp_path


def test_byline_fills_from_history_alone_and_keeps_everything_else(repo: Path) -> None:
    terms = repo / "terms"
    before = {p.name: p.read_bytes() for p in terms.iterdir()}
    REQUESTS.clear()
    run = cudagloss(repo, "byline")
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[:2] == ["filled terms/alpha.yaml", "filled terms/beta.yaml"]
    assert "1 term file(s) not committed yet, so left pending: terms/gamma.yaml" in run.stdout
    assert REQUESTS == []  # no link was checked
    alpha = (terms / "alpha.yaml").read_bytes()
    expected = (
        before["alpha.yaml"]
        .replace(b"written_by: pending", b"written_by: Ada Author")
        .replace(b"reviewed_by: pending", b"reviewed_by: Di Reviewer")
        .replace(b"written_on: pending", b"written_on: 2026-10-01")
    )
    assert alpha == expected and alpha.count(b"\r\n") == alpha.count(b"\n")  # CRLF and comments kept
    assert stat.S_IMODE((terms / "alpha.yaml").stat().st_mode) == 0o640
    beta = (terms / "beta.yaml").read_text(encoding="utf-8")
    assert "written_by: Bo Hand" in beta  # set by hand: kept
    assert "written_on: 2026-11-02" in beta and "last_checked_on: 2026-11-03" in beta  # from the source stamp
    assert (terms / "gamma.yaml").read_bytes() == before["gamma.yaml"]
    again = cudagloss(repo, "byline", "terms")
    assert again.returncode == 0 and "filled" not in again.stdout


def test_no_history_to_trust_is_one_line_and_changes_nothing(
    repo: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("outside")  # not inside repo's work tree
    shallow = outside / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(shallow)], check=True)
    plain = outside / "plain"
    shutil.copytree(repo / "terms", plain / "terms")
    for root, why in ((shallow, "shallow clone"), (plain, "not in a git repository")):
        before = {p.name: p.read_bytes() for p in (root / "terms").iterdir()}
        run = cudagloss(root, "byline")
        assert run.returncode == 2 and run.stderr.count("\n") == 1 and why in run.stderr, run.stderr
        assert run.stderr.startswith("cudagloss byline: ")
        assert {p.name: p.read_bytes() for p in (root / "terms").iterdir()} == before


def test_terms_with_mistakes_are_refused_like_links_refuses_them(repo: Path) -> None:
    gamma = repo / "terms" / "gamma.yaml"
    gamma.write_text(gamma.read_text(encoding="utf-8").replace("section: widgets", "section: widgetz"))
    before = (repo / "terms" / "alpha.yaml").read_bytes()
    run = cudagloss(repo, "byline")
    assert run.returncode == 2 and "terms/gamma.yaml:" in run.stderr and "Traceback" not in run.stderr
    assert (repo / "terms" / "alpha.yaml").read_bytes() == before
