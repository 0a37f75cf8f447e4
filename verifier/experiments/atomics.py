"""Atomics under contention: atomicAdd on 1 counter, 32, one per warp, and one per thread.

Every thread adds 1 to its counter ADDS[space] times, in global memory and in shared memory. The
counter a thread uses is chosen by mode: 'one' (every thread of the grid, or of the block, on one
address), 'per_lane' (32 counters, one per lane id), 'per_warp' and 'distinct' (one per thread).
A correctness run from zeroed counters must leave each counter at exactly its number of adds;
then the kernel is timed and the GPU time divided by the number of adds (an amortised cost per
atomic: inverse throughput, not latency). The result is unused, so the compiler may emit RED
(reduction without return) rather than ATOM: that is what atomicAdd costs when used so. The
value added is a kernel argument (1 at run time): for a literal 1 in shared memory the compiler
emits ATOMS.POPC.INC, which folds a warp's equal addresses into one update and so hides the
contention this experiment is there to show (seen on sm_90 SASS, 2026-12-03).
"""

from __future__ import annotations

import statistics
from functools import partial
from pathlib import Path
from typing import Any

from cudagloss.model.measurement import Result
from verifier.cuda import Device
from verifier.experiment import Outcome

ID = "atomics"
PURPOSE = "atomicAdd throughput on 1, 32, per-warp and per-thread counters, in global and shared memory"
USES = ("gpu.py",)

MODES = ("one", "per_lane", "per_warp", "distinct")
BLOCK, BLOCKS_PER_SM = 256, 8
ADDS = {"global": 64, "shared": 1024}
"""Adds per thread: shared atomics are cheap enough to need more to time."""

SOURCE = r"""
__device__ unsigned slot(int mode, unsigned thread, unsigned lane, unsigned warp) {
    return mode == 0 ? 0u : mode == 1 ? lane : mode == 2 ? warp : thread;
}

extern "C" __global__ void global_adds(unsigned* counters, int mode, int adds, unsigned value) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned* c = counters + slot(mode, t, threadIdx.x & 31, t >> 5);
    for (int i = 0; i < adds; ++i) atomicAdd(c, value);
}

// Shared counters per block (indexed as in global_adds, within the block), added into the
// global counters of the same index once the block is done.
extern "C" __global__ void shared_adds(unsigned* counters, int mode, int adds, unsigned value) {
    __shared__ unsigned s[1024];
    for (unsigned i = threadIdx.x; i < 1024; i += blockDim.x) s[i] = 0;
    __syncthreads();
    unsigned* c = s + slot(mode, threadIdx.x, threadIdx.x & 31, threadIdx.x >> 5);
    for (int i = 0; i < adds; ++i) atomicAdd(c, value);
    __syncthreads();
    if (s[threadIdx.x]) atomicAdd(counters + threadIdx.x, s[threadIdx.x]);
}
"""


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
    raw: dict[str, Any] = {"threads": threads, "ms": {}, "stopped": {}, "wrong": {}}
    with opened(device) as gpu, gpu.buffer(threads * 4) as counters:
        zeros = np.zeros(threads, dtype=np.uint32)
        for space in ADDS:
            fn = gpu.kernel(SOURCE, f"{space}_adds")
            for number, mode in enumerate(MODES):
                args = (np.uint64(counters), np.int32(number), np.int32(ADDS[space]), np.uint32(1))
                gpu.upload(counters, zeros)
                gpu.launch(fn, grid, BLOCK, args)
                gpu.sync()
                got = gpu.download(np.zeros(threads, dtype=np.uint32), counters)
                want = np.zeros(threads, dtype=np.int64)
                for index, value in counts(space, mode, threads).items():
                    want[index] = value
                raw["wrong"][f"{space}_{mode}"] = int(np.count_nonzero(got.astype(np.int64) != want))
                timed = gpu.time(partial(gpu.launch, fn, grid, BLOCK, args))
                raw["ms"][f"{space}_{mode}"], raw["stopped"][f"{space}_{mode}"] = timed.samples, timed.stopped
    return summarise(raw)


def summarise(raw: dict[str, Any]) -> Outcome:
    """Gates and results from the raw numbers (pure: the CPU test feeds it fixture data)."""
    outcome = Outcome(repeats=min(len(s) for s in raw["ms"].values()))
    wrong = {case: n for case, n in raw["wrong"].items() if n}
    if not outcome.gate(
        "after one launch from zero every counter equals its number of adds",
        not wrong,
        ", ".join(f"{case}: {n} counters wrong" for case, n in wrong.items()) or f"{len(raw['wrong'])} cases exact",
    ):
        return outcome
    labels = {
        "one": "every thread {} on one counter",
        "per_lane": "32 counters, one per lane id ({})",
        "per_warp": "one counter per warp ({})",
        "distinct": "one counter per thread ({})",
    }
    where = {"global": "of the grid, global memory", "shared": "of each block, shared memory"}
    median: dict[str, float] = {}
    for space, adds in ADDS.items():
        total = raw["threads"] * adds
        for mode in MODES:
            case = f"{space}_{mode}"
            ns = [ms * 1e6 / total for ms in raw["ms"][case]]
            median[case] = statistics.median(ns)
            outcome.add(
                Result(
                    f"{case}_ns_per_atomic",
                    round(median[case], 5),
                    "ns",
                    f"kernel time ÷ {total} atomicAdds, {labels[mode].format(where[space])} "
                    f"(median; stopped on {raw['stopped'][case]})",
                    [round(v, 6) for v in ns],
                )
            )
        for mode in MODES[:-1]:
            outcome.add(
                Result(
                    f"{space}_{mode}_slowdown",
                    round(median[f"{space}_{mode}"] / median[f"{space}_distinct"], 2),
                    "×",
                    f"{space} '{mode}' vs one counter per thread (medians)",
                )
            )
    outcome.gate(
        "full contention on one global counter is no faster than distinct addresses (within 5%)",
        median["global_one"] >= median["global_distinct"] * 0.95,
        f"one {median['global_one']:.4f} ns, distinct {median['global_distinct']:.4f} ns per atomic",
    )
    return outcome
