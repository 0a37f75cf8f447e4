"""Benchmark: this tree's site build against another commit's, in the same run.

A refactor must not make the build slower; comparing with a figure from another day on a
shared machine says little. This checks REV out into a temporary worktree, writes one
synthetic corpus (bench/build.py's), and builds it with each tree's hooks, package and
templates in turn (the order alternates every round); the fastest build of each counts.

    python bench/build_ab.py --base 1a78d83 [--terms 1000] [--repeats 6]

It prints both trees' builds (wall-clock and CPU time: on a shared machine the CPU time
is the steadier figure) and the ratios this tree ÷ base; it writes no results file
(the figure belongs in the change's notes, beside the commit it compares with).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from build import FIXTURE_MEAS, config, timed_build, write_corpus
from common import ROOT, refuse_committed_links


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def timed_build_cpu(tree: Path, cfg: Path, site: Path) -> tuple[float, float]:
    """Wall-clock and CPU seconds of one build with tree's package (CPU time suffers less
    from a shared machine)."""
    cpu = _cpu()
    wall = timed_build(cfg, site, PYTHONPATH=str(tree / "src"))
    return wall, _cpu() - cpu


def main() -> int:
    refuse_committed_links("mkdocs.yml", "docs", "overrides", "templates", str(FIXTURE_MEAS))  # before anything is read
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="the commit to compare with")
    parser.add_argument("--terms", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=6, help="builds of each tree; the fastest counts")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="build-ab-") as tmp:
        work = Path(tmp)
        base = work / "base"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(base), args.base], check=True)
        try:
            terms = work / "terms"
            write_corpus(terms, args.terms)
            trees = {f"base {args.base}": base, "this tree": ROOT}
            configs = {}
            for i, (name, tree) in enumerate(trees.items()):
                (work / f"config-{i}").mkdir()
                configs[name] = config(work / f"config-{i}", hooks=True, nav=None, terms=terms, tree=tree)
            times: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
            for round_ in range(args.repeats):
                order = list(trees) if round_ % 2 == 0 else list(reversed(trees))
                for name in order:
                    times[name].append(timed_build_cpu(trees[name], configs[name], work / "site"))
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=False)
    for name, samples in times.items():
        shown = ", ".join(f"{wall:.2f}" for wall, _ in samples)
        print(f"{name}: fastest {min(w for w, _ in samples):.2f} s wall, {min(c for _, c in samples):.2f} s CPU")
        print(f"  wall of each build: {shown}")
    (base_wall, base_cpu), (ours_wall, ours_cpu) = (
        (min(w for w, _ in s), min(c for _, c in s)) for s in times.values()
    )
    print(
        f"{args.terms} terms: this tree ÷ base = {ours_wall / base_wall:.3f} wall, "
        f"{ours_cpu / base_cpu:.3f} CPU (fastest builds)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
