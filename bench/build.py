"""Benchmark: the published build at 1,000 and 5,000 terms, against plain Material.

For each size it writes a synthetic corpus (every field filled, related terms, sources, a
measurement citation against the fixture measurement JSON) into a copy of this repository's
site files, and times, in the same run, taking turns:
- ours: what `make build` runs, `cudagloss render` (load, check, render, write the tree)
  then `mkdocs build` of that tree, with an empty check cache (a clean clone, as CI builds);
- ours, warm: the same with the check cache of a previous run (an author building again);
- plain: the same final Markdown pages, written to a docs folder, built by stock Material
  with the same configuration and the same sections-only navigation, no hooks and none of
  our Markdown extensions;
- zensical: `cudagloss render`, then Zensical building the tree (for information);
- sidebar: the plain pages with every term listed in the navigation (for information; it
  grows quadratically, so it is built once at sizes over --sidebar-once).

    python bench/build.py [--sizes 1000,5000] [--repeats 3]

The fastest of --repeats builds counts (the machine is shared: the minimum is the least
disturbed figure); peak memory is the largest resident set of any process of a build
(os.wait4), the lowest of the repeats.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import ROOT, refuse_committed_links, row, save

from cudagloss.model.project import Project
from cudagloss.model.urls import section_src_uri, term_src_uri
from cudagloss.site.build import build_site_content

FIXTURE_MEAS = Path("tests/fixtures/good-measurements")
MEASUREMENTS = ROOT / FIXTURE_MEAS
SECTIONS = 10
WORDS = ["kernel", "warp", "block", "grid", "stream", "launch", "occupancy", "register", "memory", "cache"]
Timing = tuple[float, int]
"""Seconds and peak resident kilobytes of one build."""


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
        text = re.sub(r"\n  - cudagloss\.site\.sanitise\n", "\n", text)
        text += "\nnav: " + json.dumps(nav) + "\n"
    path = folder / "mkdocs.yml"
    path.write_text(text, encoding="utf-8")
    return path


def run(command: list[str], cwd: Path, **env_extra: str) -> Timing:
    """Run command; its wall time and peak resident set (KB), or exit with its output."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", **env_extra}
    t0 = time.perf_counter()
    proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(command)}\n{out.decode(errors='replace')[-2000:]}")
    return wall, usage.ru_maxrss


def mkdocs(cfg: Path, site: Path) -> list[str]:
    return [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(cfg), "-d", str(site)]


def timed_build(cfg: Path, site: Path, **env_extra: str) -> float:
    """The wall time of one MkDocs build of cfg (bench/build_ab.py's unit)."""
    return run(mkdocs(cfg, site), cfg.parent, **env_extra)[0]


PARTS: dict[str, list[float]] = {}
"""The seconds of each render and each builder run, by variant, for the printout."""


def both(first: Timing, second: Timing, variant: str = "") -> Timing:
    """Two steps of one build run one after the other: their times add, peak memory is the larger."""
    if variant:
        PARTS.setdefault(f"{variant} render", []).append(first[0])
        PARTS.setdefault(f"{variant} builder", []).append(second[0])
    return first[0] + second[0], max(first[1], second[1])


def repo_copy(work: Path, n: int) -> Path:
    """A glossary repository of n synthetic terms: this checkout's site files, the fixture
    measurements, no verifier (its catalog would refuse the fixture's experiment)."""
    repo = work / "repo"
    write_corpus(repo / "terms", n)
    shutil.copy(ROOT / "mkdocs.yml", repo / "mkdocs.yml")
    for folder in ("docs", "overrides", "templates"):
        shutil.copytree(ROOT / folder, repo / folder)
    shutil.copytree(MEASUREMENTS, repo / "measurements")
    return repo


def plain_docs(work: Path, repo: Path, *, sidebar: bool) -> Path:
    """The final pages in a docs folder for stock Material; its mkdocs.yml."""
    content, _ = build_site_content(
        Project(
            root=repo,
            terms_dir=repo / "terms",
            templates_dir=ROOT / "templates",
            site_name="CUDA Glossary",
            measurements_dir=MEASUREMENTS,
        )
    )
    folder = work / ("sidebar" if sidebar else "plain")
    docs = folder / "docs"
    shutil.copytree(ROOT / "docs", docs)
    for page in content.pages:
        (docs / page.src_uri).parent.mkdir(parents=True, exist_ok=True)
        (docs / page.src_uri).write_text(page.markdown, encoding="utf-8")
    for raw in content.files:
        (docs / raw.src_uri).parent.mkdir(parents=True, exist_ok=True)
        (docs / raw.src_uri).write_text(raw.content, encoding="utf-8")
    nav: list[object] = list(content.nav)
    if sidebar:
        by_section: dict[str, list[object]] = {}
        for page in content.pages:
            if page.src_uri.startswith("terms/"):
                slug = page.src_uri.removeprefix("terms/").removesuffix(".md")
                by_section.setdefault(f"s{int(slug[1:]) % SECTIONS}", []).append(term_src_uri(slug))
        nav = [{"Home": "index.md"}] + [
            {f"Section {k}": [section_src_uri(f"s{k}"), *by_section.get(f"s{k}", [])]} for k in range(SECTIONS)
        ]
    return config(folder, hooks=False, nav=nav, terms=repo / "terms")


def measure(n: int, work: Path, repeats: int, sidebar_once: int, *, sidebar: bool = True) -> dict[str, Timing]:
    """The fastest of `repeats` builds of each variant (lowest peak memory likewise), taking turns."""
    repo = repo_copy(work, n)
    tree = repo / "tree"
    render = [sys.executable, "-m", "cudagloss", "render", "--out", str(tree)]
    warm_cache = work / "cache-warm"
    run(render, repo, CUDAGLOSS_CACHE_DIR=str(warm_cache))
    plain_cfg = plain_docs(work, repo, sidebar=False)
    sidebar_cfg = plain_docs(work, repo, sidebar=True) if sidebar else plain_cfg
    variants: dict[str, Callable[[int], Timing]] = {
        "ours": lambda k: both(
            run(render, repo, CUDAGLOSS_CACHE_DIR=str(work / f"cache-cold-{k}")),
            run(mkdocs(tree / "mkdocs.yml", work / "site-ours"), tree),
            "ours",
        ),
        "warm": lambda k: both(
            run(render, repo, CUDAGLOSS_CACHE_DIR=str(warm_cache)),
            run(mkdocs(tree / "mkdocs.yml", work / "site-warm"), tree),
            "warm",
        ),
        "plain": lambda k: run(mkdocs(plain_cfg, work / "site-plain"), work),
        "zensical": lambda k: both(
            run(render, repo, CUDAGLOSS_CACHE_DIR=str(warm_cache)),
            run([sys.executable, "-m", "zensical", "build", "--clean"], tree),
            "zensical",
        ),
        "sidebar": lambda k: run(mkdocs(sidebar_cfg, work / "site-sidebar"), work),
    }
    if not sidebar:
        del variants["sidebar"]
    found: dict[str, list[Timing]] = {v: [] for v in variants}
    for k in range(repeats):
        for variant, build in variants.items():
            if variant == "sidebar" and n > sidebar_once and k > 0:
                continue
            found[variant].append(build(k))
            print(f"  {n} terms, {variant}: {found[variant][-1][0]:.1f} s", flush=True)
    return {v: (min(t for t, _ in got), min(m for _, m in got)) for v, got in found.items()}


def main() -> int:
    refuse_committed_links("mkdocs.yml", "docs", "overrides", "templates", str(FIXTURE_MEAS))  # before anything is read
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,5000")
    parser.add_argument("--repeats", type=int, default=3, help="builds of each variant; the fastest counts")
    parser.add_argument("--sidebar-once", type=int, default=1000, help="above this size the sidebar build runs once")
    parser.add_argument(
        "--sidebar-max", type=int, default=1000, help="above this size no sidebar build (it grows quadratically)"
    )
    args = parser.parse_args()
    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory(prefix=f"bench-build-{n}-") as tmp:
            t = measure(n, Path(tmp), args.repeats, args.sidebar_once, sidebar=n <= args.sidebar_max)
        plain_s, plain_kb = t["plain"]
        for variant, label in (("ours", "make build (cold cache)"), ("warm", "make build again (warm check cache)")):
            s, kb = t[variant]
            rows.append(
                row(
                    f"{n} terms: {label} vs plain Material",
                    f"{s:.1f} s vs {plain_s:.1f} s ({s / plain_s:.2f}×)",
                    "≤ 1.10×",
                    s / plain_s <= 1.10,
                )
            )
            rows.append(
                row(
                    f"{n} terms: {label}, peak memory vs plain",
                    f"{kb / 1024:.0f} MB vs {plain_kb / 1024:.0f} MB ({kb / plain_kb:.2f}×)",
                    "≤ 1.2×",
                    kb / plain_kb <= 1.2,
                )
            )
        z = t["zensical"][0]
        rows.append(row(f"{n} terms: render + Zensical vs plain Material", f"{z:.1f} s ({z / plain_s:.2f}×)"))
        if "sidebar" in t:
            side = t["sidebar"][0]
            rows.append(row(f"{n} terms: all-in-sidebar plain ÷ ours", f"{side / t['ours'][0]:.1f}×"))
        print(f"{n} terms: " + ", ".join(f"{v} {s:.1f} s {kb / 1024:.0f} MB" for v, (s, kb) in t.items()))
        print(f"{n} terms, fastest parts: " + ", ".join(f"{k} {min(v):.1f} s" for k, v in PARTS.items()))
        parts = {k: min(v) for k, v in PARTS.items()}
        PARTS.clear()
        rows.append(
            row(
                f"{n} terms: of make build, cudagloss render (cold / warm check cache) and MkDocs building the tree",
                f"{parts['ours render']:.1f} s / {parts['warm render']:.1f} s and {parts['ours builder']:.1f} s "
                f"({parts['ours builder'] / plain_s:.2f}× plain)",
            )
        )
    save(
        "build",
        rows,
        notes=f"Each figure is the fastest of {args.repeats} builds of that variant, the variants taking turns "
        f"(the all-in-sidebar build once above {args.sidebar_once} terms, and not above {args.sidebar_max}: "
        "it grows quadratically); peak memory is the largest resident set of any one process of the build.",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
