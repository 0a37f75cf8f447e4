"""`make kernels TARGET=sm_XX`: every experiment's kernels compiled for a target on the CPU.

    python3 -m verifier.targets_cli --target sm_90     # one target
    python3 -m verifier.targets_cli --target all       # every target this NVRTC takes

For each experiment, each kernel source it declares (verifier/anatomy.py) is compiled by NVRTC
for the target with ptxas's verbose log, and printed with each kernel's registers, spills and
shared memory; a source the experiment declares not for the target (verifier/targets.py, NEEDS)
is printed with NVRTC's refusal. `all` is every real architecture NVRTC lists, then each arch-
and family-specific variant of one (sm_90a, sm_100f) that NVRTC compiles an empty kernel for.
A declaration the compiler contradicts is an error: exit 1. Apart from targets.py so that the
registry, which imports the experiments, is imported by no experiment (no import cycle).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor

from cudagloss.boundary import guarded
from cudagloss.errors import ExitCode, UsageError, complain
from verifier.cuda import CudaError, compile_source, nvrtc_version, supported_archs
from verifier.registry import CONTRACTS
from verifier.targets import TARGET, Cell, Needs, cell, needs_of

PROG = "make kernels"
EMPTY = 'extern "C" __global__ void k() {}'


def every_target() -> list[str]:
    """Each real architecture NVRTC lists, then the a and f variants it compiles an empty kernel for."""
    plain = [f"sm_{cc}" for cc in supported_archs()]
    variants = []
    for target in plain:
        for suffix in ("a", "f"):
            try:
                compile_source(EMPTY, "probe.cu", target + suffix)
            except CudaError:
                continue
            variants.append(target + suffix)
    return plain + variants


def _job(args: tuple[int, int, str]) -> Cell:
    experiment, kernel, target = args
    contract = CONTRACTS[experiment]
    return cell(contract.kernels()[kernel], target, contract.module)


Keep = Callable[[Needs, str], bool]


def cells(targets: Iterable[str], jobs: int, keep: Keep | None = None) -> list[tuple[str, Cell]]:
    """(experiment id, cell) for every declared kernel source on every target (that keep, given
    the source's declaration and the target, keeps), in order; a source several experiments share,
    under one declaration, is compiled once per target."""
    work = [
        (i, k, target)
        for target in targets
        for i, contract in enumerate(CONTRACTS)
        for k, kernel in enumerate(contract.kernels())
        if keep is None or keep(needs_of(kernel, contract.module), target)
    ]

    def key(w: tuple[int, int, str]) -> tuple[str, str, str, Needs]:
        kernel = CONTRACTS[w[0]].kernels()[w[1]]
        return kernel.where, kernel.source, w[2], needs_of(kernel, CONTRACTS[w[0]].module)

    first = {key(w): w for w in reversed(work)}  # each distinct job, by its first place
    unique = list(first.values())
    if jobs > 1 and len(unique) > 1:
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
            done = dict(zip(unique, pool.map(_job, unique, chunksize=2), strict=True))
    else:
        done = {w: _job(w) for w in unique}
    return [(CONTRACTS[w[0]].id, done[first[key(w)]]) for w in work]


def lines(found: list[tuple[str, Cell]], target: str) -> Iterable[str]:
    """The report of one target: a count line, then each experiment's sources and kernels."""
    mine = [(e, c) for e, c in found if c.target == target]
    counts = {v: sum(c.verdict == v for _, c in mine) for v in ("compiled", "refused", "skipped", "error")}
    yield f"{target} (NVRTC {nvrtc_version()}): " + ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    shown = ""
    for experiment, c in mine:
        if experiment != shown:
            yield f"  {experiment}"
            shown = experiment
        if c.verdict == "compiled":
            yield f"    {c.where}"
            for e in c.entries:
                spills = f"{e.spill_bytes} B spilled" if e.spill_bytes else "no spills"
                yield f"      {e.name[:60]:<40} {e.registers:>3} registers, {spills}, {e.shared_bytes} B static shared"
        else:
            word = {"refused": "not for this target", "skipped": "not compiled by NVRTC", "error": "ERROR"}[c.verdict]
            yield f"    {c.where}: {word}: {c.detail}"


def _main(argv: list[str] | None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    parser.add_argument("--target", default="all", help="sm_XX, sm_XXa, sm_XXf, or all (the default)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes compiling at once")
    args = parser.parse_args(argv)
    if args.target == "all":
        targets = every_target()
    elif TARGET.fullmatch(args.target):
        targets = [args.target]
    else:
        raise UsageError(f"'{args.target}' is not a target: sm_ and a compute capability (sm_90, sm_90a), or all")
    found = cells(targets, max(1, args.jobs))
    for target in targets:
        print(*lines(found, target), sep="\n")
    wrong = [c for _, c in found if c.verdict == "error"]
    for c in wrong:
        complain(PROG, f"{c.where} on {c.target}: {c.detail}")
    return ExitCode.FAILED if wrong else ExitCode.OK


def main(argv: list[str] | None = None) -> int:
    """_main inside the error boundary: a usage mistake is one line, exit 2."""
    return guarded(PROG, lambda: _main(argv))


if __name__ == "__main__":
    sys.exit(main())
