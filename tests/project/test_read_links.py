"""Reads through committed folder links (issue 39, class 1): a pull request can commit a link at
a folder an input names, or at a folder above it; every read of the repository goes through one
guard (cudagloss.files.inside.read_link_mistake, the rule writes follow) that refuses a link at
any component from the repository root with one line, and nothing from outside is read or
published. A copy of the glossary, real links, the real CLI.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import ROOT, copy_checkout, cudagloss, move_out
from sitebuild import build

PROJECT = ("terms", "templates", "measurements", "computed", "docs", "overrides", "site_hooks", "src", "mkdocs.yml")
SECRET = "s3cr3t-0UTSIDE-77b1"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A copy of the glossary as a pull request's checkout, beside a folder outside it."""
    root = copy_checkout(tmp_path / "repo", PROJECT)
    (tmp_path / "outside").mkdir()
    return root


def one_line(run: object, line: str) -> str:
    out = f"{run.stdout}{run.stderr}"  # type: ignore[attr-defined]
    assert run.returncode == 1, out  # type: ignore[attr-defined]
    assert "Traceback" not in out and line in out.splitlines(), out
    assert SECRET not in out
    return out


def test_check_and_render_refuse_a_terms_folder_link_and_publish_nothing(repo: Path) -> None:
    outside = move_out(repo, "terms")
    (outside / "leak.yaml").write_text(f"name: {SECRET}\n", encoding="utf-8")
    line = "terms:1:1: is a symbolic link; the terms folder and the folders above it are plain folders"
    one_line(cudagloss(repo, "check", "--strict", "--no-cache", "terms"), line)
    one_line(cudagloss(repo, "render", "--out", "site-tree"), line)
    assert not (repo / "site-tree").exists()


def test_render_refuses_a_templates_folder_link_and_publishes_nothing(repo: Path) -> None:
    outside = move_out(repo, "templates")
    for page in outside.iterdir():
        page.write_text(SECRET, encoding="utf-8")
    line = "templates:1:1: is a symbolic link; the templates folder and the folders above it are plain folders"
    one_line(cudagloss(repo, "render", "--out", "site-tree"), line)
    assert not (repo / "site-tree").exists()


def test_render_refuses_a_theme_overrides_link(repo: Path) -> None:
    outside = move_out(repo, "overrides")
    for page in outside.rglob("*"):
        if page.is_file():
            page.write_text(SECRET, encoding="utf-8")
    one_line(cudagloss(repo, "render", "--out", "site-tree"), f"overrides:1:1: is a symbolic link; {THEME}")
    assert not (repo / "site-tree").exists()


DIAGRAMS = "terms/diagrams:1:1: is a symbolic link; the diagrams folder and the folders above it are plain folders"


def test_check_and_render_refuse_a_diagrams_folder_link_and_publish_nothing(repo: Path) -> None:
    outside = move_out(repo, "terms/diagrams")
    for drawing in outside.glob("*.svg"):  # a drawing that would publish text from outside
        drawing.write_text(drawing.read_text().replace("</svg>", f"<text>{SECRET}</text></svg>"), encoding="utf-8")
    user = "(used by terms/jit-compilation.yaml)"
    for args in (("check", "--strict", "--no-cache", "terms"), ("render", "--out", "site-tree")):
        out = one_line(cudagloss(repo, *args), f"{DIAGRAMS} {user}")
        assert all(line.startswith(DIAGRAMS) for line in out.splitlines() if "symbolic link" in line)
    assert not (repo / "site-tree").exists()


def test_a_diagram_file_link_inside_the_repository_is_refused_too(repo: Path) -> None:
    drawing = repo / "terms" / "diagrams" / "jit-load-paths.svg"
    shutil.move(drawing, repo / "jit-load-paths.svg")
    drawing.symlink_to(Path("..") / ".." / "jit-load-paths.svg")
    run = cudagloss(repo, "check", "--strict", "--no-cache", "terms")
    out = run.stdout + run.stderr
    assert run.returncode == 1 and "Traceback" not in out
    assert "diagrams[0].file: 'diagrams/jit-load-paths.svg' is a symbolic link; a drawing is a plain file" in out, out


def test_render_refuses_a_link_report_under_a_folder_link(repo: Path) -> None:
    (repo / "reports").mkdir()
    outside = move_out(repo, "reports")
    (outside / "links.json").write_text(f'{{"checked": "{SECRET}"}}', encoding="utf-8")
    line = "reports:1:1: is a symbolic link; the link report and the folders above it are plain folders"
    one_line(cudagloss(repo, "render", "--out", "site-tree", "--link-report", "reports/links.json"), line)
    assert not (repo / "site-tree").exists()


def test_check_and_render_refuse_a_configuration_link(repo: Path) -> None:
    outside = repo.parent / "outside" / "mkdocs.yml"
    shutil.move(repo / "mkdocs.yml", outside)
    outside.write_text(outside.read_text().replace("site_name:", f"site_name: {SECRET} #"), encoding="utf-8")
    (repo / "mkdocs.yml").symlink_to(outside)
    line = "mkdocs.yml:1:1: is a symbolic link; the configuration and the folders above it are plain folders"
    one_line(cudagloss(repo, "check", "--strict", "--no-cache", "terms"), line)
    one_line(cudagloss(repo, "render", "--out", "site-tree"), line)
    assert not (repo / "site-tree").exists()


@pytest.mark.builders
def test_the_preview_build_refuses_a_templates_folder_link_and_publishes_nothing(repo: Path) -> None:
    """mkdocs build (and serve) through the hooks: the same guard, before a template is read."""
    outside = move_out(repo, "templates")
    for page in outside.iterdir():
        page.write_text(SECRET, encoding="utf-8")
    run = build(repo / "mkdocs.yml", repo / "site", PYTHONPATH=str(ROOT / "src"))
    out = run.stdout + run.stderr
    assert run.returncode != 0 and SECRET not in out, out
    line = "templates:1:1: is a symbolic link; the templates folder and the folders above it are plain folders"
    assert any(s.rstrip().endswith(line) for s in out.splitlines()), out
    assert "Traceback" not in out and not (repo / "site" / "index.html").exists()


def test_render_refuses_a_template_file_link_and_publishes_nothing(repo: Path) -> None:
    secret = repo.parent / "outside" / "term.md.j2"
    secret.write_text(SECRET, encoding="utf-8")
    (repo / "templates" / "term.md.j2").unlink()
    (repo / "templates" / "term.md.j2").symlink_to(secret)
    line = "templates/term.md.j2:1:1: is a symbolic link; a template and the folders above it are plain folders"
    one_line(cudagloss(repo, "render", "--out", "site-tree"), line)
    assert not (repo / "site-tree").exists()


@pytest.mark.parametrize(
    ("name", "where"), [("jit-compilation.yaml", "inside"), ("_sections.yaml", "outside"), ("_facts.yml", "inside")]
)
def test_check_and_render_refuse_a_file_of_the_terms_folder_that_is_a_link(repo: Path, name: str, where: str) -> None:
    """A term, the sections file or the facts file committed as a link, out of the repository or
    to a file in it: one line, whatever it leads to, and the other mistakes still reported
    (tests/load/test_load_symlinks.py has more kinds of link, without the CLI)."""
    target = repo.parent / "outside" / name if where == "outside" else repo / "kept" / name
    target.parent.mkdir(exist_ok=True)
    shutil.move(repo / "terms" / name, target)
    text = target.read_text(encoding="utf-8")
    target.write_text(text.replace("title:", f"title: {SECRET} #") + f"{SECRET}: [\n", encoding="utf-8")
    (repo / "terms" / name).symlink_to(target)
    (repo / "terms" / "warp.yaml").write_text("name: [\n", encoding="utf-8")  # another mistake, still reported
    what = {"_sections.yaml": "the sections file", "_facts.yml": "the facts file"}.get(name, "a term file")
    line = f"terms/{name}:1:1: is a symbolic link; {what} and the folders above it are plain folders"
    for args in (("check", "--strict", "--no-cache", "terms"), ("render", "--out", "site-tree")):
        out = one_line(cudagloss(repo, *args), line)
        assert sum("symbolic link" in s for s in out.splitlines()) == 1, out
        assert any(s.startswith("terms/warp.yaml:") for s in out.splitlines()), out
    assert not (repo / "site-tree").exists()


DOCS = "the docs folder, its files and the folders above it are plain folders"
THEME = "the theme's custom_dir, its files and the folders above it are plain folders"
COPIED = {
    "docs": DOCS,
    "docs/javascripts": DOCS,
    "docs/stylesheets/glossary.css": DOCS,  # the file extra_css names
    "overrides/partials": THEME,
    "overrides/main.html": THEME,
}


@pytest.mark.parametrize("name", list(COPIED))
def test_render_refuses_a_link_in_a_folder_it_copies_and_publishes_nothing(repo: Path, name: str) -> None:
    """docs/ and the theme's custom_dir are copied whole into the tree, and read whole by
    MkDocs: a link at them or anywhere below is refused with one line before either runs."""
    outside = move_out(repo, name)
    for file in outside.rglob("*") if outside.is_dir() else [outside]:
        if file.is_file():
            file.write_text(SECRET, encoding="utf-8")
    one_line(cudagloss(repo, "render", "--out", "site-tree"), f"{name}:1:1: is a symbolic link; {COPIED[name]}")
    assert not (repo / "site-tree").exists()


def test_render_refuses_a_theme_custom_dir_named_through_a_link(repo: Path) -> None:
    """mkdocs.yml's theme.custom_dir names a folder a pull request committed as a link."""
    (repo / "outside-theme").symlink_to(repo.parent / "outside")
    (repo.parent / "outside" / "main.html").write_text(SECRET, encoding="utf-8")
    config = repo / "mkdocs.yml"
    config.write_text(config.read_text().replace("custom_dir: overrides", "custom_dir: outside-theme"))
    one_line(cudagloss(repo, "render", "--out", "site-tree"), f"outside-theme:1:1: is a symbolic link; {THEME}")
    assert not (repo / "site-tree").exists()


@pytest.mark.parametrize("key", ["extra_css", "extra_javascript"])
def test_render_refuses_an_extra_file_outside_the_docs_folder(repo: Path, key: str) -> None:
    (repo.parent / "outside" / "secret.css").write_text(SECRET, encoding="utf-8")
    config = repo / "mkdocs.yml"
    named = {"extra_css": "stylesheets/glossary.css", "extra_javascript": "javascripts/glossary.js"}[key]
    config.write_text(config.read_text().replace(named, "../../outside/secret.css"))
    run = cudagloss(repo, "render", "--out", "site-tree")
    out = run.stdout + run.stderr
    line = f"mkdocs.yml: '{key}': '../../outside/secret.css' is not a file of the docs folder (nor an address)"
    assert run.returncode == 2 and any(s.endswith(line) for s in out.splitlines()), out
    assert SECRET not in out and "Traceback" not in out and not (repo / "site-tree").exists()


@pytest.mark.builders
def test_the_preview_build_refuses_a_docs_link_before_mkdocs_reads_it(repo: Path) -> None:
    """mkdocs build through the hooks: MkDocs would copy docs/javascripts itself."""
    outside = move_out(repo, "docs/javascripts")
    (outside / "glossary.js").write_text(f"// {SECRET}", encoding="utf-8")
    run = build(repo / "mkdocs.yml", repo / "site", PYTHONPATH=str(ROOT / "src"))
    out = run.stdout + run.stderr
    assert run.returncode != 0 and SECRET not in out and "Traceback" not in out, out
    assert any(s.rstrip().endswith(f"docs/javascripts:1:1: is a symbolic link; {DOCS}") for s in out.splitlines()), out
    assert not (repo / "site" / "javascripts" / "glossary.js").exists()


OUTSIDE_FOLDERS = {
    "docs_dir": ("docs_dir: docs", "docs_dir: ../outside"),
    "theme.custom_dir": ("custom_dir: overrides", "custom_dir: {outside}"),
    "extra.glossary.terms_dir": ("terms_dir: terms", "terms_dir: ../outside"),
    "extra.glossary.templates_dir": ("templates_dir: templates", "templates_dir: ../outside"),
    "extra.glossary.measurements_dir": ("measurements_dir: measurements", "measurements_dir: ../outside"),
}


@pytest.mark.parametrize("key", list(OUTSIDE_FOLDERS))
def test_every_command_refuses_a_folder_mkdocs_yml_names_outside_the_repository(repo: Path, key: str) -> None:
    """No link at all: the committed configuration itself names a folder out of the repository,
    whose files render would copy into the tree and publish."""
    outside = repo.parent / "outside"
    (outside / "key.txt").write_text(SECRET, encoding="utf-8")
    (outside / "leak.yaml").write_text(f"name: {SECRET}\n", encoding="utf-8")
    old, new = OUTSIDE_FOLDERS[key]
    config = repo / "mkdocs.yml"
    config.write_text(config.read_text().replace(old, new.format(outside=outside)), encoding="utf-8")
    shown = "'../outside'" if "{" not in new else repr(str(outside))
    line = f"mkdocs.yml: '{key}': {shown} is outside the repository (the folder of mkdocs.yml)"
    for args in (("render", "--out", "site-tree"), ("check", "--no-cache"), ("export", "--out", "out")):
        run = cudagloss(repo, *args)
        out = run.stdout + run.stderr
        assert run.returncode == 2 and any(s.endswith(line) for s in out.splitlines()), out
        assert SECRET not in out and "Traceback" not in out
    assert not (repo / "site-tree").exists() and not (repo / "out").exists()


@pytest.mark.parametrize("key", ["terms_dir", "templates_dir", "measurements_dir"])
def test_a_link_then_dot_dot_in_a_folder_mkdocs_yml_names_is_refused(repo: Path, key: str) -> None:
    """`lnk/../terms` is not `terms`: the system follows lnk first and goes up from where it
    leads. The guard walks the components as the system does (found by a fresh-eyes attack)."""
    elsewhere = repo.parent / "outside" / "sub"
    elsewhere.mkdir()
    for name in ("terms", "templates", "measurements"):
        shutil.copytree(repo / name, repo.parent / "outside" / name)
    (repo.parent / "outside" / "terms" / "leak.yaml").write_text(f"name: {SECRET}\n", encoding="utf-8")
    (repo / "lnk").symlink_to(elsewhere)
    config = repo / "mkdocs.yml"
    folder = key.removesuffix("_dir")
    config.write_text(config.read_text(encoding="utf-8").replace(f"{key}: {folder}", f"{key}: lnk/../{folder}", 1))
    runs = [cudagloss(repo, "export"), cudagloss(repo, "check", "--no-cache")]
    out = "".join(f"{run.stdout}{run.stderr}" for run in runs)
    assert "lnk:1:1: is a symbolic link;" in out and SECRET not in out, out
    assert not (repo / "export").exists() or SECRET not in "".join(
        p.read_text(encoding="utf-8") for p in (repo / "export").rglob("*") if p.is_file()
    )
