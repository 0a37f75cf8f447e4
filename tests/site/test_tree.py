"""The plain docs tree's parts: the folder written whole, the settings read from mkdocs.yml,
the generated configuration, the page front matter, the sanitiser both builders run, and
the page the preview shows while the glossary cannot be built."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import markdown
import pytest
import yaml

from conftest import ROOT, cudagloss
from cudagloss.errors import Diagnostic, GlossaryError, UsageError
from cudagloss.files.folder import MARKER, replace_folder
from cudagloss.load.project import load_project
from cudagloss.model.project import Project
from cudagloss.site.failed import failed_page
from cudagloss.site.output import GeneratedPage, SiteContent
from cudagloss.site.sanitise import NAME as SANITISER
from cudagloss.site.tree import builder_config, page_text, tree_files
from sitebuild import build, fixture_config


def _litter(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".cudagloss-" in p.name)


def test_a_folder_is_replaced_whole_and_only_when_ours(tmp_path: Path) -> None:
    out = tmp_path / "tree"
    assert replace_folder(out, [("a/b.md", b"one"), ("c.txt", b"two")]) == 2
    assert (out / "a/b.md").read_bytes() == b"one" and (out / MARKER).is_file()
    replace_folder(out, [("d.txt", b"three")])
    assert sorted(p.name for p in out.iterdir()) == [MARKER, "d.txt"]  # the old files are gone
    assert _litter(tmp_path) == []
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.md").write_text("keep me", encoding="utf-8")
    with pytest.raises(UsageError, match="did not write"):
        replace_folder(mine, [("x", b"")])
    assert (mine / "notes.md").read_text(encoding="utf-8") == "keep me"
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(UsageError, match="not a folder"):
        replace_folder(tmp_path / "file", [])


def test_an_interrupted_write_leaves_the_previous_tree_and_no_litter(tmp_path: Path) -> None:
    out = tmp_path / "tree"
    replace_folder(out, [("page.md", b"good")])

    def interrupted() -> Iterator[tuple[str, bytes]]:
        yield "page.md", b"half"
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        replace_folder(out, interrupted())
    assert (out / "page.md").read_bytes() == b"good"
    assert _litter(tmp_path) == []
    for bad in ("../escape.md", "/abs.md", "a//b.md", "a/./b.md"):
        with pytest.raises(ValueError, match="not a path inside"):
            replace_folder(out, [(bad, b"x")])
        assert not (tmp_path / "escape.md").exists() and (out / "page.md").read_bytes() == b"good"
    assert _litter(tmp_path) == []


def test_settings_resolve_env_like_mkdocs_and_keep_only_shared_keys(tmp_path: Path) -> None:
    config = tmp_path / "mkdocs.yml"
    config.write_text(
        "site_name: G\nsite_url: !ENV [SITE_A, SITE_B, null]\nrepo_url: !ENV REPO\n"
        "theme:\n  name: material\n  custom_dir: overrides\n  features: [content.action.edit]\n"
        "hooks: [x.py]\nwatch: [src]\nmarkdown_extensions: [admonition]\n",
        encoding="utf-8",
    )
    settings = load_project(config, {"SITE_B": "https://b.example/", "REPO": "https://git.example/r"})
    assert settings.site_url == "https://b.example/" and settings.repo_url == "https://git.example/r"
    assert settings.custom_dir == tmp_path / "overrides"
    assert load_project(config, {}).site_url is None
    written = yaml.safe_load(builder_config(settings, [{"Home": "index.md"}]))
    assert "hooks" not in written and "watch" not in written and "extra" not in written
    assert written["markdown_extensions"] == ["admonition", SANITISER]  # the sanitiser always, once, last
    assert written["theme"]["custom_dir"] == "overrides" and written["edit_uri"] == ""
    config.write_text("site_name: [unclosed\n", encoding="utf-8")
    with pytest.raises(UsageError, match=r"mkdocs.yml:\d+:\d+"):
        load_project(config, {})
    config.write_text("site_name: !!python/object/apply:os.system ['true']\n", encoding="utf-8")
    with pytest.raises(UsageError):  # a safe loader: no tag may construct Python objects
        load_project(config, {})


def test_front_matter_carries_json_ld_and_edit_url_and_joins_a_templates_own() -> None:
    settings = Project(root=ROOT, site_name="G", repo_url="https://git.example/r")
    hostile = '{"name": "\\u003c/script\\u003e", "x": "--- \\n"}'
    page = GeneratedPage("terms/a.md", "# A\n\n---\n\ntext\n", "terms/a.yaml", json_ld=hostile)
    text = page_text(page, settings)
    head, _, body = text.partition("\n---\n")
    meta = yaml.safe_load(head.removeprefix("---\n"))
    assert meta == {"json_ld": hostile, "edit_url": "https://git.example/r/edit/main/terms/a.yaml"}
    assert body.strip() == "# A\n\n---\n\ntext"
    own = page_text(GeneratedPage("terms/b.md", "---\nsearch:\n  boost: 2\n---\n\n# B\n", json_ld="{}"), settings)
    meta = yaml.safe_load(own.split("---\n")[1])
    assert meta == {"search": {"boost": 2}, "json_ld": "{}"}
    assert page_text(GeneratedPage("x.md", "# X\n"), Project(root=ROOT, site_name="G")) == "# X\n"


def test_tree_files_do_not_let_a_static_file_replace_a_generated_page(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "terms").mkdir(parents=True)
    (docs / "terms" / "a.md").write_text("stray", encoding="utf-8")
    (docs / "style.css").write_text("body{}", encoding="utf-8")
    settings = Project(root=tmp_path, site_name="G", docs_dir=docs)
    content = SiteContent(pages=[GeneratedPage("terms/a.md", "# A\n")], nav=[{"Home": "index.md"}])
    files = dict(tree_files(content, settings))
    assert files["docs/terms/a.md"] == b"# A\n" and files["docs/style.css"] == b"body{}"
    os.symlink("/etc/passwd", docs / "leak.txt")  # made after the render's check: refused as it is copied
    with pytest.raises(GlossaryError, match=r"^docs/leak.txt:1:1: is a symbolic link; a file the site copies"):
        dict(tree_files(content, settings))


def test_the_sanitiser_extension_drops_what_could_run() -> None:
    html = markdown.markdown(
        '<b onclick="x()">hi</b> <script>alert(1)</script> [a](javascript:alert(1)) <img src=x onerror=y>',
        extensions=["pymdownx.superfences", SANITISER],
    )
    assert "onclick" not in html and "<script" not in html and "javascript:" not in html and "<img" not in html
    assert "<b>hi</b>" in html


@pytest.mark.builders
def test_the_preview_refuses_a_configuration_without_the_sanitiser(tmp_path: Path) -> None:
    config = fixture_config(tmp_path, ROOT / "terms", ROOT / "measurements")
    config.write_text(config.read_text(encoding="utf-8").replace(f"  - {SANITISER}\n", ""), encoding="utf-8")
    run = build(config, tmp_path / "site")
    assert run.returncode != 0 and f"add '{SANITISER}'" in run.stderr


def test_the_failure_page_shows_each_diagnostic_as_text() -> None:
    hostile = Diagnostic("terms/x.yaml", 3, 4, "bad <script>alert(1)</script>\n!!! note", hint="`fix` it")
    page = failed_page([hostile, Diagnostic("terms/y.yaml", 1, 1, "w", warning=True)])
    html = markdown.markdown(page, extensions=["admonition", SANITISER])
    assert "<script" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "terms/x.yaml:3:4: bad" in html and "1 error in term" in html and "terms/y.yaml:1:1: warning: w" in html


def test_render_refuses_bad_addresses_and_a_foreign_out_folder(tmp_path: Path) -> None:
    run = cudagloss(ROOT, "render", "--out", str(tmp_path / "t"), "--repo-url", "javascript:alert(1)")
    assert run.returncode == 2 and "not one a reader may be sent to" in run.stderr and not (tmp_path / "t").exists()
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "keep.txt").write_text("x", encoding="utf-8")
    run = cudagloss(ROOT, "render", "--out", str(tmp_path / "work"))
    assert run.returncode == 2 and "did not write" in run.stderr and (tmp_path / "work" / "keep.txt").exists()
    assert "Traceback" not in run.stderr
