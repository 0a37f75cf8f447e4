"""cudagloss.load.preview: every path MkDocs would read, watch or import, refused before it starts
(issue 39). A small checkout per case, one hostile setting or link each, and the one line it gets;
tests/e2e/test_serve_refusals.py runs the real `cudagloss serve` and `make build`'s commands."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ROOT
from cudagloss.errors import GlossaryError, UsageError
from cudagloss.load.preview import refuse_preview_reads
from cudagloss.model.project import ProjectError

BASE = "site_name: T\nhooks: [site_hooks/glossary.py]\nwatch: [terms]\n"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A checkout with the folders a configuration names, beside outside/; the working folder."""
    root = tmp_path / "repo"
    for folder in ("docs", "terms", "templates", "measurements", "site_hooks"):
        (root / folder).mkdir(parents=True)
    (root / "site_hooks" / "glossary.py").write_text("", encoding="utf-8")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "x.yml").write_text("docs_dir: docs\n", encoding="utf-8")
    monkeypatch.chdir(root)
    return root


def refusal(root: Path, text: str) -> str:
    (root / "mkdocs.yml").write_text(BASE + text, encoding="utf-8")
    with pytest.raises((ProjectError, GlossaryError, UsageError)) as caught:
        refuse_preview_reads(Path("mkdocs.yml"))
    error = caught.value
    return error.diagnostics[0].format() if isinstance(error, GlossaryError) else str(error)


def test_the_repositorys_own_configuration_passes() -> None:
    refuse_preview_reads(ROOT / "mkdocs.yml")


OUTSIDE = {
    "hooks": "hooks: [../outside/evil.py]\n",
    "INHERIT": "INHERIT: ../outside/x.yml\n",
    "watch": "watch: [/etc]\n",
    "site_dir": "site_dir: ../outside\n",
    "plugins.blog": "plugins:\n  - search\n  - blog:\n      blog_dir: ../outside\n",
}


@pytest.mark.parametrize("key", list(OUTSIDE))
def test_a_path_outside_the_repository_is_refused_naming_the_setting(repo: Path, key: str) -> None:
    assert f"mkdocs.yml: '{key}': " in refusal(repo, OUTSIDE[key])
    assert "is outside the repository" in refusal(repo, OUTSIDE[key])


def test_an_inherited_configuration_is_read_merged_and_judged_too(repo: Path) -> None:
    """The parent names docs_dir outside: MkDocs would read it, so the merged settings are judged."""
    (repo / "base.yml").write_text("docs_dir: /etc\n", encoding="utf-8")
    line = "mkdocs.yml: 'docs_dir': '/etc' is outside the repository (the folder of mkdocs.yml)"
    assert refusal(repo, "INHERIT: base.yml\n") == line


LINKS = {
    "INHERIT: linked/x.yml\n": "linked:1:1: is a symbolic link; an inherited configuration",
    "hooks: [linked/evil.py]\n": "linked:1:1: is a symbolic link; a hook",
    "watch: [terms, linked]\n": "linked:1:1: is a symbolic link; a watched folder",
    "site_dir: linked\n": "linked:1:1: is a symbolic link; the site folder",
    "markdown_extensions: [linked.evil]\n": "linked:1:1: is a symbolic link; a Markdown extension",
}


@pytest.mark.parametrize("text", list(LINKS))
def test_a_path_through_a_committed_link_is_refused(repo: Path, text: str) -> None:
    (repo / "linked").symlink_to(repo.parent / "outside")
    assert refusal(repo, text).startswith(LINKS[text])


@pytest.mark.parametrize(
    ("name", "what"),
    [
        ("terms/diagrams", "the terms folder"),
        ("site_hooks/jinja2.py", "is a symbolic link; the files beside a hook"),
        ("measurements/memory-latency", "the measurements folder"),
        ("docs/javascripts", "the docs folder"),
    ],
)
def test_a_link_below_a_folder_mkdocs_walks_or_imports_from_is_refused(repo: Path, name: str, what: str) -> None:
    (repo / name).symlink_to(repo.parent / "outside")
    assert refusal(repo, "").startswith(f"{name}:1:1: is a symbolic link;") and what in refusal(repo, "")


def test_a_yaml_tag_that_would_run_python_is_refused_unrun(repo: Path) -> None:
    """MkDocs reads its configuration with PyYAML's full Loader; ours is SafeLoader plus !ENV."""
    ran = repo.parent / "outside" / "RAN"
    line = refusal(repo, f"extra: !!python/object/apply:os.system ['touch {ran}']\n")
    assert line.startswith("mkdocs.yml:") and "not a configuration MkDocs could read" in line
    assert not ran.exists()
