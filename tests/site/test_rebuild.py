"""Rebuilding in one process (what `mkdocs serve` does after each edit): the memoised
render stage gives exactly what a fresh process would, and an edit shows everywhere it must."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT
from cudagloss.model.project import Project
from cudagloss.site.build import build_site_content
from cudagloss.site.output import SiteContent


def _copy(tmp_path: Path) -> Path:
    for name in ("terms", "measurements", "computed", "verifier"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def _build(root: Path) -> SiteContent:
    content, _ = build_site_content(
        Project(
            root=root,
            terms_dir=root / "terms",
            templates_dir=ROOT / "templates",
            site_name="CUDA Glossary",
            measurements_dir=root / "measurements",
        )
    )
    return content


def _pages(content: SiteContent) -> dict[str, str]:
    pages = {p.src_uri: p.markdown for p in content.pages}
    pages.update({f.src_uri: f.content for f in content.exports})
    return pages


def _fresh_process(root: Path) -> dict[str, str]:
    script = (
        "import json, sys; from pathlib import Path; sys.path[:0] = ['tests', 'tests/site'];"
        "import test_rebuild as t; print(json.dumps(t._pages(t._build(Path(sys.argv[1])))))"
    )
    run = subprocess.run(
        [sys.executable, "-c", script, str(root)], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return dict(json.loads(run.stdout))


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_contexts_have_no_identity_reprs(tmp_path: Path) -> None:
    """The memo keys on the page views: an object compared by its identity (shown by its
    address) would never match the same view built again, so nothing would be memoised."""
    from cudagloss.load.glossary import load_glossary
    from cudagloss.site.renderer import Renderer

    root = _copy(tmp_path)
    corpus = load_glossary(
        Project(
            root=root,
            terms_dir=root / "terms",
            measurements_dir=root / "measurements",
            computed_dir=root / "computed",
        )
    )
    renderer = Renderer(corpus, Project(root=root, templates_dir=ROOT / "templates"))
    again = Renderer(load_glossary(Project.default(root)), Project(root=ROOT, templates_dir=ROOT / "templates"))
    for t in corpus:
        assert not re.search(r" at 0x[0-9a-f]+>", repr(renderer.term_view(t.slug))), t.slug
        assert renderer.term_view(t.slug) == again.term_view(t.slug), t.slug
        assert hash(renderer.term_view(t.slug)) == hash(again.term_view(t.slug)), t.slug


def test_edits_rebuilt_in_one_process_match_a_fresh_build(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    first = _pages(_build(root))
    # A definition: shown in the term's page, the tooltips of every page that links to it,
    # the index, its section page and the export.
    _edit(root / "terms" / "ptx.yaml", "definition: ", "definition: EDITED-DEFINITION ")
    # A body: only that term's page (and the export), plus the backlinks it adds.
    _edit(root / "terms" / "sass.yaml", "body: |\n  ", "body: |\n  EDITED-BODY, see fat binary. ")
    second = _pages(_build(root))
    assert second == _fresh_process(root)
    changed = {uri for uri in first if first[uri] != second.get(uri)}
    assert "terms/ptx.md" in changed and "terms/sass.md" in changed and "index.md" in changed
    linking_to_ptx = [uri for uri, md in second.items() if "ptx.md" in md and uri.startswith("terms/")]
    assert linking_to_ptx
    for uri in linking_to_ptx:
        if 'ptx.md "' in second[uri]:
            assert "EDITED-DEFINITION" in second[uri], uri
    assert "EDITED-BODY" in second["terms/sass.md"] and "EDITED-BODY" in second["llms-full.txt"]
    # A measured value: the pages citing it change.
    measurement = root / "measurements" / "ptx-jit" / "h200-3f1ceb1e.json"
    data = json.loads(measurement.read_text(encoding="utf-8"))
    result = next(r for r in data["results"] if r["name"] == "load_jit_cache_disabled_median")
    result["value"] = 19.87  # within what the claims on it allow
    measurement.write_text(json.dumps(data), encoding="utf-8")
    third = _pages(_build(root))
    assert third == _fresh_process(root)
    assert third["terms/jit-compilation.md"] != second["terms/jit-compilation.md"]
