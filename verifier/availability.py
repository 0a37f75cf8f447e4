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
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cudagloss.boundary import guarded
from cudagloss.errors import ExitCode, UsageError
from verifier import computed_file, disassembler
from verifier.cuda import CudaError, compile_source, nvrtc_version
from verifier.kernels.features import FEATURES, HEAD, SASS_SHOWN
from verifier.targets import refusal
from verifier.targets_cli import every_target

PROG = "make generations"
REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "computed" / "instruction-availability.json"
COMPILED = "compiled"
Cell = tuple[str, list[str] | None]
"""A verdict, and the SASS instructions kept (SASS_SHOWN's features where they compiled; else None)."""


def cell(job: tuple[int, str]) -> Cell:
    """One feature on one target: 'compiled' or the refusal, and its SASS where it is shown."""
    feature = FEATURES[job[0]]
    try:
        compiled = compile_source(HEAD + feature.source, f"{feature.id}.cu", job[1])
    except CudaError as exc:
        return refusal(exc), None
    if feature.id not in SASS_SHOWN:
        return COMPILED, None
    tool = disassembler.find()
    if tool is None:
        raise UsageError("no cuobjdump and nvdisasm: `make generations` installs them from requirements.lock")
    return COMPILED, [i for i in tool.instructions(compiled.image) if SASS_SHOWN[feature.id] in i.split(" ")[0]]


def matrix(targets: list[str], jobs: int) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, list[str]]]]:
    """Every feature on every target, compiled in jobs processes; and the SASS shown, by feature."""
    work = [(i, t) for t in targets for i in range(len(FEATURES))]
    if jobs > 1:
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
            found = list(pool.map(cell, work, chunksize=4))
    else:
        found = [cell(w) for w in work]
    values: dict[str, dict[str, str]] = {t: {} for t in targets}
    sass: dict[str, dict[str, list[str]]] = {f: {} for f in SASS_SHOWN}
    for (i, target), (verdict, kept) in zip(work, found, strict=True):
        values[target][FEATURES[i].id] = verdict
        if kept is not None:
            sass[FEATURES[i].id][target] = kept
    return values, sass


def compute(jobs: int) -> dict[str, Any]:
    """The document written: provenance, the features (with their kernels) and the cells."""
    version = nvrtc_version()
    tool = disassembler.find()
    if tool is None:
        raise UsageError("no cuobjdump and nvdisasm: `make generations` installs them from requirements.lock")
    values, sass = matrix(every_target(), jobs)
    return {
        "provenance": {
            "tool": "verifier/availability.py",
            "nvrtc_version": version,
            "compiler": f"NVRTC {version} (nvrtcCompileProgram; for an sm_ target NVRTC runs ptxas itself)",
            "targets": "nvrtcGetSupportedArchs, then each a and f variant NVRTC compiles an empty kernel for",
            "disassembler": f"cuobjdump {tool.version()} --dump-sass",
            "computed_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        },
        "features": [
            {"id": f.id, "ptx": f.ptx, "label": f.label, "term": f.term, "source": HEAD + f.source.lstrip("\n")}
            for f in FEATURES
        ],
        "values": values,
        "sass": sass,
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
    out = computed_file.writable(args.out) if args.write else args.out
    doc = compute(max(1, args.jobs))
    print(
        f"NVRTC {doc['provenance']['nvrtc_version']}: the targets each feature's kernel compiled for",
        *table(doc["values"]),
        sep="\n",
    )
    if args.write:
        computed_file.write(out, doc)
    return ExitCode.OK


def main(argv: list[str] | None = None) -> int:
    """_main inside the error boundary: a usage mistake is one line, exit 2."""
    return guarded(PROG, lambda: _main(argv))


if __name__ == "__main__":
    sys.exit(main())
