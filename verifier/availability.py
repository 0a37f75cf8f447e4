"""`make generations` (its second table): which targets NVRTC compiles each feature's kernel for.

    python3 -m verifier.availability            # print the table: one row per feature
    python3 -m verifier.availability --write    # also write computed/instruction-availability.json

Every feature of verifier/kernels/features.py is compiled by NVRTC for every target `make
kernels` knows (each real architecture NVRTC lists, then the a and f variants it compiles an
empty kernel for: verifier/targets_cli.every_target). A cell is "compiled", or the refusal in the
compiler's own words: the first error line of the log, its PTX line number dropped, prefixed by
who refused (ptxas, which NVRTC runs for an sm_ target, or NVRTC's front end). Nothing runs on a
GPU: this says what the compiler accepts for a target, not how fast a GPU of it runs the code.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import sys
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cudagloss.boundary import guarded
from cudagloss.errors import ExitCode, UsageError
from cudagloss.files.atomic import write_text_atomic
from cudagloss.files.inside import refuse_links
from verifier.cuda import CudaError, compile_source, nvrtc_version
from verifier.kernels.features import FEATURES, HEAD
from verifier.targets_cli import every_target

PROG = "make generations"
REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "computed" / "instruction-availability.json"
COMPILED = "compiled"
PTXAS_LINE = re.compile(r"^ptxas[^;]*; error\s*:\s*(.+)$")
"""ptxas's error line: 'ptxas application ptx input, line 42; error   : Instruction ... '."""
FRONT_LINE = re.compile(r"^\S+\.cu\(\d+\): error:\s*(.+)$")
"""NVRTC's front end: 'cluster-dsmem.cu(4): error: __cluster_dims__ is not supported ...'."""
MAX_REASON = 300


def reason(exc: CudaError) -> str:
    """Who refused and why, in the compiler's words, without the line number of the PTX it wrote."""
    for line in (exc.log or "").splitlines():
        line = " ".join(line.split())
        if found := PTXAS_LINE.match(line):
            return f"ptxas: {found[1]}"[:MAX_REASON]
        if found := FRONT_LINE.match(line):
            return f"nvrtc: {found[1]}"[:MAX_REASON]
    return f"nvrtc: {exc.name}: {' '.join((exc.log or exc.message).split())}"[:MAX_REASON]


def cell(job: tuple[int, str]) -> str:
    """One feature on one target: 'compiled' or the refusal."""
    feature = FEATURES[job[0]]
    try:
        compile_source(HEAD + feature.source, f"{feature.id}.cu", job[1])
    except CudaError as exc:
        return reason(exc)
    return COMPILED


def matrix(targets: list[str], jobs: int) -> dict[str, dict[str, str]]:
    """Every feature on every target, compiled in jobs processes."""
    work = [(i, t) for t in targets for i in range(len(FEATURES))]
    if jobs > 1:
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
            found = list(pool.map(cell, work, chunksize=4))
    else:
        found = [cell(w) for w in work]
    values: dict[str, dict[str, str]] = {t: {} for t in targets}
    for (i, target), verdict in zip(work, found, strict=True):
        values[target][FEATURES[i].id] = verdict
    return values


def compute(jobs: int) -> dict[str, Any]:
    """The document written: provenance, the features (with their kernels) and the cells."""
    version = nvrtc_version()
    return {
        "provenance": {
            "tool": "verifier/availability.py",
            "nvrtc_version": version,
            "compiler": f"NVRTC {version} (nvrtcCompileProgram; for an sm_ target NVRTC runs ptxas itself)",
            "targets": "nvrtcGetSupportedArchs, then each a and f variant NVRTC compiles an empty kernel for",
            "computed_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        },
        "features": [
            {"id": f.id, "ptx": f.ptx, "label": f.label, "term": f.term, "source": f.source} for f in FEATURES
        ],
        "values": matrix(every_target(), jobs),
    }


def table(values: dict[str, dict[str, str]]) -> list[str]:
    """One row per feature: the targets it compiled for."""
    width = max(len(f.id) for f in FEATURES)
    return [f"{f.id:<{width}}  " + " ".join(t for t, row in values.items() if row[f.id] == COMPILED) for f in FEATURES]


def _main(argv: list[str] | None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help=f"write {OUT.relative_to(REPO)}")
    parser.add_argument("--out", type=Path, default=OUT, help="where --write writes (inside the repository)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes compiling at once")
    args = parser.parse_args(argv)
    out = Path(os.path.abspath(args.out))
    if args.write:
        if not out.is_relative_to(REPO):
            raise UsageError(f"{args.out} is outside the repository {REPO}: not written")
        refuse_links(out, REPO)
    doc = compute(max(1, args.jobs))
    print(
        f"NVRTC {doc['provenance']['nvrtc_version']}: the targets each feature's kernel compiled for",
        *table(doc["values"]),
        sep="\n",
    )
    if args.write:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(out, json.dumps(doc, indent=2, sort_keys=True) + "\n")
        print(f"wrote {out.relative_to(REPO)}")
    return ExitCode.OK


def main(argv: list[str] | None = None) -> int:
    """_main inside the error boundary: a usage mistake is one line, exit 2."""
    return guarded(PROG, lambda: _main(argv))


if __name__ == "__main__":
    sys.exit(main())
