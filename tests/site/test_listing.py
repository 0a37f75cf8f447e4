"""`{{ listing("experiment", "result") }}` (issue 30, part 3): a text result a GPU node recorded,
such as the SASS of a timed kernel, shown as a code block with the node it came from; a number
is refused (it is `measured`'s), and the text stays text whatever it holds."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT
from cudagloss.errors import GlossaryError
from cudagloss.load.glossary import load_glossary
from cudagloss.model.project import Project
from cudagloss.site.renderer import Renderer
from fleets import FLEETS


def _page(tmp_path: Path, fleet: str, directive: str, arch: str | None = None, drop_measured_arch: bool = False) -> str:
    shutil.copytree(FIXTURES / "fleet" / "terms", tmp_path / "terms")
    term = tmp_path / "terms" / "copy-bandwidth.yaml"
    body = term.read_text(encoding="utf-8").replace("body: |\n", f"body: |\n  Listed:\n\n  {directive}\n\n", 1)
    if drop_measured_arch:
        body = body.replace('built for {{ measured("copy-bench", "arch") }}', "built for its target")
    term.write_text(body, encoding="utf-8")
    folder = tmp_path / "measurements" / "copy-bench"
    folder.mkdir(parents=True)
    for record in FLEETS[fleet]:
        if arch is not None:
            record = json.loads(json.dumps(record))
            next(r for r in record["results"] if r["name"] == "arch")["value"] = arch
        (folder / f"{record['provenance']['node']}.json").write_text(json.dumps(record), encoding="utf-8")
    project = Project(
        root=tmp_path, terms_dir=tmp_path / "terms", templates_dir=ROOT / "templates", measurements_dir=folder.parent
    )
    return Renderer(load_glossary(project), project).term_page("copy-bandwidth").markdown


def test_a_text_result_is_a_code_block_under_the_node_it_came_from(tmp_path: Path) -> None:
    page = _page(tmp_path, "one-node", '{{ listing("copy-bench", "arch") }}')
    caption = (
        "[Recorded on NVIDIA H200 (card h200-a) by make verify, 2026-11-20](../measurements/copy-bench.md#h200-a-arch):"
    )
    assert f"{caption}\n\n```text\nsm_90\n```" in page
    # A listing is not a row of the Measured table (the row there is the body's measured("copy-bench", "arch")).
    assert page.count("| the target compiled for |") == 1
    alone = _page(tmp_path / "alone", "one-node", '{{ listing("copy-bench", "arch") }}', drop_measured_arch=True)
    assert "| the target compiled for |" not in alone


def test_nodes_that_recorded_other_text_are_said_to_have(tmp_path: Path) -> None:
    page = _page(tmp_path, "twelve-nodes", '{{ listing("copy-bench", "arch") }}')
    assert "2026-11-10; other cards recorded other text](" in page


def test_a_number_is_refused_at_its_place(tmp_path: Path) -> None:
    with pytest.raises(GlossaryError) as info:
        _page(tmp_path, "one-node", '{{ listing("copy-bench", "sm_count") }}')
    (error,) = info.value.errors
    assert error.message == "body: listing('copy-bench', 'sm_count'): 'sm_count' is not a text result"
    assert (error.line, error.col) == (10, 3) and "measured(" in error.hint


def test_hostile_text_stays_in_its_block(tmp_path: Path) -> None:
    hostile = "```\n</code></pre><script>alert(1)</script>\n{{ measured('x', 'y') }}"
    page = _page(tmp_path, "one-node", '{{ listing("copy-bench", "arch") }}', arch=hostile)
    assert f"````text\n{hostile}\n````" in page  # fenced with more backticks than it holds; braces not read again
