"""Benchmark: `cudagloss check` (what `make check` and the pre-commit hook run) at 1,000 and
5,000 terms.

On bench/build.py's synthetic corpus, in one run, taking turns --repeats times:
- cold: an empty check cache (a clean clone, CI);
- warm: nothing changed since the last check (the cache holds every file);
- one edit: one term file changed since the last check (an author's loop).
The fastest of the repeats counts. The wall time is the whole command, Python's start included.

    python bench/check.py [--sizes 1000,5000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from build import FIXTURE_MEAS, MEASUREMENTS, run, write_corpus
from common import refuse_committed_links, row, save

TARGET_S = 1.0


def measure(n: int, work: Path, repeats: int) -> dict[str, float]:
    repo = work / "repo"
    write_corpus(repo / "terms", n)
    shutil.copytree(MEASUREMENTS, repo / "measurements")
    check = [sys.executable, "-m", "cudagloss", "check", "terms", "-q"]
    warm = str(work / "cache-warm")
    run(check, repo, CUDAGLOSS_CACHE_DIR=warm)
    edited = repo / "terms" / "t00001.yaml"
    original = edited.read_text(encoding="utf-8")
    found: dict[str, list[float]] = {"cold": [], "warm": [], "edit": []}
    for k in range(repeats):
        found["cold"].append(run(check, repo, CUDAGLOSS_CACHE_DIR=str(work / f"cache-cold-{k}"))[0])
        found["warm"].append(run(check, repo, CUDAGLOSS_CACHE_DIR=warm)[0])
        edited.write_text(original.replace("Paragraph 0", f"Paragraph zero ({k})", 1), encoding="utf-8")
        found["edit"].append(run(check, repo, CUDAGLOSS_CACHE_DIR=warm)[0])
    return {kind: min(times) for kind, times in found.items()}


def main() -> int:
    refuse_committed_links(str(FIXTURE_MEAS))  # before anything is read
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,5000")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory(prefix=f"bench-check-{n}-") as tmp:
            t = measure(n, Path(tmp), args.repeats)
        print(f"{n} terms: cold {t['cold']:.2f} s, warm {t['warm']:.2f} s, one edit {t['edit']:.2f} s")
        at_target = n >= 5000
        rows += [
            row(
                f"{n} terms: make check, nothing changed (check cache warm)",
                f"{t['warm']:.2f} s",
                "≤ 1 s at 5,000" if at_target else "",
                t["warm"] <= TARGET_S if at_target else None,
            ),
            row(
                f"{n} terms: make check after one term file changed",
                f"{t['edit']:.2f} s",
                "≤ 1 s at 5,000" if at_target else "",
                t["edit"] <= TARGET_S if at_target else None,
            ),
            row(f"{n} terms: make check, empty cache (clean clone, CI)", f"{t['cold']:.2f} s"),
        ]
    save("check", rows, notes=f"Each figure is the fastest of {args.repeats} runs of the whole command, taking turns.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
