"""Work per SM clock per SM, timed by each SM itself: one block on each SM, each block counting the
clock64 cycles of its own timed loop, so neither the host nor a launch's start and drain is in it.

The grid is one block per SM: each block asks for over half of an SM's shared memory (dynamic,
unused), so no SM can hold two, and the grid has as many blocks as the GPU has SMs, so every SM
holds one; each block writes the %smid it ran on, and a gate checks that they are all different.
A block times its loop between two barriers: BLOCK_TIMER_SOURCE's block_start() (a barrier, then
clock64) and block_stop() (a barrier, so the last warp has finished, then clock64). Work per clock
on that SM is the block's work over those cycles: clock64 counts the cycles of the SM it runs on,
so the figure does not depend on the clock frequency, which may move while the kernel runs.

Kernels that use this also carry gpu.PROBE_SOURCE: each launch is queued behind the wait kernel
(gpu.queued) and reads the SM clock it ran at (MHz), which the results report beside the rates.
Used by instruction-latency and special-functions (each names this module in USES). Pure helpers
at the end (no cuda-python, no numpy) turn the raw numbers into rates and gates on the CPU tests.
"""

from __future__ import annotations

import statistics
from typing import Any

VERSION = 1
"""Bump when what this module sends to the GPU, or how it times it, changes (CONTRIBUTING.md)."""

BLOCK_TIMER_SOURCE = r"""
// Included by kernels that time their block in SM cycles. blocks[2 * blockIdx.x]: clock64 cycles
// from the barrier before the timed loop to the barrier after it; blocks[2 * blockIdx.x + 1]: %smid.
__device__ __forceinline__ long long sm_clock() {
    long long t;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t));
    return t;
}
__device__ __forceinline__ long long block_start() {
    __syncthreads();
    long long t = sm_clock();
    __syncthreads();  // no warp starts its work before every warp has read the clock
    return t;
}
__device__ __forceinline__ void block_stop(unsigned long long* blocks, long long start) {
    __syncthreads();
    long long end = sm_clock();
    if (threadIdx.x == 0) {
        unsigned int smid;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
        blocks[2 * blockIdx.x] = (unsigned long long)(end - start);
        blocks[2 * blockIdx.x + 1] = smid;
    }
}
"""

WARMUP, LAUNCHES = 2, 5
"""Launches run first and not kept (code and constants reach the SMs' caches), then launches kept:
each is one sample, the median over its blocks (one per SM)."""
KIB = 1024


def one_block_shared(device: Any) -> int:
    """Dynamic shared memory per block that leaves room for one block per SM and no more."""
    per_sm = device.attribute("CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR")
    opt_in = device.attribute("CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN")
    return int(min(opt_in, per_sm // 2 + KIB))


def allow_shared(gpu: Any, fn: Any, shared: int) -> None:
    """Let fn take `shared` bytes of dynamic shared memory (over 48 KiB needs the opt-in)."""
    from verifier.cuda import check

    attr = gpu.drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    check("cuFuncSetAttribute", gpu.drv.cuFuncSetAttribute(fn, attr, shared))


def measure(
    gpu: Any, fn: Any, grid: int, block: int, args: tuple[Any, ...], shared: int, blocks: int, probe: int
) -> dict[str, Any]:
    """WARMUP launches, then LAUNCHES each queued behind the hold with the probe; per kept launch,
    each block's cycles and the number of distinct SMs the blocks ran on. blocks: the device
    buffer (2 × grid words) the kernel's block_stop() fills; probe: its PROBE_WORDS buffer."""
    import numpy as np

    def work() -> None:
        gpu.launch(fn, grid, block, args, shared)

    for _ in range(WARMUP):
        work()
    gpu.sync()
    out: dict[str, Any] = {"cycles": [], "distinct_sms": [], "clock_mhz": []}
    for _ in range(LAUNCHES):
        found = gpu.queued(work, 1, probe)[2]
        words = gpu.download(np.zeros(2 * grid, dtype=np.uint64), blocks).reshape(grid, 2)
        out["cycles"].append([int(w) for w in words[:, 0]])
        out["distinct_sms"].append(len({int(w) for w in words[:, 1]}))
        if found is not None and found.mhz is not None:
            out["clock_mhz"].append(found.mhz)
    return out


def rates(raw: dict[str, Any], work_per_block: float) -> list[float]:
    """Per kept launch: the median over blocks of work_per_block ÷ the block's cycles (per SM
    clock on that SM); raw is what measure() returned (or a CPU test's fixture of it)."""
    out = []
    for cycles in raw["cycles"]:
        per_block = [work_per_block / c for c in cycles if c > 0]
        out.append(statistics.median(per_block) if per_block else 0.0)
    return out


def one_per_sm(raw: dict[str, Any], sms: int) -> tuple[bool, str]:
    """Whether every kept launch ran one block on each of the sms SMs, with the counts as detail."""
    counts = [int(n) for n in raw["distinct_sms"]]
    ok = bool(counts) and all(n == sms for n in counts) and all(len(c) == sms for c in raw["cycles"])
    return ok, f"distinct %smid per launch: {counts}; {sms} SMs, one block each"
