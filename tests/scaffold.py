"""A term as `cudagloss new` writes it, with its placeholders filled in: what the link and
byline tests start from (every byline field pending, no date stamped)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from pathlib import Path

from conftest import FIXTURES, cudagloss
from cudagloss.commands.new import SOURCES, term_text
from cudagloss.model.term import PLACEHOLDER


def filled(text: str, sources: str = "") -> str:
    """text, as term_text writes it, with sources (YAML list items, or none) for its placeholder
    source and each other placeholder's words kept as the author's ('FILL IN: ' dropped)."""
    assert SOURCES in text, "the scaffold's sources changed: change this helper with it"
    text = text.replace(SOURCES, f"sources:\n{sources}" if sources else "sources: []\n")
    return text.replace(f"{PLACEHOLDER}: ", "")


def scaffold(name: str, sources: str = "") -> str:
    """A valid term named name in section 'widgets', citing sources (YAML list items)."""
    return filled(term_text(name, "widgets", ["widgets"]), sources)


def good_glossary(root: Path, sources: str) -> Path:
    """The good fixture corpus and its measurements copied into root (terms/, measurements/),
    with warp.yaml citing sources (a whole `sources:` block) in place of its own; root."""
    shutil.copytree(FIXTURES / "good", root / "terms")
    shutil.copytree(FIXTURES / "good-measurements", root / "measurements")
    warp = root / "terms" / "warp.yaml"
    text = warp.read_text(encoding="utf-8")
    start, end = text.index("sources:\n"), text.index("measurements:\n")
    warp.write_text(text[:start] + sources + text[end:], encoding="utf-8")
    return root


def quote_results(root: Path, server: str, paths: Iterable[str], quote: str) -> dict[str, dict[str, str]]:
    """Run the real `cudagloss links` on the good glossary (copied into root) citing server's
    paths, each with quote, and return each path's quote result from its report."""
    sources = "sources:\n" + "".join(
        f'  - title: Page {path}\n    url: {server}{path}\n    quote: "{quote}"\n' for path in paths
    )
    good_glossary(root, sources)
    run = cudagloss(root, "links", "terms", "--no-archive", "--report", "links.json")
    assert "Traceback" not in run.stderr, run.stderr
    report = json.loads((root / "links.json").read_text())
    return {r["url"].removeprefix(server): r["quotes"][0] for r in report["results"]}
