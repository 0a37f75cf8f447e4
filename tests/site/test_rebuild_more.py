"""More edits rebuilt in one process (what `mkdocs serve` does), each compared with a fresh
process: the render memos (site.memo.Pinned, keyed by loaded terms' identities and a rest)
must miss whenever a page's inputs changed, though the term the page is about did not.

Everything a build hands MkDocs is compared, not only the Markdown: the JSON-LD and edit
link of each page, the navigation, the raw files and the exports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from test_rebuild import _copy, _edit

from conftest import ROOT
from cudagloss.model.project import Project
from cudagloss.site.build import build_site_content
from cudagloss.site.incremental import page_fingerprints
from cudagloss.site.output import SiteContent

SITE = ("CUDA Glossary", None)
OTHER_SITE = ("Another Glossary", "https://example.org/glossary/")

NEW_TERM = """\
# yaml-language-server: $schema=../schema/term.schema.json
name: Warp scheduler
title: What is a warp scheduler?
definition: The part of a streaming multiprocessor that picks which warp issues next.
section: execution
body: |
  Each streaming multiprocessor issues instructions from its warps through its warp
  schedulers.
related:
  - warp
"""


def _build(root: Path, site: tuple[str, str | None] = SITE) -> SiteContent:
    content, _ = build_site_content(
        Project(
            root=root,
            terms_dir=root / "terms",
            templates_dir=ROOT / "templates",
            site_name=site[0],
            site_url=site[1],
            measurements_dir=root / "measurements",
        )
    )
    return content


def _everything(content: SiteContent) -> dict[str, Any]:
    """What MkDocs is given, by source URI (a page's Markdown, JSON-LD, edit link, nav flag)."""
    found: dict[str, Any] = {p.src_uri: [p.markdown, p.json_ld, p.edit_uri, p.in_nav] for p in content.pages}
    found.update({f.src_uri: f.content for f in (*content.files, *content.exports)})
    found[" nav"] = json.loads(json.dumps(content.nav))
    return found


def _fresh_process(root: Path, site: tuple[str, str | None] = SITE) -> dict[str, Any]:
    script = (
        "import json, sys; from pathlib import Path; sys.path[:0] = ['tests', 'tests/site'];"
        "import test_rebuild_more as t; site = json.loads(sys.argv[2]);"
        "print(json.dumps(t._everything(t._build(Path(sys.argv[1]), tuple(site)))))"
    )
    run = subprocess.run(
        [sys.executable, "-c", script, str(root), json.dumps(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(run.stdout))


def _differing(ours: dict[str, Any], fresh: dict[str, Any]) -> list[str]:
    """Each URI whose output differs, and in which part, so a failure names the stale memo."""
    parts = ("markdown", "json_ld", "edit_uri", "in_nav")
    out = []
    for uri in sorted(set(ours) | set(fresh)):
        a, b = ours.get(uri), fresh.get(uri)
        if a == b:
            continue
        if isinstance(a, list) and isinstance(b, list):
            out.append(f"{uri}: {', '.join(n for n, x, y in zip(parts, a, b, strict=True) if x != y)}")
        else:
            out.append(f"{uri}: {'missing' if a is None else 'extra' if b is None else 'content'}")
    return out


def test_edits_to_what_other_pages_show_rebuild_like_a_fresh_process(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    terms = root / "terms"
    first = _everything(_build(root))
    # A related term's name (shown on the pages it is related to, or that link to it).
    _edit(terms / "nvlink.yaml", "name: NVLink\n", "name: NVLink RENAMED\n")
    # A term deleted (its one referrer edited, so the glossary stays valid) and one added,
    # whose name other bodies use (they link to it now) and which relates to warp.
    (terms / "unified-virtual-addressing.yaml").unlink()
    _edit(terms / "peer-to-peer-access.yaml", "  - unified-virtual-addressing\n", "")
    (terms / "warp-scheduler.yaml").write_text(NEW_TERM, encoding="utf-8")
    # A section's title, shown on every term page of the section and in the navigation.
    _edit(terms / "_sections.yaml", "title: Memory\n", "title: Memory RETITLED\n")
    # The facts file (read by the check, rendered nowhere).
    _edit(terms / "_facts.yml", "reason: >-\n", "reason: >-\n      EDITED.\n")
    # One card's earlier run of an experiment (its latest run stays).
    (root / "measurements" / "atomics" / "h200-3f1ceb1e~20261204T175938Z.json").unlink()
    second = _everything(_build(root))
    fresh = _fresh_process(root)
    assert _differing(second, fresh) == []
    changed = {uri for uri in first if first[uri] != second.get(uri)}
    assert {"terms/peer-to-peer-access.md", "terms/warp.md", "terms/streaming-multiprocessor.md"} <= changed
    assert "NVLink RENAMED" in second["terms/peer-to-peer-access.md"][0]
    assert "Memory RETITLED" in second["terms/hbm.md"][0]
    assert "warp-scheduler.md" in second["terms/streaming-multiprocessor.md"][0]
    assert "terms/unified-virtual-addressing.md" not in second


def test_another_site_name_and_address_rebuild_like_a_fresh_process(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    first = _everything(_build(root))
    second = _everything(_build(root, OTHER_SITE))
    assert _differing(second, _fresh_process(root, OTHER_SITE)) == []
    assert "https://example.org/glossary/" in second["terms/ptx.md"][1] and second != first
    assert _differing(_everything(_build(root)), first) == []  # and back


def test_a_dirty_build_rebuilds_every_page_whose_output_changed(tmp_path: Path) -> None:
    """`make serve` runs `mkdocs serve --dirty`: only pages whose fingerprint changed are
    rebuilt (site.incremental). An alias is in the home page's JSON-LD (the term set's
    alternateName) but not in its Markdown: the fingerprint must see the JSON-LD too."""
    root = _copy(tmp_path)
    before = _build(root)
    _edit(root / "terms" / "nvlink.yaml", "  - NVSwitch\n", "  - NVSwitch\n  - NVLINK-ALIAS\n")
    after = _build(root)
    old, new = page_fingerprints(before), page_fingerprints(after)
    full_old, full_new = _everything(before), _everything(after)
    missed = [uri for uri in new if full_old.get(uri) != full_new[uri] and old.get(uri) == new[uri]]
    assert missed == [], f"changed, but a dirty build would not rebuild: {missed}"
