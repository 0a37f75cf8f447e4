"""Atomics under contention: atomicAdd on 1 counter, 32, one per warp, and one per thread.

Every thread adds 1 to its counter ADDS[space] times, in global memory and in shared memory. The
counter a thread uses is chosen by mode: 'one' (every thread of the grid, or of the block, on one
address), 'per_lane' (32 counters, one per lane id), 'per_warp' and 'distinct' (one per thread).
A correctness run from zeroed counters must leave each counter at exactly its number of adds;
then the kernel is timed queued behind the wait kernel (gpu.py: no host time in a sample; the
first glossary's event pair around a Python launch put host time into the short 'distinct'
kernels, and so into every slowdown) and its GPU time divided by the number of adds (an
amortised cost per atomic: inverse throughput, not latency). The kernels carry the probe, so
each sample is checked against the kernel's own span and says the SM clock it ran at. The
result is unused, so the compiler may emit RED (reduction without return) rather than ATOM:
that is what atomicAdd costs when used so. The value added is a kernel argument (1 at run time):
for a literal 1 in shared memory the compiler emits ATOMS.POPC.INC, which folds a warp's equal
addresses into one update and so hides the contention this experiment is there to show (seen on
sm_90 SASS, 2026-12-03).

Predicted on an H200 SXM (132 SMs, SM clock up to 1980 MHz): one global counter ≈ 0.6-0.75 ns
per atomic (one L2 atomic unit serialising about one update per L2 clock; its 50 ms kernel held
little host time before); distinct global counters ≈ 0.0015-0.002 ns (the first glossary's
0.0026 ns held host time); distinct shared counters ≈ 0.00012 ns (one warp-wide shared atomic per
SM clock per SM: 1 / (32 × 132 × 1.98 GHz)); one shared counter per block ≈ 0.004 ns. So the
global 'one' slowdown rises from 285× to about 350-500×, and shared 'one' to about 30×.
"""

from __future__ import annotations

import statistics
from functools import partial
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier.cuda import Device
from verifier.experiment import Outcome, clock_note, clock_result, timed_result
from verifier.gpu import PROBE_SOURCE

ID = "atomics"
PURPOSE = "atomicAdd throughput on 1, 32, per-warp and per-thread counters, in global and shared memory"
USES = ("gpu.py", "timing.py")

MODES = ("one", "per_lane", "per_warp", "distinct")
BLOCK, BLOCKS_PER_SM = 256, 8
ADDS = {"global": 256, "shared": 4096}
"""Adds per thread: enough that the fastest kernel ('distinct') runs ≥ 100 µs, so the probe's few
atomics per block and a launch's ramp are ~1% of it; shared atomics are cheap enough to need more."""

SOURCE = (
    PROBE_SOURCE
    + r"""
__device__ unsigned slot(int mode, unsigned thread, unsigned lane, unsigned warp) {
    return mode == 0 ? 0u : mode == 1 ? lane : mode == 2 ? warp : thread;
}

extern "C" __global__ void global_adds(unsigned* counters, int mode, int adds, unsigned value,
                                       unsigned long long* probe) {
    ProbeMark mark = probe_begin(probe);
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned* c = counters + slot(mode, t, threadIdx.x & 31, t >> 5);
    for (int i = 0; i < adds; ++i) atomicAdd(c, value);
    probe_end(probe, mark);
}

// Shared counters per block (indexed as in global_adds, within the block), added into the
// global counters of the same index once the block is done.
extern "C" __global__ void shared_adds(unsigned* counters, int mode, int adds, unsigned value,
                                       unsigned long long* probe) {
    ProbeMark mark = probe_begin(probe);
    __shared__ unsigned s[1024];
    for (unsigned i = threadIdx.x; i < 1024; i += blockDim.x) s[i] = 0;
    __syncthreads();
    unsigned* c = s + slot(mode, threadIdx.x, threadIdx.x & 31, threadIdx.x >> 5);
    for (int i = 0; i < adds; ++i) atomicAdd(c, value);
    __syncthreads();
    if (s[threadIdx.x]) atomicAdd(counters + threadIdx.x, s[threadIdx.x]);
    probe_end(probe, mark);
}
"""
)


def counts(space: str, mode: str, threads: int) -> dict[int, int]:
    """The value each touched counter must hold after one launch (index -> adds); others stay 0."""
    adds = ADDS[space]
    blocks = threads // BLOCK
    if mode == "one":
        return {0: threads * adds}
    if mode == "per_lane":
        return dict.fromkeys(range(32), threads // 32 * adds)
    if space == "shared":
        per = 32 if mode == "per_warp" else 1
        return dict.fromkeys(range(BLOCK // per), per * blocks * adds)
    if mode == "per_warp":
        return dict.fromkeys(range(threads // 32), 32 * adds)
    return dict.fromkeys(range(threads), adds)


def run(device: Device, repeats: int, workdir: Path) -> Outcome:
    import numpy as np

    from verifier.gpu import opened

    grid = device.attribute("CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT") * BLOCKS_PER_SM
    threads = grid * BLOCK
    raw: dict[str, Any] = {"threads": threads, "cases": {}, "wrong": {}}
    with opened(device) as gpu, gpu.buffer(threads * 4) as counters, gpu.probe() as probe:
        zeros = np.zeros(threads, dtype=np.uint32)
        for space in ADDS:
            fn = gpu.kernel(SOURCE, f"{space}_adds")
            for number, mode in enumerate(MODES):
                args = (np.uint64(counters), np.int32(number), np.int32(ADDS[space]), np.uint32(1), np.uint64(probe))
                gpu.upload(counters, zeros)
                gpu.launch(fn, grid, BLOCK, args)
                gpu.sync()
                got = gpu.download(np.zeros(threads, dtype=np.uint32), counters)
                want = np.zeros(threads, dtype=np.int64)
                for index, value in counts(space, mode, threads).items():
                    want[index] = value
                raw["wrong"][f"{space}_{mode}"] = int(np.count_nonzero(got.astype(np.int64) != want))
                timed = gpu.time(partial(gpu.launch, fn, grid, BLOCK, args), calls=1, probe=probe)
                raw["cases"][f"{space}_{mode}"] = timed.raw()
    return summarise(raw)


LABELS = {
    "one": "every thread {} on one counter",
    "per_lane": "32 counters, one per lane id ({})",
    "per_warp": "one counter per warp ({})",
    "distinct": "one counter per thread ({})",
}
WHERE = {"global": "of the grid, global memory", "shared": "of each block, shared memory"}


def summarise(raw: dict[str, Any]) -> Outcome:
    """Gates and results from the raw numbers (pure: the CPU test feeds it fixture data):
    raw['cases'] holds each case's Timed.raw()."""
    cases: dict[str, dict[str, Any]] = raw["cases"]
    outcome = Outcome(repeats=min(len(c["ms"]) for c in cases.values()))
    wrong = {case: n for case, n in raw["wrong"].items() if n}
    if not outcome.gate(
        "after one launch from zero every counter equals its number of adds",
        not wrong,
        ", ".join(f"{case}: {n} counters wrong" for case, n in wrong.items()) or f"{len(raw['wrong'])} cases exact",
    ):
        return outcome
    median: dict[str, float] = {}
    for space, adds in ADDS.items():
        total = raw["threads"] * adds
        for mode in MODES:
            case = f"{space}_{mode}"
            c = cases[case]
            outcome.no_host_time(f"{space} atomics, {mode.replace('_', ' ')}", c)
            ns = [ms * 1e6 / total for ms in c["ms"]]
            median[case] = statistics.median(ns)
            description = (
                f"GPU time queued behind a wait kernel ÷ {total} atomicAdds, {LABELS[mode].format(WHERE[space])} "
                f"(median; stopped on {c['stopped']}{clock_note(c)})"
            )
            outcome.add(timed_result(f"{case}_ns_per_atomic", ns, "ns", description, c, 6, 7))
        for mode in MODES[:-1]:
            outcome.add(
                Result(
                    f"{space}_{mode}_slowdown",
                    round(median[f"{space}_{mode}"] / median[f"{space}_distinct"], 2),
                    "×",
                    f"{space} '{mode}' vs one counter per thread (medians, both timed queued)",
                )
            )
        clocks = [mhz for mode in MODES for mhz in cases[f"{space}_{mode}"].get("clock_mhz") or []]
        outcome.add(
            *clock_result(f"{space}_atomics", {"clock_mhz": clocks}, f"the {space}-memory atomics (every mode)")
        )
    outcome.gate(
        "full contention on one global counter is no faster than distinct addresses (within 5%)",
        median["global_one"] >= median["global_distinct"] * 0.95,
        f"one {median['global_one']:.4f} ns, distinct {median['global_distinct']:.5f} ns per atomic",
    )
    return outcome
