"""Benchmark: the site build at 100, 1,000 and 5,000 terms, against plain Material.

For each size it writes a synthetic corpus (every field filled, related terms, sources, a
measurement citation against the fixture measurement JSON) and times three builds in the
same run:
- ours: `mkdocs build` with the glossary hooks (load, validate, render, build);
- plain: the same final Markdown pages, written to a docs folder, built by plain Material
  with the same configuration and the same sections-only navigation;
- sidebar: the same pages with every term listed in the navigation.

    python bench/build.py [--sizes 100,1000,5000] [--sidebar-max 1000] [--repeats 3]

Each variant is built --repeats times, taking turns, and the fastest build counts (the
machine is shared: the minimum is the least disturbed figure).

The all-in-sidebar build grows quadratically, so it runs only up to --sidebar-max terms.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, row, save

from cudagloss.model.urls import section_src_uri, term_src_uri
from cudagloss.site.build import build_site_content

FIXTURE_MEAS = Path("tests/fixtures/good-measurements")
MEASUREMENTS = ROOT / FIXTURE_MEAS
SECTIONS = 10
WORDS = ["kernel", "warp", "block", "grid", "stream", "launch", "occupancy", "register", "memory", "cache"]


def name(i: int) -> str:
    return f"{WORDS[i % 10].capitalize()} {WORDS[(i // 10) % 10]} {i:05d}"


def write_corpus(terms: Path, n: int) -> None:
    terms.mkdir(parents=True)
    sections = "".join(
        f"  - slug: s{k}\n    title: Section {k}\n    description: Terms of group {k}.\n" for k in range(SECTIONS)
    )
    (terms / "_sections.yaml").write_text(f"sections:\n{sections}", encoding="utf-8")
    for i in range(n):
        others = [(i + d) % n for d in (1, 7, 31) if (i + d) % n != i]
        body = "\n\n".join(
            f"Paragraph {p} of {name(i)}: it works with {name(others[p % len(others)])} when a "
            f"{WORDS[p]} is involved, and its `code_{p}` matters. " * 3
            for p in range(3)
        )
        related = "".join(f"  - t{o:05d}\n" for o in others[:2])
        text = f"""# yaml-language-server: $schema=../schema/term.schema.json
name: {name(i)}
title: What is {name(i)}?
definition: The synthetic term number {i}, defined in one sentence for the benchmark.
section: s{i % SECTIONS}
aliases: [alias {i:05d}]
abbreviations: [T{i:05d}]
error_strings: ["synthetic error {i}"]
body: |
  {body.replace(chr(10), chr(10) + "  ")}

  A warp holds {{{{ measured("warp-size", "warp_size") }}}}.
related:
{related}where_you_meet_this:
  - label: An API {i}
    link: https://example.com/api/{i}
    note: Where it shows up.
sources:
  - title: Source A of {i}
    url: https://example.com/a/{i}
    checked_on: 2026-11-01
  - title: Source B of {i}
    url: https://example.com/b/{i}
measurements:
  - experiment: warp-size
    note: The warp size.
byline:
  written_by: Bench Author
  reviewed_by: Bench Reviewer
  written_on: 2026-10-01
  last_checked_on: pending
"""
        (terms / f"t{i:05d}.yaml").write_text(text, encoding="utf-8")


def config(folder: Path, *, hooks: bool, nav: list[object] | None, terms: Path, tree: Path = ROOT) -> Path:
    """tree's mkdocs.yml (this checkout's by default) in folder, built with or without the hooks."""
    text = (tree / "mkdocs.yml").read_text(encoding="utf-8")
    text = re.sub(r"\nwatch:\n(  - .*\n)+", "\n", text).replace("strict: true", "strict: false")
    text = text.replace("custom_dir: overrides", f"custom_dir: {tree / 'overrides'}")
    if hooks:
        text = text.replace("docs_dir: docs", f"docs_dir: {tree / 'docs'}")
        text = text.replace("  - site_hooks/glossary.py", f"  - {tree / 'site_hooks/glossary.py'}")
        text = text.replace("    terms_dir: terms", f"    terms_dir: {terms}")
        text = text.replace("    templates_dir: templates", f"    templates_dir: {tree / 'templates'}")
        text = text.replace("    measurements_dir: measurements", f"    measurements_dir: {tree / FIXTURE_MEAS}")
    else:
        text = re.sub(r"\nhooks:\n(  - .*\n)+", "\n", text)
        import json

        text += "\nnav: " + json.dumps(nav) + "\n"
    path = folder / "mkdocs.yml"
    path.write_text(text, encoding="utf-8")
    return path


def timed_build(cfg: Path, site: Path, **env_extra: str) -> float:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", **env_extra}
    t0 = time.perf_counter()
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(cfg), "-d", str(site)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    wall = time.perf_counter() - t0
    if run.returncode != 0:
        raise SystemExit(f"build failed: {cfg}\n{run.stderr[-2000:]}")
    return wall


def measure(n: int, work: Path, sidebar: bool, repeats: int) -> dict[str, float]:
    """The fastest of `repeats` builds of each variant, the variants taking turns."""
    terms = work / "terms"
    write_corpus(terms, n)
    ours_dir = work / "ours"
    ours_dir.mkdir()
    configs = {"ours": config(ours_dir, hooks=True, nav=None, terms=terms)}
    content, _ = build_site_content(
        terms, ROOT / "templates", repo_root=work, site_name="CUDA Glossary", measurements_dir=MEASUREMENTS
    )
    for variant in ("plain", "sidebar") if sidebar else ("plain",):
        folder = work / variant
        docs = folder / "docs"
        shutil.copytree(ROOT / "docs", docs)
        for page in content.pages:
            (docs / page.src_uri).parent.mkdir(parents=True, exist_ok=True)
            (docs / page.src_uri).write_text(page.markdown, encoding="utf-8")
        for raw in content.files:
            (docs / raw.src_uri).parent.mkdir(parents=True, exist_ok=True)
            (docs / raw.src_uri).write_text(raw.content, encoding="utf-8")
        nav: list[object] = list(content.nav)
        if variant == "sidebar":
            by_section: dict[str, list[object]] = {}
            for page in content.pages:
                if page.src_uri.startswith("terms/"):
                    slug = page.src_uri.removeprefix("terms/").removesuffix(".md")
                    section = f"s{int(slug[1:]) % SECTIONS}"
                    by_section.setdefault(section, []).append(term_src_uri(slug))
            nav = [{"Home": "index.md"}] + [
                {f"Section {k}": [section_src_uri(f"s{k}"), *by_section.get(f"s{k}", [])]} for k in range(SECTIONS)
            ]
        configs[variant] = config(folder, hooks=False, nav=nav, terms=terms)
    times: dict[str, list[float]] = {variant: [] for variant in configs}
    for _ in range(repeats):
        for variant, cfg in configs.items():
            times[variant].append(timed_build(cfg, work / f"site-{variant}"))
    return {variant: min(found) for variant, found in times.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,1000,5000")
    parser.add_argument("--sidebar-max", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3, help="builds of each variant; the fastest counts")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    found: dict[int, dict[str, float]] = {}
    print(f"{'terms':>6} {'ours s':>8} {'plain s':>8} {'sidebar s':>10} {'ours÷plain':>11} {'sidebar÷ours':>13}")
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix=f"bench-build-{n}-") as tmp:
            t = found[n] = measure(n, Path(tmp), n <= args.sidebar_max, args.repeats)
        side = t.get("sidebar")
        side_s = f"{side:>10.1f}" if side else f"{'-':>10}"
        ratio = f"{side / t['ours']:>13.2f}" if side else f"{'-':>13}"
        print(f"{n:>6} {t['ours']:>8.1f} {t['plain']:>8.1f} {side_s} {t['ours'] / t['plain']:>11.2f} {ratio}")
    rows = []
    for n, t in found.items():
        over = t["ours"] / t["plain"] - 1
        rows.append(
            row(
                f"{n} terms: ours vs plain Material",
                f"{t['ours']:.1f} s vs {t['plain']:.1f} s (+{over:.0%})",
                "≤ +10%",
                over <= 0.10,
            )
        )
        if "sidebar" in t:
            faster = t["sidebar"] / t["ours"]
            rows.append(
                row(
                    f"{n} terms: all-in-sidebar ÷ ours",
                    f"{faster:.1f}×",
                    "≥ 8× at 1,000" if n == 1000 else "",
                    faster >= 8 if n == 1000 else None,
                )
            )
    if 1000 in found and 5000 in found:
        growth = found[5000]["ours"] / found[1000]["ours"]
        rows.append(row("ours: 5,000 terms ÷ 1,000 terms", f"{growth:.2f}×", "≤ 5.5×", growth <= 5.5))
    save(
        "build",
        rows,
        notes=f"Each figure is the fastest of {args.repeats} builds of that variant, the variants taking turns.",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
