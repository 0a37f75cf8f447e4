"""`cudagloss new --slug` (and `make new SLUG=`, through CUDAGLOSS_NEW_SLUG): a chosen slug
passes the same rules as a made one, and one another term's file has is refused."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES
from cudagloss.commands.new import new_term
from cudagloss.errors import GlossaryError


@pytest.fixture
def terms(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURES / "good", tmp_path / "terms")
    return tmp_path / "terms"


def refused(terms: Path, name: str, slug: str | None) -> str:
    before = sorted(p.name for p in terms.iterdir())
    with pytest.raises(GlossaryError) as caught:
        new_term(name, terms, slug=slug)
    assert sorted(p.name for p in terms.iterdir()) == before  # nothing written
    (diagnostic,) = caught.value.diagnostics
    return diagnostic.format()


def test_a_chosen_slug_names_the_file(terms: Path) -> None:
    path = new_term("cuModuleLoadData()", terms, slug="module-load-data")
    assert path == terms / "module-load-data.yaml" and 'name: "cuModuleLoadData()"' in path.read_text()


def test_a_slug_another_file_has_or_looks_like_is_refused(terms: Path) -> None:
    (terms / "lane.yaml").rename(terms / "lane.yml")
    assert "the slug 'lane' is already used by" in refused(terms, "Lane two", "lane")
    assert "the slug 'lane' is already used by" in refused(terms, "Lane", None)  # the made slug too
    assert "looks like that of" in refused(terms, "Thread b1ock", "thread-b1ock")  # 'l' and '1'
    assert "the term already exists" in refused(terms, "Warp", "warp")


@pytest.mark.parametrize("slug", ["", "Fat-Binary", "fat_binary", "fat--binary", "x\n", "../x", "a" * 101, "ß"])
def test_a_chosen_slug_that_is_no_slug_is_one_diagnostic(terms: Path, slug: str) -> None:
    text = refused(terms, "Fat binary", slug)
    assert "terms/?.yaml:1:1: --slug " in text and "is not a valid slug" in text
    assert "\n    hint: a slug is lower-case letters and digits" in text and text.count("\n") == 1


def test_from_env_takes_the_slug_and_an_empty_one_counts_as_not_given(terms: Path) -> None:
    def new(name: str, slug: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "CUDAGLOSS_NEW_TERM": name, "CUDAGLOSS_NEW_SLUG": slug, "CUDAGLOSS_NEW_TERMS": "terms"}
        return subprocess.run(
            [sys.executable, "-m", "cudagloss", "new", "--from-env"],
            cwd=terms.parent,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )

    chosen = new("Shared memory bank", "bank")
    assert chosen.returncode == 0 and "wrote terms/bank.yaml" in chosen.stdout, chosen.stderr
    made = new("Memory fence", "")
    assert made.returncode == 0 and "wrote terms/memory-fence.yaml" in made.stdout, made.stderr
    bad = new("Other", "Not A Slug")
    assert bad.returncode == 1 and "--slug 'Not A Slug' is not a valid slug" in bad.stderr
    assert "Traceback" not in bad.stderr and not (terms / "other.yaml").exists()
