"""bench/RESULTS.md and the README's table, from the latest bench/results/*.json.

python bench/report.py
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import RESULTS, ROOT

from cudagloss.boundary import guarded
from cudagloss.files.atomic import write_text_atomic
from cudagloss.files.inside import refuse_links, refuse_read_links

ORDER = ["build", "check", "serve", "links", "verify", "byline", "hostile"]


README_START, README_END = "<!-- bench:start -->", "<!-- bench:end -->"


def _summary(found: dict[str, dict[str, Any]]) -> str:
    """One table of every row, each benchmark's date, machine and commit in its first cell."""
    lines = ["| benchmark | what | figure | target | met |", "|---|---|---|---|---|"]
    for name in sorted(found, key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n)):
        data = found[name]
        where = f"**{name}**<br>{data['date']}<br>{data['machine']}<br>commit {data['commit']}"
        for i, r in enumerate(data["rows"]):
            met = {True: "yes", False: "**no**", None: ""}[r["met"]]
            lines.append(f"| {where if i == 0 else ''} | {r['what']} | {r['figure']} | {r['target']} | {met} |")
    return "\n".join(lines) + "\n"


def _result(path: Path) -> dict[str, Any]:
    """One benchmark's result, never read through a committed link at it or a folder above it
    (it would be published in README.md from anywhere): one line, as every read is guarded."""
    refuse_read_links(path, ROOT, "a benchmark result")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def main() -> int:
    return guarded("python bench/report.py", _write)


def _write() -> int:
    refuse_read_links(RESULTS, ROOT, "the results folder")
    found = {p.stem: _result(p) for p in sorted(RESULTS.glob("*.json"))}
    lines = [
        "# Benchmark results",
        "",
        "Written by `make bench` (`python bench/report.py`) from `bench/results/*.json`; each benchmark",
        "measures its ratios in one run on one machine. The GPU figures come from `bench/verify.py` run on a",
        "GPU node. Do not edit by hand.",
        "",
    ]
    for name in sorted(found, key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n)):
        data = found[name]
        lines += [f"## {name}", "", f"{data['date']}, {data['machine']}, commit {data['commit']}.", ""]
        lines += ["| what | figure | target | met |", "|---|---|---|---|"]
        for r in data["rows"]:
            met = {True: "yes", False: "**no**", None: ""}[r["met"]]
            lines.append(f"| {r['what']} | {r['figure']} | {r['target']} | {met} |")
        if data.get("notes"):
            lines += ["", data["notes"]]
        lines.append("")
    missing = [n for n in ORDER if n not in found]
    if missing:
        lines += [f"Not run yet: {', '.join(missing)}.", ""]
    readme = ROOT / "README.md"
    for path in (ROOT / "bench" / "RESULTS.md", readme):  # never through a committed link
        refuse_links(path, ROOT)
    write_text_atomic(ROOT / "bench" / "RESULTS.md", "\n".join(lines))
    text = readme.read_text(encoding="utf-8")
    start, end = text.find(README_START), text.find(README_END)
    if 0 <= start < end:
        table = _summary(found)
        write_text_atomic(readme, text[: start + len(README_START)] + "\n" + table + text[end:])
    print(f"wrote bench/RESULTS.md and the README's table ({len(found)} benchmarks)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
