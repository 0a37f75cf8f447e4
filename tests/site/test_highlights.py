"""Measured, not typed (issue 30, part 5): a term's `highlight` is a sentence of what its
measurements show that a reader would not expect; the home page lists them in reading order,
each value cited (never typed), linked to its row, checked like the body."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT
from cudagloss.errors import GlossaryError
from cudagloss.load.glossary import load_glossary
from cudagloss.model.project import Project
from cudagloss.site.renderer import Renderer


def _project(tmp_path: Path, highlight: str) -> Project:
    shutil.copytree(FIXTURES / "good", tmp_path / "terms")
    shutil.copytree(FIXTURES / "good-measurements", tmp_path / "measurements")
    warp = tmp_path / "terms" / "warp.yaml"
    text = warp.read_text(encoding="utf-8").replace("measurements:\n", f"highlight: {highlight}\nmeasurements:\n", 1)
    warp.write_text(text, encoding="utf-8")
    return Project(
        root=tmp_path,
        terms_dir=tmp_path / "terms",
        templates_dir=ROOT / "templates",
        measurements_dir=tmp_path / "measurements",
    )


def test_the_home_page_shows_each_highlight_with_its_values_linked(tmp_path: Path) -> None:
    project = _project(tmp_path, '\'A warp had {{ measured("warp-size", "warp_size") }} <b>everywhere</b>.\'')
    home = Renderer(load_glossary(project), project).index_page().markdown
    section = home.split("## Measured, not typed\n", 1)[1].split("\n## ", 1)[0]
    assert "- **[warp](terms/warp.md).** A warp had [32 threads](measurements/warp-size.md#" in section
    assert "&lt;b>everywhere" in section and "<b>" not in section  # raw HTML shown as text, as in a body


@pytest.mark.parametrize(
    ("highlight", "said"),
    [
        (
            '\'Had {{ measured("warp-size", "nope") }}.\'',
            "highlight: measured('warp-size', 'nope'): experiment 'warp-size' has no result",
        ),
        ("'Every warp holds 32 threads.'", "highlight: '32 threads' is a number about a GPU typed by hand"),
        ("'Had {{ oops() }}.'", "highlight: not a directive: '{{ oops() }}'"),
    ],
)
def test_a_highlight_is_checked_like_the_body_at_its_place(tmp_path: Path, highlight: str, said: str) -> None:
    with pytest.raises(GlossaryError) as info:
        load_glossary(_project(tmp_path, highlight))
    found = [d for d in info.value.errors if d.message.startswith("highlight:")]
    assert found and found[0].message.startswith(said), [d.message for d in info.value.errors]
    assert found[0].path.endswith("warp.yaml")


def test_no_highlight_no_section(tmp_path: Path) -> None:
    project = _project(tmp_path, "''")
    assert "Measured, not typed" not in Renderer(load_glossary(project), project).index_page().markdown
