"""Benchmark: the plain docs tree (`cudagloss render`) built by MkDocs + Material and by Zensical.

For each size it writes the synthetic corpus of bench/build.py, renders the tree once (timed:
our whole stage, load, check, render and write), then builds it with each builder, taking
turns, --repeats times; the fastest build of each counts (the machine is shared).

    python bench/builders.py [--sizes 1000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from build import write_corpus
from common import ROOT, row, save

BUILDERS: dict[str, Callable[[Path, Path], list[str]]] = {
    "mkdocs": lambda tree, site: [
        sys.executable,
        "-m",
        "mkdocs",
        "build",
        "-q",
        "-f",
        str(tree / "mkdocs.yml"),
        "-d",
        str(site),
    ],
    "zensical": lambda tree, site: [sys.executable, "-m", "zensical", "build", "--clean"],
}


def _timed(command: list[str], cwd: Path) -> float:
    t0 = time.perf_counter()
    run = subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, check=False, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    )
    wall = time.perf_counter() - t0
    if run.returncode != 0:
        raise SystemExit(f"failed: {' '.join(command)}\n{(run.stdout + run.stderr)[-2000:]}")
    return wall


def measure(n: int, work: Path, repeats: int) -> dict[str, float]:
    terms = work / "terms"
    write_corpus(terms, n)
    shutil.copy(ROOT / "mkdocs.yml", work / "mkdocs.yml")
    for folder in ("docs", "overrides", "templates"):
        shutil.copytree(ROOT / folder, work / folder)
    shutil.copytree(ROOT / "tests/fixtures/good-measurements", work / "measurements")
    tree = work / "tree"
    render = [sys.executable, "-m", "cudagloss", "render", "--out", str(tree)]
    found = {"render": _timed(render, work)}
    times: dict[str, list[float]] = {name: [] for name in BUILDERS}
    for _ in range(repeats):
        for name, command in BUILDERS.items():
            times[name].append(_timed(command(tree, work / f"site-{name}"), tree))
    return found | {name: min(t) for name, t in times.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000")
    parser.add_argument("--repeats", type=int, default=3, help="builds with each builder; the fastest counts")
    args = parser.parse_args()
    rows = []
    print(f"{'terms':>6} {'render s':>9} {'mkdocs s':>9} {'zensical s':>11} {'zensical÷mkdocs':>16}")
    for n in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory(prefix=f"bench-builders-{n}-") as tmp:
            t = measure(n, Path(tmp), args.repeats)
        ratio = t["zensical"] / t["mkdocs"]
        print(f"{n:>6} {t['render']:>9.2f} {t['mkdocs']:>9.2f} {t['zensical']:>11.2f} {ratio:>16.2f}")
        rows.append(
            row(f"{n} terms: cudagloss render (load, check, render, write the tree)", f"{t['render']:.1f} s", "", None)
        )
        rows.append(row(f"{n} terms: MkDocs + Material builds the tree", f"{t['mkdocs']:.1f} s", "", None))
        rows.append(
            row(f"{n} terms: Zensical builds the tree", f"{t['zensical']:.1f} s ({ratio:.2f}× MkDocs)", "", None)
        )
    save("builders", rows, notes=f"The fastest of {args.repeats} builds with each builder, taking turns; render once.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
