"""Every contributor body is contained in its entry of llms-full.txt (issue 39, class 8): a line
that looks like a fence and is none in CommonMark, or a fence never closed, neither lets a body's
heading stand as an entry nor turns a later entry into code. The export is built by the real
`cudagloss export` and read back by a CommonMark parser, as a reader's tool would read it."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from markdown_it import MarkdownIt

from conftest import FIXTURES, ROOT, cudagloss

HOSTILE = {
    "info-backtick": "``` a`b\n## Warp\n```",
    "indented-opening": "Text.\n\n    ```\n## Warp\n    ```",
    "tab-opening": "Text.\n\n\t```\n## Warp\n\t```",
    "short-closing": "````\ncode\n```\n## Warp",
    "other-closing": "```\ncode\n~~~\n## Warp",
    "indented-closing": "```\ncode\n    ```\n```\n## Warp",
    "closing-with-info": "```\ncode\n``` not a closing fence\n## Warp",
    "unclosed-tilde": "Intro.\n\n~~~~python\nnever closed",
    "unclosed-last-line": "Intro.\n\n```",
    "fence-in-list": "- ```\n  ## inside\n  ```\n\n## Warp",
    "heading-in-list": "- ## Warp\n\n> ## Quoted entry",
    "pre-past-a-list": "- item\n\n   ```\n<pre>\n   ```",
    "setext-in-quote": "> Posing as\n> an entry\n> ===\n\nThread block\n---",
}
"""A term per case, named after it: each body tries to end its entry early or never."""
MODELINE = "# yaml-language-server: $schema=../schema/term.schema.json"


def _glossary(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(FIXTURES / "good", root / "terms")
    shutil.copytree(ROOT / "templates", root / "templates")
    shutil.copytree(FIXTURES / "good-measurements", root / "measurements")
    for slug, body in HOSTILE.items():
        lines = "".join(f"  {line}\n" if line else "\n" for line in body.split("\n"))
        head = f"{MODELINE}\nname: {slug}\ntitle: What is {slug}?\ndefinition: A hostile body.\nsection: gadgets\n"
        (root / "terms" / f"{slug}.yaml").write_text(f"{head}body: |\n{lines}", encoding="utf-8")
    # A definition and a note are author Markdown too, printed inside the template's own lines.
    lane = root / "terms" / "lane.yaml"
    lane.write_text(
        lane.read_text(encoding="utf-8").replace(
            "definition: One thread's position within its warp, from 0 to 31.\n",
            "definition: |\n  One thread's position.\n  ## Warp\n  ```\n  Never closed.\n"
            "where_you_meet_this:\n  - label: a place\n    note: |\n      A note.\n      ## Note entry\n      ~~~\n",
        ),
        encoding="utf-8",
    )
    grid = root / "terms" / "2d-grid.yaml"
    text = grid.read_text(encoding="utf-8")
    grid.write_text(re.sub(r"(?m)^definition: .*\n(  .*\n)*", "definition: '## Warp, on one line.'\n", text), "utf-8")
    return root


def test_each_body_stays_in_its_entry_and_no_entry_turns_into_code(tmp_path: Path) -> None:
    root = _glossary(tmp_path)
    run = cudagloss(root, "export", "terms", "--out", "export")
    assert run.returncode == 0, run.stderr
    text = (root / "export" / "llms-full.txt").read_text(encoding="utf-8")
    tokens = MarkdownIt("commonmark").parse(text)
    headings = [
        (tokens[i].tag, tokens[i + 1].content, tokens[i].level)
        for i, t in enumerate(tokens)
        if t.type == "heading_open"
    ]
    entries = [name for tag, name, _ in headings if tag == "h2"]
    expected = sorted(["2D grid", "lane", "thread block", "warp", *HOSTILE], key=str.casefold)
    assert [e.casefold() for e in entries] == [e.casefold() for e in expected]
    assert all(level == 0 for tag, _, level in headings if tag in ("h1", "h2", "h3")), "no heading above ### nested"
    parts = {name for tag, name, _ in headings if tag == "h3"}
    assert parts <= {"Explanation (contributor text)", "Measured", "Related terms", "Where you meet this", "Sources"}
    code = "\n".join(t.content for t in tokens if t.type in ("fence", "code_block"))
    for name in expected:  # no entry's heading, nor its byline, sits inside code
        assert f"## {name}\n" not in code
    assert "Written by" not in code
    assert "never closed" in code and "## inside" in code and "<pre>" in code  # code stays code
    # Set apart, not hidden: headings moved down, prose still prose where a fence is closed for it
    assert {("h5", "Warp"), ("h5", "Quoted entry"), ("h4", "Posing as an entry")} <= {(t, n) for t, n, _ in headings}
    prose = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "paragraph_open"]
    assert prose.count("Intro.") == 2 and "code" not in prose
